"""recall(scope, query, k, token_budget, filters): hybrid retrieval, fusion, packing, citations.

Scope and lifecycle predicates are applied inside every search (LanceDB prefilters,
DuckDB WHERE clauses), and again when candidates are read back from DuckDB, so a
vector table that lags behind can lose a hit but never return one it should not.
"""

from __future__ import annotations

import re
from datetime import datetime
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
from mnemoflow.storage.store import ChunkHit


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


def _chunk_candidate(hit: ChunkHit, fused: Fused, config: RecallConfig, named: set[str]) -> Candidate:
    turns = hit.locator.get("turns")
    scores = _signal_scores(fused)
    score = fused.score
    why = _why(fused)
    if turns:
        citations = [
            Citation(document_id=hit.document_id, uri=hit.uri, title=hit.title, locator=hit.locator,
                     session_id=hit.locator.get("session_id"), turn_id=t["turn_id"],
                     ts=datetime.fromisoformat(t["ts"]) if t.get("ts") else None, speaker=t.get("speaker"))
            for t in turns
        ]
        first_ts = citations[0].ts
        if named and not named & _turn_speakers(hit):
            score *= config.speaker_factor
            scores["speaker_factor"] = config.speaker_factor
            why += f"; spoken by someone the query does not name ({', '.join(sorted(named))} named)"
        if config.group_sessions:
            header = f"[{day_label(first_ts)}]" if first_ts else f"[{hit.title}]"
            return Candidate("chunk", hit.chunk_id, hit.text, score, scores, why, citations,
                             group=hit.document_id, header=header, order=(first_ts or datetime.min, hit.chunk_id))
        when = session_time(first_ts) if first_ts else hit.title
        return Candidate("chunk", hit.chunk_id, f"[{when}] {hit.text}", score, scores, why, citations)
    path = hit.locator.get("heading_path") or []
    where = " > ".join([hit.title, *[p for p in path if p != hit.title]])
    citation = Citation(document_id=hit.document_id, uri=hit.uri, title=hit.title, locator=hit.locator)
    return Candidate("chunk", hit.chunk_id, hit.text, score, scores, why, [citation],
                     group=f"{hit.document_id}\x1f{where}", header=f"[{where}]",
                     order=(hit.locator.get("part", 0), hit.chunk_id))


def _memory_candidate(memory: MemoryItem, fused: Fused) -> Candidate:
    when = (memory.event_start_at or memory.observed_at or memory.created_at).date().isoformat()
    citation = Citation(memory_id=memory.id, ts=memory.observed_at, locator=memory.metadata.get("source", {}))
    return Candidate("memory", memory.id, f"- {memory.content} ({when})", fused.score, _signal_scores(fused),
                     _why(fused), [citation], group="memories", header="[memories]", order=(when, memory.id))


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
    filters = filters or RecallFilters()
    kinds = set(filters.kinds or ("memory", "chunk"))
    targets = [t for t in config.targets if ("memory" if t == "memories" else "chunk") in kinds]
    warnings: list[str] = []
    vector = None
    if embedder is not None and "vector" in config.signals:
        try:
            vector = embedder.embed_query(query)
        except EmbeddingUnavailableError as exc:
            warnings.append(f"vector search skipped: {exc}")
    ranked: dict[str, list[tuple[tuple[str, str], float]]] = {}
    for signal in config.signals:
        if signal == "vector" and vector is None:
            continue
        hits: list[tuple[tuple[str, str], float]] = []
        for target in targets:
            if signal == "vector":
                # cosine similarity: comparable across targets (one model)
                found = store.vector_search(scope, target, vector, config.depth)  # type: ignore[arg-type]
                hits += [((target, i), sim) for i, sim in found]
            else:
                found = store.bm25_search(scope, target, query, config.depth)  # type: ignore[arg-type]
                hits += [((target, i), s) for i, s in found]
        hits.sort(key=lambda h: (-h[1], h[0]))
        ranked[signal] = hits

    fused = rrf(ranked, config.signals, config.rrf_k)
    chunk_hits = store.fetch_chunks(scope, [f.key[1] for f in fused if f.key[0] == "chunks"])
    memories = store.fetch_memories(scope, [f.key[1] for f in fused if f.key[0] == "memories"])
    named: set[str] = set()
    if config.speaker_factor < 1:
        named = speakers_named(query, set().union(*(_turn_speakers(h) for h in chunk_hits.values())))
    ranked_hits: list[tuple[float, str, Fused]] = []
    for f in fused:
        target, item_id = f.key
        if target == "chunks" and item_id in chunk_hits:
            penalised = bool(named) and not named & _turn_speakers(chunk_hits[item_id])
            ranked_hits.append((f.score * (config.speaker_factor if penalised else 1.0), item_id, f))
        elif target == "memories" and item_id in memories:
            ranked_hits.append((f.score, item_id, f))
    ranked_hits.sort(key=lambda h: (-h[0], h[1]))
    candidates = (
        _chunk_candidate(chunk_hits[item_id], f, config, named) if f.key[0] == "chunks"
        else _memory_candidate(memories[item_id], f)
        for _, item_id, f in ranked_hits
    )
    packed = pack(candidates, token_budget, k)
    items = [
        RecallItem(kind=c.kind, id=c.id, text=c.line, tokens=tokens_of(c.line), score=round(c.score, 6),
                   scores=c.scores, why=c.why, citations=c.citations)  # type: ignore[arg-type]
        for c in packed.items
    ]
    return RecallResult(query=query, items=items, tokens=packed.tokens, context=packed.context, warnings=warnings)
