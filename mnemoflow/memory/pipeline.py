"""From conversation turns to linked memories: context, generation, neighbours, decision, write.

For every turn, in order, the engine sees the turn, the latest earlier turn by another speaker, a
bounded window before it, and what the scope already knows; each candidate it wants stored is
compared with its neighbours in the same scope (the same content hash, BM25 and vector hits, and
the memories written earlier in this run that the indexes have not folded in yet), and the
relationship step decides in code what it does: a new memory, a reinforced duplicate, an update
that supersedes, an extension or a conflict, applied at confidence >= 0.85, queued for review
from 0.5. Lifecycle time is the store's; event time comes from the candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from mnemoflow.embedding import Embedder
from mnemoflow.memory.candidates import Candidate, GenerationContext, GenerationEngine, TurnView
from mnemoflow.memory.relations import Decision, Neighbour, action, classify, derive
from mnemoflow.models import LinkDraft, MemoryDraft, MemoryItem
from mnemoflow.scoring import fast_score
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.store import memory_content_hash
from mnemoflow.timeutil import utcnow

WINDOW_TURNS = 6  # recent turns an engine may read for an elliptic question's topic
NEIGHBOURS_PER_SIGNAL = 10
KNOWN_MEMORIES = 5  # what the scope already knows, shown to the engine per turn


@dataclass
class GenerationReport:
    turns: int = 0
    candidates: int = 0
    created: int = 0
    reinforced: int = 0
    linked: dict[str, int] = field(default_factory=dict)
    reviews: int = 0

    def count_link(self, relation: str) -> None:
        self.linked[relation] = self.linked.get(relation, 0) + 1


@dataclass
class _Known:
    """A memory this run may relate a candidate to."""

    memory: MemoryItem
    entities: tuple[str, ...] = ()


class MemoryGenerator:
    """One scope's generation run; `written` bridges the gap until the search indexes catch up."""

    def __init__(self, store: Store, embedder: Embedder, engine: GenerationEngine, scope: Scope,
                 *, actor: str = "generate") -> None:
        self.store, self.embedder, self.engine, self.scope, self.actor = store, embedder, engine, scope, actor
        self.written: dict[str, _Known] = {}
        self.report = GenerationReport()
        self._cache: dict[str, np.ndarray] = {}  # memory id -> normalised vector, for this run

    def run(self, turns: Sequence[TurnView], sources: dict[str, tuple[str, ...]] | None = None) -> GenerationReport:
        """Turns of one conversation, oldest first; `sources` maps a turn id to the chunk or document
        ids its memories are EXTRACTED_FROM."""
        sources = sources or {}
        for position, turn in enumerate(turns):
            self.report.turns += 1
            context = self._context(turns, position)
            for candidate in self.engine.generate(context):
                if not candidate.should_store:
                    continue
                self.report.candidates += 1
                cited = tuple(dict.fromkeys(s for t in candidate.source_turn_ids for s in sources.get(t, ())))
                self._decide_and_write(candidate, cited, context.now)
        self._derive()
        return self.report

    def _derive(self) -> None:
        """Inferences over this run's current memories, each DERIVES from what supports it."""
        current = [_Ref(mid, k.memory.content) for mid, k in self.written.items() if k.memory.is_latest]
        for inferred in derive(current):
            verdict = action(Decision("new", None, inferred.confidence, inferred.reason))
            if verdict == "ignore":
                continue
            links = tuple(LinkDraft("DERIVES", support, inferred.confidence, inferred.reason)
                          for support in inferred.supporting_ids)
            draft = MemoryDraft(content=inferred.content, kind=inferred.kind, salience=fast_score(inferred.content),
                                confidence=inferred.confidence, metadata={"derived_by": inferred.rule})
            memory, created = self.store.write_memory(self.scope, draft, actor=self.actor,
                                                      links=links if verdict == "apply" else (),
                                                      review=links if verdict == "review" else ())
            if created:
                self.report.created += 1
                self.report.count_link("DERIVES")

    # ------------------------------------------------------------------ context
    def _context(self, turns: Sequence[TurnView], position: int) -> GenerationContext:
        turn = turns[position]
        earlier = turns[max(0, position - WINDOW_TURNS):position]
        previous = next((t for t in reversed(turns[:position]) if t.speaker != turn.speaker), None)
        known = [k.memory.content for k in list(self.written.values())[-KNOWN_MEMORIES:]]
        return GenerationContext(turn=turn, now=turn.ts or utcnow(), previous=previous, window=tuple(earlier),
                                 memories=tuple(known))

    # ------------------------------------------------------------------ neighbours and decision
    def _neighbours(self, candidate: Candidate) -> list[Neighbour]:
        bm25 = self.store.bm25_search(self.scope, "memories", candidate.content, NEIGHBOURS_PER_SIGNAL)
        vector = self._vectors({"": candidate.content})[""]
        dense = self.store.vector_search(self.scope, "memories", vector, NEIGHBOURS_PER_SIGNAL)
        ranks = {hit.id: rank for rank, hit in enumerate(bm25, start=1)}
        stored = self.store.fetch_memories(self.scope, list(dict.fromkeys([h.id for h in bm25] + [h.id for h in dense])))
        known = {mid: _Known(m) for mid, m in stored.items() if m.is_latest}
        known.update({mid: k for mid, k in self.written.items() if k.memory.is_latest})
        vectors = self._vectors({mid: k.memory.content for mid, k in known.items()})
        same = memory_content_hash(candidate.content)
        return [Neighbour(memory_id=mid, content=k.memory.content, kind=k.memory.kind, entities=k.entities,
                          observed_at=k.memory.observed_at, event_start_at=k.memory.event_start_at,
                          vector_similarity=float(np.dot(vector, vectors[mid])), bm25_rank=ranks.get(mid),
                          same_hash=memory_content_hash(k.memory.content) == same)
                for mid, k in known.items()]

    def _vectors(self, texts: dict[str, str]) -> dict[str, np.ndarray]:
        """Normalised vectors by memory id ("" for the candidate): a memory is embedded once per run,
        the missing ones in one model call."""
        missing = [mid for mid in texts if mid == "" or mid not in self._cache]
        if missing:
            found = np.asarray(self.embedder.embed([texts[mid] for mid in missing]), dtype=np.float32)
            found /= np.maximum(np.linalg.norm(found, axis=1, keepdims=True), 1e-12)
            self._cache.update(zip(missing, found))
        return {mid: self._cache[mid] for mid in texts}

    def _decide_and_write(self, candidate: Candidate, cited: tuple[str, ...], now: datetime) -> None:
        neighbours = self._neighbours(candidate)
        decision = classify(candidate.content, candidate.kind, candidate.entities, neighbours, now=now)
        verdict = action(decision)
        if decision.relation == "duplicate" and verdict == "apply" and decision.target_id:
            self.store.reinforce_memory(self.scope, decision.target_id, cited, actor=self.actor)
            self.report.reinforced += 1
            return
        link = _link(decision)
        links = (link,) if link and verdict == "apply" else ()
        review = (link,) if link and verdict == "review" else ()
        memory, created = self.store.write_memory(self.scope, _draft(candidate, cited), actor=self.actor,
                                                  links=links, review=review)
        if not created:  # the same content already held (an exact repeat the hash caught)
            self.store.reinforce_memory(self.scope, memory.id, cited, actor=self.actor)
            self.report.reinforced += 1
            return
        self.report.created += 1
        self.report.reviews += len(review)
        for applied in links:
            self.report.count_link(applied.type)
            if applied.type == "UPDATES" and applied.target_id in self.written:
                old = self.written[applied.target_id]
                old.memory = old.memory.model_copy(update={"is_latest": False})
        self.written[memory.id] = _Known(memory, candidate.entities)
        self._cache[memory.id] = self._cache[""]  # the candidate's text is the memory's


@dataclass(frozen=True)
class _Ref:
    memory_id: str
    content: str


def _link(decision: Decision) -> LinkDraft | None:
    if decision.relation == "new" or decision.target_id is None:
        return None
    kind = "DUPLICATE_OF" if decision.relation == "duplicate" else decision.relation
    return LinkDraft(kind, decision.target_id, decision.confidence, decision.reason)


def _draft(candidate: Candidate, cited: tuple[str, ...]) -> MemoryDraft:
    return MemoryDraft(
        content=candidate.content, kind=candidate.kind, salience=candidate.salience, confidence=candidate.confidence,
        observed_at=candidate.observed_at, event_start_at=candidate.event_start_at,
        event_end_at=candidate.event_end_at, temporal_text=candidate.temporal_text,
        metadata={"entities": list(candidate.entities), "source_turn_ids": list(candidate.source_turn_ids),
                  "why": list(candidate.reasons)},
        derived_from=cited,
    )
