"""recall(scope, query, k, token_budget, filters): hybrid retrieval, fusion, packing, citations.

Scope and lifecycle predicates are applied inside every search (LanceDB prefilters,
DuckDB WHERE clauses), and again by DuckDB, the system of record, before anything is
returned, so an index that lags behind can lose a hit but never return one it should not.

Memories are then reranked (salience, recency) and the top ones seed a bounded graph
expansion (links and shared entities, `recall.graph`); chunks keep their fused order.

Past versions are searched too: a query worded like what was true before ("Where does Lena
live?" against "Lena lives in Hamburg") finds the old memory, and its current version ("Lena
moved to Munich") takes that hit's place unless `include_history` asks for the history itself.

The memory tree joins where the query asks for it (`recall.tree`): summaries for an overview, the
profile for a person as a whole, and optionally a boost for the memories of the query's topic.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from itertools import chain
from typing import Any

import numpy as np

from mnemoflow.chunking import day_label
from mnemoflow.embedding.base import Embedder, reads_cjk
from mnemoflow.errors import EmbeddingUnavailableError, VectorsUnavailableError
from mnemoflow.memory.relate.entities import entity_id
from mnemoflow.models import MemoryItem, RecallItem, RecallResult
from mnemoflow.recall import tree
from mnemoflow.recall.citations import citations_of
from mnemoflow.recall.config import RecallConfig, RecallFilters
from mnemoflow.recall.currency import NowQuestion, newer_first, possible_updates
from mnemoflow.recall.excerpt import excerpt, terms
from mnemoflow.recall.fusion import Fused, rrf
from mnemoflow.recall.graph import Expansion, expand
from mnemoflow.recall.intent import asks_about_now, breadth
from mnemoflow.recall.packing import Candidate, TurnKey, pack, tokens_of
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.store import ChunkHit, SearchHit
from mnemoflow.timeutil import utcnow
from mnemoflow.tokens import budget_units, has_cjk
from mnemoflow.tree_models import Summary


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="mnemoflow-recall")


@dataclass
class _Ranked:
    """A candidate in the final order: found by the searches (`fused`) or reached by graph expansion."""

    score: float
    key: tuple[str, str]  # (target, id)
    fused: Fused | None = None
    factors: dict[str, float] = field(default_factory=dict)  # rerank factors shown in `scores`
    why: str = ""


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


def _turn_keys(session_id: Any, turns: list[dict[str, Any]]) -> frozenset[TurnKey]:
    return frozenset((t.get("session_id", session_id), t["turn_id"]) for t in turns if t.get("turn_id"))


def _chunk_candidate(hit: ChunkHit, fused: Fused, score: float, config: RecallConfig, named: set[str],
                     focus: tuple[set[str], int], moved: str | None = None) -> Candidate:
    """`focus`: the query's words, and the characters a chunk may take before it is shown as an excerpt;
    `moved`: why a step after the searches moved it (newer first, the query's topic)."""
    scores = _signal_scores(fused)
    why = _why(fused) + (f"; {moved}" if moved else "")
    text, cut = hit.text, excerpt(hit.text, *focus)
    if cut is not None:
        text = cut[0]
        why += f"; shown as {cut[1]} of its {cut[2]} sentences, those nearest the query"
    turns = hit.locator.get("turns")
    if turns:
        first_ts = datetime.fromisoformat(turns[0]["ts"]) if turns[0].get("ts") else None
        turn_keys = _turn_keys(hit.locator.get("session_id"), turns)
        # an excerpt does not show its turn word for word: a memory read from it is not a second copy
        shows = turn_keys if cut is None else frozenset()
        if score < fused.score:
            scores["speaker_factor"] = config.speaker_factor
            why += f"; spoken by someone the query does not name ({', '.join(sorted(named))} named)"
        if config.group_sessions:
            header = f"[{day_label(first_ts)}]" if first_ts else f"[{hit.title}]"
            return Candidate("chunk", hit.chunk_id, text, score, scores, why, hit, group=hit.document_id,
                             header=header, order=(first_ts or datetime.min, hit.chunk_id), shows=shows,
                             part_of=turn_keys)
        when = session_time(first_ts) if first_ts else hit.title
        return Candidate("chunk", hit.chunk_id, f"[{when}] {text}", score, scores, why, hit, shows=shows,
                         part_of=turn_keys)
    path = hit.locator.get("heading_path") or []
    where = " > ".join([hit.title, *[p for p in path if p != hit.title]])
    return Candidate("chunk", hit.chunk_id, text, score, scores, why, hit, group=f"{hit.document_id}\x1f{where}",
                     header=f"[{where}]", order=(hit.locator.get("part", 0), hit.chunk_id))


def _memory_candidate(memory: MemoryItem, ranked: _Ranked, history: str | None) -> Candidate:
    when = (memory.event_start_at or memory.observed_at or memory.created_at).date().isoformat()
    scores = _signal_scores(ranked.fused) if ranked.fused is not None else {}
    scores.update({name: round(value, 6) for name, value in ranked.factors.items()})
    why = ranked.why or _why(ranked.fused)  # type: ignore[arg-type]
    stamp = when
    if history is not None and history.startswith("said on"):  # the older side of a possible update
        why += f"; {history}"
        stamp = history
    elif history is not None:
        scores["history"] = 1.0
        why += f"; history: {history}"
        stamp += (", superseded" if history.startswith("superseded") else ", archived" if history.startswith("archived")
                  else ", no longer current")
    return Candidate("memory", memory.id, f"- {memory.content} ({stamp})", ranked.score, scores, why, memory,
                     group="memories", header="[memories]", order=(when, memory.id),
                     # a past version says what its turns no longer make true: never left out for them
                     restates=_turn_keys(None, memory.metadata.get("source_turns") or []) if history is None
                     else frozenset(), states=frozenset({memory.id}))


def _search(
    store: Store, embedder: Embedder | None, scope: Scope, query: str, config: RecallConfig, targets: list[str],
    only: list[str] | None = None,
) -> tuple[dict[str, list[SearchHit]], list[str], np.ndarray | None]:
    """Each signal's hits over all targets as one list, best first (cosine similarities from one
    model compare across targets, and so do BM25 scores); plus warnings for signals skipped, and the
    query's vector (None when it was not embedded). Memories are searched with their past versions (never
    deleted ones): `_hydrate` decides."""
    warnings: list[str] = []
    found: dict[str, list[SearchHit]] = {}
    vector: np.ndarray | None = None
    targets = store.searchable(scope, targets)  # type: ignore[arg-type]
    if not targets:  # nothing to find: no index is opened and the query is not embedded
        return found, warnings, vector
    # BM25 runs beside the query embedding and the vector search: both wait in native code
    # (LanceDB, torch) with the GIL released, so on two cores this hides most of the BM25 time.
    bm25 = [_pool().submit(store.bm25_search, scope, t, query, config.depth, include_history=True,
                           only=only if t == "memories" else None)
            for t in targets] if "bm25" in config.signals else []
    english_only = (config.language_gate and embedder is not None and has_cjk(query)
                    and not reads_cjk(embedder.model))
    if english_only and "bm25" in config.signals:
        warnings.append(f"vector search skipped: {embedder.model} reads English only, and the query is "  # type: ignore[union-attr]
                        "Chinese, Japanese or Korean (an OpenAI-compatible multilingual embedder reads it)")
    elif embedder is not None and "vector" in config.signals:
        try:
            vector = embedder.embed_query(query)
            found["vector"] = [h for t in targets for h in store.vector_search(
                scope, t, vector, config.depth, include_history=True, only=only if t == "memories" else None)]
        except EmbeddingUnavailableError as exc:
            warnings.append(f"vector search skipped: {exc}")
    if bm25:
        try:
            found["bm25"] = [h for future in bm25 for h in future.result()]
        except VectorsUnavailableError as exc:  # the bucket is down: the system of record's own keyword search
            warnings.append(f"BM25 from the system of record's keyword search: {exc}")
            found["bm25"] = [h for t in targets for h in store.keyword_search(
                scope, t, query, config.depth, include_history=True, only=only if t == "memories" else None)]
    for hits in found.values():
        hits.sort(key=lambda h: (-h.score, h.target, h.id))
    return found, warnings, vector


def _hydrate(
    store: Store, scope: Scope, fused: list[Fused], shown: dict[str, ChunkHit], history: bool = False,
) -> tuple[dict[str, ChunkHit], dict[str, MemoryItem], dict[str, str]]:
    """Read fused candidates back through DuckDB's scope and lifecycle gate. Without `history`, a
    superseded memory is replaced by its current version: the memories include it, and the third
    dict maps the superseded id to its id."""
    chunk_ids = [f.key[1] for f in fused if f.key[0] == "chunks"]
    chunks = {i: shown[i] for i in store.live_chunk_ids(scope, [i for i in chunk_ids if i in shown])}
    chunks.update(store.fetch_chunks(scope, [i for i in chunk_ids if i not in shown]))
    memories = store.fetch_memories(scope, [f.key[1] for f in fused if f.key[0] == "memories"], include_history=True)
    if history:
        return chunks, memories, {}
    now = utcnow()
    past = {i for i, m in memories.items() if not m.active_at(now)}
    current = store.current_versions(scope, [i for i in past if not memories[i].is_latest])
    live = {i: m for i, m in memories.items() if i not in past}
    live.update({m.id: m for m in current.values()})
    return chunks, live, {old: m.id for old, m in current.items()}


def _observed(memory: MemoryItem) -> datetime:
    return memory.observed_at or memory.created_at


def _memory_factors(memory: MemoryItem, newest: datetime | None, config: RecallConfig) -> dict[str, float]:
    """Salience and recency factors, each in [1 - w/2, 1 + w/2]; recency counts age back from the
    newest candidate memory."""
    factors: dict[str, float] = {}
    if config.salience_weight > 0:
        factors["salience_factor"] = 1 + config.salience_weight * (min(1.0, max(0.0, memory.salience)) - 0.5)
    if config.recency_weight > 0 and newest is not None:
        age_days = max(0.0, (newest - _observed(memory)).total_seconds() / 86400)
        decay = 0.5 ** (age_days / config.recency_half_life_days)
        factors["recency_factor"] = 1 + config.recency_weight * (decay - 0.5)
    return factors


def _rerank(
    query: str, fused: list[Fused], chunks: dict[str, ChunkHit], memories: dict[str, MemoryItem],
    current: dict[str, str], config: RecallConfig, newest: datetime | None, summaries: dict[str, object] | None = None,
) -> tuple[list[_Ranked], set[str]]:
    """Final order: the fused score, lowered for turns by people other than those the query names,
    and scaled for memories by their salience and recency factors. A hit on a superseded memory
    ranks its current version (`current`: superseded id -> current id) there; each memory keeps its
    best place. Summaries fused with the evidence (`summaries = "ranked"`) keep their fused score,
    the best `summary_max_items` of them."""
    named: set[str] = set()
    if config.speaker_factor < 1:
        named = speakers_named(query, set().union(*(_turn_speakers(h) for h in chunks.values())))
    ranked: list[_Ranked] = []
    for f in fused:
        target, item_id = f.key
        if target == "chunks" and item_id in chunks:
            penalised = bool(named) and not named & _turn_speakers(chunks[item_id])
            ranked.append(_Ranked(f.score * (config.speaker_factor if penalised else 1.0), f.key, f))
        elif target == "memories" and item_id in memories:
            factors = _memory_factors(memories[item_id], newest, config)
            ranked.append(_Ranked(f.score * math.prod(factors.values()), f.key, f, factors))
        elif target == "memories" and item_id in current:
            latest = current[item_id]
            factors = _memory_factors(memories[latest], newest, config)
            ranked.append(_Ranked(f.score * math.prod(factors.values()), ("memories", latest), f, factors,
                                  f"current version of {item_id}, which the query {_why(f)} (UPDATES)"))
        elif target == "summaries" and item_id in (summaries or {}) and config.summary_max_items > len(
                [r for r in ranked if r.key[0] == "summaries"]):
            ranked.append(_Ranked(f.score, f.key, f))
    ranked.sort(key=lambda r: (-r.score, r.key[1]))
    best: dict[tuple[str, str], _Ranked] = {}
    for r in ranked:
        best.setdefault(r.key, r)
    return list(best.values()), named


def _speaker_entities(seeds: list[MemoryItem]) -> set[str]:
    """The people who said the turns the seeds were read from. Nearly every memory read from a
    person's turns names them, so sharing them says nothing about a memory: not a link to follow."""
    return {entity_id("person", t["speaker"]) for m in seeds for t in m.metadata.get("source_turns") or []
            if t.get("speaker")}


def _graph_why(e: Expansion) -> str:
    if e.by_entity:
        why = f"shares entity {e.via} with {e.from_id}"
    elif e.via == "EXTRACTED_FROM":
        why = f"extracted from {e.from_id}, a top chunk"
    elif e.via == "UPDATES":
        why = f"{'older' if e.outgoing else 'newer'} version of {e.from_id} (UPDATES)"
    else:
        subject, target = ("it", "this") if e.outgoing else ("this", "it")
        why = f"linked {e.via} from {e.from_id} ({subject} {e.via} {target})"
    return why + (f" ({e.hops} hops from a top item)" if e.hops > 1 else "")


def _expand(
    store: Store, scope: Scope, ranked: list[_Ranked], memories: dict[str, MemoryItem], config: RecallConfig,
    newest: datetime | None, history: bool,
) -> list[_Ranked]:
    """Memories linked to the top-ranked ones: each scores what it was reached from times the hop
    (or entity) factor and its own rerank factors, so always below it. Adds them to `memories`."""
    if not config.graph or config.graph_max_items == 0:
        return []
    seeds = [r.key[1] for r in ranked if r.key[0] == "memories"][:config.graph_seeds]
    chunk_seeds = [r.key[1] for r in ranked if r.key[0] == "chunks"][:config.graph_chunk_seeds]
    if not seeds and not chunk_seeds:
        return []
    score_of = {r.key[1]: r.score for r in ranked}
    expansions = expand(
        store, scope, seeds, depth=config.graph_depth, max_items=config.graph_max_items,
        link_types=config.graph_links, entities=config.graph_entities, chunk_seeds=chunk_seeds,
        exclude={r.key[1] for r in ranked if r.key[0] == "memories"}, include_history=history,
        ignore_entities=_speaker_entities([memories[m] for m in seeds if m in memories]) if config.graph_skip_speakers
        else (),
    )
    found: list[_Ranked] = []
    for e in expansions:
        assert e.memory is not None
        hop = config.graph_entity_factor if e.by_entity else config.graph_hop_factor
        factors = _memory_factors(e.memory, newest, config)
        reached_from = score_of[e.from_id]
        score = min(reached_from * hop * math.prod(factors.values()), math.nextafter(reached_from, 0.0))
        score_of[e.memory_id] = score
        memories[e.memory_id] = e.memory
        found.append(_Ranked(score, ("memories", e.memory_id), None,
                             {"graph_factor": hop, "hops": e.hops, **factors}, _graph_why(e)))
    return found


def _history_notes(store: Store, scope: Scope, memories: dict[str, MemoryItem]) -> dict[str, str]:
    """Why each memory that is no longer current is not: superseded by which, or since when (its
    validity ended, it expired, decay archived it)."""
    now = utcnow()
    past = {i: m for i, m in memories.items() if not m.active_at(now)}  # deleted ones never reach recall
    if not past:
        return {}
    newer: dict[str, str] = {}
    for src, dst, _ in store.linked_memories(scope, list(past), ("UPDATES",)):
        if dst in past:
            newer.setdefault(dst, src)
    notes: dict[str, str] = {}
    for i, m in past.items():
        if i in newer:
            notes[i] = f"superseded by {newer[i]}"
        elif not m.is_latest:
            notes[i] = "superseded"
        elif m.valid_to is not None and m.valid_to <= now:
            notes[i] = f"valid until {m.valid_to:%Y-%m-%d %H:%M}"
        elif m.expires_at is not None and m.expires_at <= now:
            notes[i] = f"expired {m.expires_at:%Y-%m-%d %H:%M}"
        else:
            notes[i] = f"archived {m.archived_at:%Y-%m-%d %H:%M} (its retention ran out)"
    return notes


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
    history = filters.include_history
    kinds = set(filters.kinds or ("memory", "chunk", "summary", "profile"))
    with_summaries, with_profile = tree.uses(config, kinds, breadth(query))
    targets = [t for t in config.targets if ("memory" if t == "memories" else "chunk") in kinds]
    only = filters.memory_ids
    found, warnings, query_vector = _search(store, embedder, scope, query, config,
                                            targets + ["summaries"] * with_summaries, only)
    hits = {signal: [((h.target, h.id), h.score) for h in found_hits] for signal, found_hits in found.items()}
    apart = config.summaries == "broad"  # fused on their own, summaries cannot move the evidence's ranks
    fused = rrf({s: [h for h in signal_hits if not (apart and h[0][0] == "summaries")]
                 for s, signal_hits in hits.items()}, config.signals, config.rrf_k)
    summary_fused = (rrf({s: [h for h in signal_hits if h[0][0] == "summaries"] for s, signal_hits in hits.items()},
                         config.signals, config.rrf_k) if apart else [f for f in fused if f.key[0] == "summaries"])
    # ranked, only the best few can make the cap; gating each means reading every memory it covers
    gated = [f.key[1] for f in summary_fused][:None if apart else 4 * config.summary_max_items]
    summaries = store.fetch_summaries(scope, gated) if with_summaries else {}
    shown = {h.id: h.chunk for found_hits in found.values() for h in found_hits if h.chunk is not None}
    chunks, memories, current = _hydrate(store, scope, fused, shown, history)
    newest = max((_observed(m) for m in memories.values()), default=None)
    ranked, named = _rerank(query, fused, chunks, memories, current, config, newest, summaries)
    ranked = _topic_boost(store, scope, ranked, config)
    expanded = _expand(store, scope, ranked, memories, config, newest, history)
    if expanded:
        ranked = sorted([*ranked, *expanded], key=lambda r: (-r.score, r.key[1]))
    if only is not None:  # a current version or a graph neighbour the filter did not match stays out
        allowed = set(only)
        ranked = [r for r in ranked if r.key[0] != "memories" or r.key[1] in allowed]
    if config.newer_first:
        ranked = newer_first(store, scope, ranked, memories, chunks, config, NowQuestion(
            query, query_vector, embedder.embed_query) if query_vector is not None and embedder is not None
            and asks_about_now(query) else None)
    may: dict[str, str] = {}
    if config.possible_updates and not history:
        ranked, may = possible_updates(store, scope, ranked, memories, lambda older, newer: _Ranked(
            older.score, ("memories", newer.id), None, {}, f"newer side of a possible update of {older.key[1]} "
            "(MAY_UPDATE)"))
    notes = _history_notes(store, scope, memories) if history else may
    top = ranked[0].score if ranked else 1.0
    lead = tree.summaries_first(summaries, summary_fused, query, config, token_budget, top) if apart else []
    profile = store.read_profile(scope) if with_profile else None
    if config.profile == "broad":  # for a person as a whole, their profile before any summary
        lead[:0] = tree.profile_candidates(store, scope, profile, query, top, "the query asks about a person as a "
                                        "whole", int(token_budget * config.profile_max_share))
    after = tree.profile_candidates(store, scope, profile, query, 0.0, "room after the evidence", None
                                    ) if config.profile == "ranked" else []
    focus = (terms(query), int(budget_units(token_budget) * config.excerpt_share))
    candidates = chain(lead, (  # built lazily: packing stops looking once the budget is spent
        _candidate(r, chunks, memories, summaries, notes, config, named, focus) for r in ranked), after)
    packed = pack(candidates, token_budget, k, config.drop_restated_memories, config.later_parts_last)
    items = [
        RecallItem(kind=c.kind, id=c.id, text=c.line, tokens=tokens_of(c.line), score=round(c.score, 6),
                   scores=c.scores, why=c.why, citations=citations_of(c.source))  # type: ignore[arg-type]
        for c in packed.items
    ]
    return RecallResult(query=query, items=items, tokens=packed.tokens, context=packed.context, warnings=warnings)


def _candidate(r: _Ranked, chunks: dict[str, ChunkHit], memories: dict[str, MemoryItem],
               summaries: dict[str, tuple[Summary, list[MemoryItem]]], notes: dict[str, str], config: RecallConfig,
               named: set[str], focus: tuple[set[str], int]) -> Candidate:
    target, item_id = r.key
    if target == "chunks":
        return _chunk_candidate(chunks[item_id], r.fused, r.score, config, named, focus,  # type: ignore[arg-type]
                                r.why)
    if target == "summaries":
        summary, leaves = summaries[item_id]
        return tree.summary_candidate(summary, leaves, r.score, _signal_scores(r.fused), _why(r.fused))  # type: ignore[arg-type]
    return _memory_candidate(memories[item_id], r, notes.get(item_id))


def _topic_boost(store: Store, scope: Scope, ranked: list[_Ranked], config: RecallConfig) -> list[_Ranked]:
    """Memories of the query's topic (`tree.topic_factors`) scaled by 1 + topic_boost, reordered."""
    factors, topic = tree.topic_factors(store, scope, [r.key[1] for r in ranked if r.key[0] == "memories"],
                                        config.topic_boost)
    if not factors:
        return ranked
    for r in ranked:
        if r.key[0] == "memories" and r.key[1] in factors:
            r.score *= factors[r.key[1]]
            r.factors["topic_factor"] = factors[r.key[1]]
            r.why = (r.why or _why(r.fused)) + f"; in the query's topic {topic}"  # type: ignore[arg-type]
    return sorted(ranked, key=lambda r: (-r.score, r.key[1]))
