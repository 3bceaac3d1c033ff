"""recall(scope, query, k, token_budget, filters): hybrid retrieval, fusion, packing, citations.

Scope and lifecycle predicates are applied inside every search (LanceDB prefilters,
DuckDB WHERE clauses), and again by DuckDB, the system of record, before anything is
returned, so an index that lags behind can lose a hit but never return one it should not.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import cache
from typing import Literal

from pydantic import BaseModel

from mnemoflow.chunking import day_label
from mnemoflow.embedding.base import Embedder
from mnemoflow.errors import EmbeddingUnavailableError
from mnemoflow.models import Citation, MemoryItem, RecallItem, RecallResult
from mnemoflow.recall.config import RecallConfig
from mnemoflow.recall.fusion import Fused, rrf
from mnemoflow.recall.packing import Candidate, pack, tokens_of
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.store import ChunkHit, SearchHit


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="mnemoflow-recall")


class RecallFilters(BaseModel):
    """Narrow what recall may return."""

    kinds: list[Literal["memory", "chunk"]] | None = None


def session_time(ts: datetime) -> str:
    """`1:56 pm on 8 May, 2023`: the conversation-time format people (and LoCoMo) write."""
    hour = ts.hour % 12 or 12
    return f"{hour}:{ts.minute:02d} {'am' if ts.hour < 12 else 'pm'} on {ts.day} {ts:%B}, {ts.year}"


def _why(fused: Fused) -> str:
    parts = [f"{signal} #{rank}" for signal, rank in sorted(fused.ranks.items(), key=lambda x: x[1])]
    return "matched by " + ", ".join(parts)


def _signal_scores(fused: Fused) -> dict[str, float]:
    """The fused score and each signal's own: cosine similarity for vector, BM25 for bm25."""
    return {"fused": round(fused.score, 6), **{s: round(raw, 6) for s, raw in fused.raw.items()}}


def speakers_named(query: str, speakers: set[str]) -> set[str]:
    """Participants the query names (whole word, any case: "Caroline's" names Caroline)."""
    return {s for s in speakers if re.search(rf"\b{re.escape(s)}\b", query, re.IGNORECASE)}


def _turn_speakers(hit: ChunkHit) -> set[str]:
    return {t["speaker"] for t in hit.locator.get("turns", []) if t.get("speaker")}


def citations_of(source: ChunkHit | MemoryItem) -> list[Citation]:
    """Built only for the items that make it into the context."""
    if isinstance(source, MemoryItem):
        return [Citation(memory_id=source.id, ts=source.observed_at, locator=source.metadata.get("source", {}))]
    turns = source.locator.get("turns")
    if not turns:
        return [Citation(document_id=source.document_id, uri=source.uri, title=source.title, locator=source.locator)]
    return [
        Citation(document_id=source.document_id, uri=source.uri, title=source.title,
                 locator={"session_id": source.locator.get("session_id"), "turn_id": t["turn_id"]},
                 session_id=source.locator.get("session_id"), turn_id=t["turn_id"],
                 ts=datetime.fromisoformat(t["ts"]) if t.get("ts") else None, speaker=t.get("speaker"))
        for t in turns
    ]


def _chunk_candidate(hit: ChunkHit, fused: Fused, score: float, config: RecallConfig, named: set[str]) -> Candidate:
    scores = _signal_scores(fused)
    why = _why(fused)
    turns = hit.locator.get("turns")
    if turns:
        first_ts = datetime.fromisoformat(turns[0]["ts"]) if turns[0].get("ts") else None
        if score < fused.score:
            scores["speaker_factor"] = config.speaker_factor
            why += f"; spoken by someone the query does not name ({', '.join(sorted(named))} named)"
        if config.group_sessions:
            header = f"[{day_label(first_ts)}]" if first_ts else f"[{hit.title}]"
            return Candidate("chunk", hit.chunk_id, hit.text, score, scores, why, hit, group=hit.document_id,
                             header=header, order=(first_ts or datetime.min, hit.chunk_id))
        when = session_time(first_ts) if first_ts else hit.title
        return Candidate("chunk", hit.chunk_id, f"[{when}] {hit.text}", score, scores, why, hit)
    path = hit.locator.get("heading_path") or []
    where = " > ".join([hit.title, *[p for p in path if p != hit.title]])
    return Candidate("chunk", hit.chunk_id, hit.text, score, scores, why, hit, group=f"{hit.document_id}\x1f{where}",
                     header=f"[{where}]", order=(hit.locator.get("part", 0), hit.chunk_id))


def _memory_candidate(memory: MemoryItem, fused: Fused) -> Candidate:
    when = (memory.event_start_at or memory.observed_at or memory.created_at).date().isoformat()
    return Candidate("memory", memory.id, f"- {memory.content} ({when})", fused.score, _signal_scores(fused),
                     _why(fused), memory, group="memories", header="[memories]", order=(when, memory.id))


def _search(
    store: Store, embedder: Embedder | None, scope: Scope, query: str, config: RecallConfig, targets: list[str],
) -> tuple[dict[str, list[SearchHit]], list[str]]:
    """Each signal's hits over all targets as one list, best first (cosine similarities from one
    model compare across targets, and so do BM25 scores); plus warnings for signals skipped."""
    warnings: list[str] = []
    found: dict[str, list[SearchHit]] = {}
    # BM25 runs beside the query embedding and the vector search: both wait in native code
    # (LanceDB, torch) with the GIL released, so on two cores this hides most of the BM25 time.
    bm25 = [_pool().submit(store.bm25_search, scope, t, query, config.depth) for t in targets] \
        if "bm25" in config.signals else []
    if embedder is not None and "vector" in config.signals:
        try:
            vector = embedder.embed_query(query)
            found["vector"] = [h for t in targets for h in store.vector_search(scope, t, vector, config.depth)]
        except EmbeddingUnavailableError as exc:
            warnings.append(f"vector search skipped: {exc}")
    if bm25:
        found["bm25"] = [h for future in bm25 for h in future.result()]
    for hits in found.values():
        hits.sort(key=lambda h: (-h.score, h.target, h.id))
    return found, warnings


def _hydrate(
    store: Store, scope: Scope, fused: list[Fused], shown: dict[str, ChunkHit],
) -> tuple[dict[str, ChunkHit], dict[str, MemoryItem]]:
    """Read fused candidates back through DuckDB's scope and lifecycle gate."""
    chunk_ids = [f.key[1] for f in fused if f.key[0] == "chunks"]
    chunks = {i: shown[i] for i in store.live_chunk_ids(scope, [i for i in chunk_ids if i in shown])}
    chunks.update(store.fetch_chunks(scope, [i for i in chunk_ids if i not in shown]))
    memories = store.fetch_memories(scope, [f.key[1] for f in fused if f.key[0] == "memories"])
    return chunks, memories


def _rerank(
    query: str, fused: list[Fused], chunks: dict[str, ChunkHit], memories: dict[str, MemoryItem],
    config: RecallConfig,
) -> tuple[list[tuple[float, str, Fused]], set[str]]:
    """Final order: the fused score, lowered for turns by people other than those the query names."""
    named: set[str] = set()
    if config.speaker_factor < 1:
        named = speakers_named(query, set().union(*(_turn_speakers(h) for h in chunks.values())))
    ranked: list[tuple[float, str, Fused]] = []
    for f in fused:
        target, item_id = f.key
        if target == "chunks" and item_id in chunks:
            penalised = bool(named) and not named & _turn_speakers(chunks[item_id])
            ranked.append((f.score * (config.speaker_factor if penalised else 1.0), item_id, f))
        elif target == "memories" and item_id in memories:
            ranked.append((f.score, item_id, f))
    ranked.sort(key=lambda h: (-h[0], h[1]))
    return ranked, named


def recall(
    store: Store,
    embedder: Embedder | None,
    scope: Scope,
    query: str,
    *,
    config: RecallConfig,
    k: int | None = None,
    token_budget: int = 2048,
    filters: RecallFilters | None = None,
) -> RecallResult:
    """Ranked, cited items that fit `token_budget`; at most `k` of them when given."""
    kinds = set((filters or RecallFilters()).kinds or ("memory", "chunk"))
    targets = [t for t in config.targets if ("memory" if t == "memories" else "chunk") in kinds]
    found, warnings = _search(store, embedder, scope, query, config, targets)
    fused = rrf({signal: [((h.target, h.id), h.score) for h in hits] for signal, hits in found.items()},
                config.signals, config.rrf_k)
    shown = {h.id: h.chunk for hits in found.values() for h in hits if h.chunk is not None}
    chunks, memories = _hydrate(store, scope, fused, shown)
    ranked, named = _rerank(query, fused, chunks, memories, config)
    candidates = (  # built lazily: packing stops looking once the budget is spent
        _chunk_candidate(chunks[item_id], f, score, config, named) if f.key[0] == "chunks"
        else _memory_candidate(memories[item_id], f)
        for score, item_id, f in ranked
    )
    packed = pack(candidates, token_budget, k)
    items = [
        RecallItem(kind=c.kind, id=c.id, text=c.line, tokens=tokens_of(c.line), score=round(c.score, 6),
                   scores=c.scores, why=c.why, citations=citations_of(c.source))  # type: ignore[arg-type]
        for c in packed.items
    ]
    return RecallResult(query=query, items=items, tokens=packed.tokens, context=packed.context, warnings=warnings)
