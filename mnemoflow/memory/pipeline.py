"""From conversation turns to linked memories: context, generation, neighbours, decision, write.

For every turn the engine sees the turn, the latest earlier turn by another speaker, a bounded
window before it, and the scope's current memories most relevant to it (the nearest to the turn and
the one before it, found for the whole pass in one model call and one vector query, with the
generator's own earlier writes); the candidates of the whole pass are embedded in one model call,
then, in turn order, each is compared with its neighbours in the same scope (the same content hash,
BM25 and vector hits, and the memories written earlier in this run that the indexes have not folded
in yet), and the relationship step decides in code what it does: a new memory, a reinforced
duplicate, an update that supersedes, an extension or a conflict, applied at confidence >= 0.85,
queued for review from 0.5. Lifecycle time is the store's; event time comes from the candidate.

A pass reads and writes through one `MemoryWrites`: every decision sees the writes before it at
once, and the pass lands in one transaction and one commit; a pass that fails leaves nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any, Literal

import numpy as np

from mnemoflow.embedding import Embedder
from mnemoflow.embedding.base import normalize
from mnemoflow.embedding.worker import vectors_by_hash
from mnemoflow.memory.drafts import candidate_draft, kept_version
from mnemoflow.memory.generate.candidates import (
    Candidate,
    GenerationContext,
    GenerationEngine,
    MemoryContext,
    TurnView,
)
from mnemoflow.memory.generate.turn import UNREAD
from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.facts import facts
from mnemoflow.memory.relate.moved import (
    changed_by_difference,
    moved_by_amount,
    moved_to_named_day,
    moved_to_named_place,
    restated_with_value,
    revalued_memory,
    with_held_subject,
)
from mnemoflow.memory.relate.relations import Decision, Neighbour, action, classify
from mnemoflow.memory.relate.replaces import ends_a_thing, takes_its_place
from mnemoflow.memory.relate.restate import restated_similarity
from mnemoflow.memory.relate.versions import extensions_replaced, may_update, may_update_links, unchanged_facts
from mnemoflow.memory.turns import asks_for_detail, turn_context
from mnemoflow.models import LinkDraft, MemoryDraft, MemoryItem
from mnemoflow.reports import GenerationReport
from mnemoflow.scoring import fast_score
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.store import MemoryWrites, memory_content_hash

NEIGHBOURS_PER_SIGNAL = 10
KNOWN_MEMORIES = 5  # what the scope already knows, shown to the engine per turn


@dataclass(frozen=True)
class WriteEvent:
    """What one decision of a run did to the store, in mem0's terms: ADD a memory, UPDATE (a new
    memory that supersedes `previous_id`), NONE (the same thing again: the held memory, reinforced);
    `review` names the memories a relationship to which waits for a person."""

    event: Literal["ADD", "UPDATE", "NONE"]
    memory_id: str
    previous_id: str | None = None
    review: tuple[str, ...] = ()


@dataclass
class _Known:
    """A memory this run may relate a candidate to."""

    memory: MemoryItem
    entities: tuple[str, ...] = ()
    extends: str | None = None  # the memory this one applied EXTENDS to, if any
    updates: str | None = None  # the memory this one replaced, if any


class MemoryGenerator:
    """One scope's generation run; `written` bridges the gap until the search indexes catch up."""

    def __init__(self, store: Store, embedder: Embedder, engine: GenerationEngine, scope: Scope,
                 *, actor: str = "generate", metadata: dict[str, Any] | None = None,
                 context: MemoryContext | None = None, with_vectors: bool = False) -> None:
        """`context`: which of the scope's memories each turn is drafted with, the most relevant to it
        or the newest; the engine's own choice unless given (bench/generation_context.py measures both).
        `with_vectors`: each memory is written with the vector its candidate was compared by, so it is
        searchable when the run returns (a direct `add`); the worker's runs leave them to the embedding
        worker, so that `resume` finds what a killed run wrote by its pending vectors."""
        self.store, self.embedder, self.engine, self.scope, self.actor = store, embedder, engine, scope, actor
        self.context = context or engine.memory_context
        self.judge = getattr(engine, "judge", None)  # a chat model's judgement of possible updates, when configured
        self.inferrer = getattr(engine, "inferrer", None)  # and its inferences (DERIVES)
        self.with_vectors = with_vectors
        self.metadata = metadata or {}  # the caller's, on every memory written (the run's own keys win)
        self.written: dict[str, _Known] = {}
        self.report = GenerationReport()
        self.events: list[WriteEvent] = []  # what the last run did, decision by decision
        self._cache: dict[str, np.ndarray] = {}  # memory id -> normalised vector, for this run
        self._cited: dict[str, tuple[str, ...]] = {}  # memory id -> the chunks it was read from, for this run
        self._turns: dict[str, TurnView] = {}  # the conversation being read, by turn id
        self._speakers: tuple[str, ...] = ()
        self._from_turn: dict[str, list[str]] = {}  # turn id -> the memories it gave (new or reinforced)
        self._known_before: list[str] | None = None  # the scope's newest memories when this generator began
        self._unembedded: set[str] = set()  # memories `resume` found waiting for their vectors
        self._ended: dict[str, tuple[str, str]] = {}  # turn id -> the memory a clause of it ended, and its kind
        self._endings: set[str] = set()  # the memories of those clauses, which nothing replaces
        self._turn_id = ""  # the turn whose candidate is being decided

    def resume(self) -> int:
        """Take up what earlier generation in this scope wrote that a vector search cannot find yet
        (its vectors wait for the embedding worker, which runs after generation): the memories of a
        worker that died before embeddings ran, or of an earlier claim batch. `written` holds them as
        if this generator had written them, so a later session is judged against what one
        uninterrupted pass would judge it against; without them an UPDATES found by the vectors
        alone is missed and the old memory stays current. Inferences (DERIVES) stay out, as they
        stay out of `written`. Returns how many were taken up."""
        waiting = self.store.unembedded_memories(self.scope)
        self._unembedded = {m.id for m in waiting}
        taken = [m for m in waiting if "derived_by" not in m.metadata and m.id not in self.written]
        if not taken:
            return 0
        ids = {m.id for m in taken}
        extends = {src: dst for src, dst, _ in self.store.linked_memories(self.scope, list(ids), ("EXTENDS",))
                   if src in ids}
        self._vectors({m.id: m.content for m in taken})
        for m in taken:
            self.written[m.id] = _Known(m, tuple(m.metadata.get("entities") or ()), extends.get(m.id))
        return len(taken)

    def run(self, turns: Sequence[TurnView], sources: dict[str, tuple[str, ...]] | None = None,
            *, only: set[str] | None = None, completes: tuple[str, ...] = ()) -> GenerationReport:
        """Turns of one conversation, oldest first; `sources` maps a turn id to the chunk or document
        ids its memories are EXTRACTED_FROM. With `only`, just those turns are read (the others
        are context: the question a new answer answers). The run is one pass of writes: when it
        fails, nothing of it is stored and the generator is as it was before it. The outbox jobs
        `completes` are marked done in the pass's own transaction."""
        before = self._checkpoint()
        self.events = []
        try:
            return self._run(turns, sources or {}, only, completes)
        except BaseException:
            self.written, self._from_turn, self.report = before
            raise

    def _run(self, turns: Sequence[TurnView], sources: dict[str, tuple[str, ...]],
             only: set[str] | None, completes: tuple[str, ...]) -> GenerationReport:
        self._turns = {t.turn_id: t for t in turns}
        self._speakers = tuple(dict.fromkeys(  # the people of the conversation: names typed as persons
            t.speaker for t in turns if (t.role or "").lower() != "assistant" and t.speaker.lower() != "assistant"))
        planned: list[tuple[int, GenerationContext, Candidate]] = []
        reading = [p for p, turn in enumerate(turns) if only is None or turn.turn_id in only]
        relevant = self._relevant(turns, reading) if self.context == "relevant" else {}
        for position in reading:
            self.report.turns += 1
            context = self._context(turns, position, relevant.get(position, ()))
            drafted = self.engine.generate(context)
            self.report.unread += sum(UNREAD in c.reasons for c in drafted)
            said = [c for c in drafted if c.should_store]
            # what a turn ended is decided before what it names instead ("got a Garmin now, the Fitbit died")
            planned += [(position, context, c) for c in sorted(said, key=lambda c: not ends_a_thing(c.content))]
        # every candidate of the conversation embedded in one model call, then decided in order
        vectors = self._vectors({_key(c): c.content for _, _, c in planned})
        with self.store.memory_writes(self.scope, actor=self.actor, completes=completes) as writes:
            writes.search_ahead(list(vectors.values()), NEIGHBOURS_PER_SIGNAL)
            for position, context, candidate in planned:
                self.report.candidates += 1
                cited = tuple(dict.fromkeys(s for t in candidate.source_turn_ids for s in sources.get(t, ())))
                asked_about = self._asked_about(turns, position) | self._bridged_to(candidate, context.turn.turn_id)
                self._decide_and_write(writes, candidate, cited, context, asked_about)
            self._derive(writes)
        return self.report

    def _checkpoint(self) -> tuple[dict[str, _Known], dict[str, list[str]], GenerationReport]:
        """What a run changes in the generator, copied so that a failed run can be undone."""
        return ({mid: replace(k) for mid, k in self.written.items()},
                {turn: list(ids) for turn, ids in self._from_turn.items()},
                replace(self.report, linked=dict(self.report.linked)))

    def _derive(self, writes: MemoryWrites) -> None:
        """What this run's current memories imply together, each DERIVES from what supports it (a chat
        model's inferences, `relate/llm_infer.py`; without one nothing is derived)."""
        if self.inferrer is None:
            return
        current = [(mid, k.memory.content) for mid, k in self.written.items() if k.memory.is_latest]
        for inferred in self.inferrer.infer(current):
            verdict = action(Decision("new", None, inferred.confidence, inferred.reason))
            if verdict == "ignore":
                continue
            links = tuple(LinkDraft("DERIVES", support, inferred.confidence, inferred.reason)
                          for support in inferred.supporting_ids)
            draft = MemoryDraft(content=inferred.content, kind="fact", salience=fast_score(inferred.content),
                                confidence=inferred.confidence, metadata={**self.metadata, "derived_by": "llm-infer"})
            memory, created = writes.add(draft, links=links if verdict == "apply" else (),
                                         review=links if verdict == "review" else ())
            if created:
                self.events.append(WriteEvent("ADD", memory.id, review=tuple(
                    link.target_id for link in links) if verdict == "review" else ()))
                self.report.created += 1
                self.report.count_link("DERIVES")

    # ------------------------------------------------------------------ context
    def _context(self, turns: Sequence[TurnView], position: int, relevant: tuple[str, ...] = ()) -> GenerationContext:
        """The turn, with the memories relevant to it first and the newest filling what is left."""
        known = [k.memory.content for k in islice(reversed(self.written.values()), KNOWN_MEMORIES)][::-1]
        if len(known) < KNOWN_MEMORIES:  # a later sync still knows what earlier ones wrote
            earlier = [c for c in self._stored_before() if c not in known]
            known = earlier[len(known) - KNOWN_MEMORIES:] + known
        if relevant:
            known = [*relevant, *(c for c in reversed(known) if c not in relevant)][:KNOWN_MEMORIES]
        return turn_context(turns, position, tuple(known))

    def _relevant(self, turns: Sequence[TurnView], positions: list[int]) -> dict[int, tuple[str, ...]]:
        """For each turn read, the scope's current memories nearest to it (by the mean of the vectors
        of the turn and the one before it, so an answer finds what its question was about), best
        first: stored ones from one vector query for the whole pass, and this generator's earlier
        writes, which the index may not hold yet."""
        if not positions:
            return {}
        embedded = sorted({q for p in positions for q in (p - 1, p) if q >= 0})
        # embedded here, not through the store's vector cache: no later step embeds these texts again
        vectors = dict(zip(embedded, normalize(np.asarray(self.embedder.embed([turns[q].text for q in embedded]),
                                                          dtype=np.float32)), strict=True))
        asked = list(normalize(np.stack([vectors[p] + vectors.get(p - 1, 0.0) for p in positions])))
        stored = self.store.vector_search_many(self.scope, "memories", asked, KNOWN_MEMORIES)
        contents = {mid: m.content for mid, m in self.store.fetch_memories(
            self.scope, list({h.id for hits in stored for h in hits})).items()}
        written = [mid for mid, k in self.written.items() if k.memory.is_latest]
        own = np.stack([self._cache[mid] for mid in written]) @ np.stack(asked).T if written else None
        relevant = {}
        for column, (position, hits) in enumerate(zip(positions, stored, strict=True)):
            scored = {contents[h.id]: h.score for h in hits if h.id in contents}
            for row, mid in enumerate(written):
                text = self.written[mid].memory.content
                scored[text] = max(scored.get(text, -1.0), float(own[row, column]))  # type: ignore[index]
            relevant[position] = tuple(sorted(scored, key=scored.__getitem__, reverse=True)[:KNOWN_MEMORIES])
        return relevant

    def _stored_before(self) -> list[str]:
        """The scope's newest current memories when this generator first looked, oldest first (those
        `resume` found waiting are not before it: they are its own)."""
        if self._known_before is None:
            newest = self.store.list_memories(self.scope, limit=KNOWN_MEMORIES + len(self._unembedded))
            before = [m for m in newest if m.id not in self._unembedded][:KNOWN_MEMORIES]
            self._known_before = [m.content for m in reversed(before)]
        return self._known_before

    # ------------------------------------------------------------------ neighbours and decision
    def _neighbours(self, writes: MemoryWrites, candidate: Candidate,
                    asked_about: frozenset[str] = frozenset()) -> list[Neighbour]:
        bm25 = writes.bm25_search(candidate.content, NEIGHBOURS_PER_SIGNAL)
        key = _key(candidate)
        vector = self._vectors({key: candidate.content})[key]
        dense = writes.vector_search(vector, NEIGHBOURS_PER_SIGNAL)
        ranks = {hit.id: rank for rank, hit in enumerate(bm25, start=1)}
        stored = writes.fetch_memories(list(dict.fromkeys([h.id for h in bm25] + [h.id for h in dense])))
        known = {mid: _Known(m) for mid, m in stored.items() if m.is_latest}
        known.update({mid: self.written[mid] for mid in self._closest_written(vector, asked_about)})
        vectors = self._vectors({mid: k.memory.content for mid, k in known.items()})
        sims = {mid: float(np.dot(vector, vectors[mid])) for mid in known}
        restated = restated_similarity(self.embedder, candidate.content, vector,
                                       {mid: (k.memory.content, sims[mid]) for mid, k in known.items()})
        same = key.removeprefix("candidate:")
        same_turn = set(self._from_turn.get(self._turn_id, ()))  # the clauses of this turn written so far
        return [Neighbour(memory_id=mid, content=k.memory.content, kind=k.memory.kind, entities=k.entities,
                          observed_at=k.memory.observed_at, event_start_at=k.memory.event_start_at,
                          vector_similarity=sims[mid], bm25_rank=ranks.get(mid),
                          same_hash=memory_content_hash(k.memory.content) == same, asked_about=mid in asked_about,
                          speaker=_speaker(k.memory), restated_similarity=restated.get(mid),
                          same_turn=mid in same_turn)
                for mid, k in known.items()]

    def _closest_written(self, vector: np.ndarray, asked_about: frozenset[str]) -> list[str]:
        """This run's current memories the indexes cannot find yet: the nearest by vector, and those
        the turn's question asked about (a long conversation would otherwise be judged whole)."""
        current = [mid for mid, k in self.written.items() if k.memory.is_latest]
        if len(current) > NEIGHBOURS_PER_SIGNAL:
            sims = np.stack([self._cache[mid] for mid in current]) @ vector
            nearest = [current[i] for i in np.argsort(-sims)[:NEIGHBOURS_PER_SIGNAL]]
            current = list(dict.fromkeys([*nearest, *(mid for mid in current if mid in asked_about)]))
        return current

    def _vectors(self, texts: dict[str, str]) -> dict[str, np.ndarray]:
        """Normalised vectors by memory id (or candidate key): each is embedded once per run, the
        missing ones in one model call, through the store's vector cache, so the embedding worker
        reuses a candidate's vector for the memory it becomes."""
        missing = [mid for mid in texts if mid not in self._cache]
        if missing:
            hashes = {mid: memory_content_hash(texts[mid]) for mid in missing}
            known, _ = vectors_by_hash(self.store, self.embedder, {h: texts[mid] for mid, h in hashes.items()})
            self._cache.update(zip(missing, normalize(np.stack([known[hashes[mid]] for mid in missing]))))
        return {mid: self._cache[mid] for mid in texts}

    def _in_place_of_ended(self, candidate: Candidate, decision: Decision, turn_id: str,
                           neighbours: Sequence[Neighbour]) -> Decision:
        """A clause that ends a thing remembers what it replaced; a new statement of the same turn that can
        take its place ("... I'm wearing a Garmin Venu 2 now") replaces that memory too (`replaces`). The
        ended memory may be from an earlier run (a direct `add`): its kind is the neighbour's."""
        if decision.relation == "UPDATES" and decision.target_id and ends_a_thing(candidate.content):
            target = next((n for n in neighbours if n.memory_id == decision.target_id), None)
            if action(decision) == "apply" and target:  # an ending only proposed for review replaces nothing
                self._ended[turn_id] = (target.memory_id, target.kind)
            return decision
        ended = self._ended.get(turn_id)
        # what the turn itself ended outranks a match by restating alone ("the thinkpad's binned, ended up going
        # with a MacBook Air": the MacBook replaces the thinkpad, not what was said of its SSD)
        new = decision.relation == "new" or decision.relation == "UPDATES" and (
            decision.target_id in self._endings or decision.reason.startswith("restated:"))
        if not new or ended is None or not takes_its_place(parse_claim(candidate.content), candidate.kind, ended[1]):
            return decision
        return Decision("UPDATES", ended[0], 0.88, f"replaces: holds now in place of {ended[0]}, which the same turn ended")

    def _asked_about(self, turns: Sequence[TurnView], position: int) -> frozenset[str]:
        """Memories a question right before this turn asked about: the speaker said something, the
        other asked ("Which day?"), the speaker answers. Their answer details what they said, or
        what that detailed."""
        if position < 2:
            return frozenset()
        said, question, turn = turns[position - 2], turns[position - 1], turns[position]
        if question.speaker == turn.speaker or said.speaker != turn.speaker or not asks_for_detail(question.text):
            return frozenset()
        asked = {mid for mid in self._from_turn.get(said.turn_id, ()) if mid in self.written}
        # what they said may be a detail of a topic ("Ben is coming with me" of the trip), and the question
        # about the topic ("Where will you go?"): both are asked about, and classify picks by the vectors
        asked |= {self.written[mid].extends for mid in asked} - {None}  # type: ignore[arg-type]
        return frozenset(mid for mid in asked if mid in self.written and self.written[mid].memory.is_latest)

    def _bridged_to(self, candidate: Candidate, turn_id: str) -> frozenset[str]:
        """The memory the clause before a bridging one gave ("...; the review is July 18": the review of
        what was just said), treated as asked about."""
        said = self._from_turn.get(turn_id, [])
        if "bridging" in candidate.reasons and said and said[-1] in self.written:
            return frozenset(said[-1:])
        return frozenset()

    def _reinforce(self, writes: MemoryWrites, memory_id: str, cited: tuple[str, ...], turn_id: str) -> None:
        """The same thing said again: counted and cited on the memory that holds it (no new memory)."""
        writes.reinforce(memory_id, cited)
        self.events.append(WriteEvent("NONE", memory_id))
        self.report.reinforced += 1
        self._from_turn.setdefault(turn_id, []).append(memory_id)

    def _decide_and_write(self, writes: MemoryWrites, candidate: Candidate, cited: tuple[str, ...],
                          context: GenerationContext, asked_about: frozenset[str]) -> None:
        now, turn_id = context.now, context.turn.turn_id
        self._turn_id = turn_id
        if (past := writes.past_version(candidate.content)) is not None:  # what was true before, said again:
            self._reinforce(writes, past.id, cited, turn_id)  # the old version, in history; the current stays
            return
        speaker = context.turn.speaker
        neighbours, decision = self._neighbours(writes, candidate, asked_about), None
        earlier = [n for n in neighbours if not n.same_turn or self._stated_plainly(n.memory_id)]
        if (moved := moved_by_amount(candidate, earlier, now)) is not None:
            candidate, held = moved  # the thing moved, restated with its new date: it replaces what it was
            neighbours = self._neighbours(writes, candidate, asked_about)  # embeds the restatement
            decision = Decision("UPDATES", held.memory_id, 0.9, f"rescheduled: {held.content} moved by the amount said")
        elif (moved := moved_to_named_day(candidate, earlier, now)) is not None:
            candidate, held = moved  # "so it's Friday the 19th instead": the lone event ahead, on its new day
            neighbours = self._neighbours(writes, candidate, asked_about)
            decision = Decision("UPDATES", held.memory_id, 0.9, f"rescheduled: {held.content} put on the day said")
        elif (moved := moved_to_named_place(candidate, earlier, self._speakers)) is not None:
            candidate, held = moved  # "so I've moved us to Dishoom": the booking that named the old place, at the new
            neighbours = self._neighbours(writes, candidate, asked_about)
            decision = Decision("UPDATES", held.memory_id, 0.9, f"moved: {held.content} to the place said")
        elif (changed := changed_by_difference(candidate, earlier)) is not None:
            candidate, held = changed  # the amount moved by the difference said: it replaces what it was
            neighbours = self._neighbours(writes, candidate, asked_about)
            decision = Decision("UPDATES", held.memory_id, 0.9, f"changed by: {held.content} moved by the difference said")
        elif (found := revalued_memory(candidate, context.memories, speaker)) is not None:
            neighbours = self._neighbours(writes, found[0], asked_about)
            held = next((n for n in neighbours if n.content == found[1]), None)
            if held and (held.speaker or speaker).casefold() == speaker.casefold():  # "mine" is the speaker's
                candidate = replace(found[0], kind=held.kind, event_start_at=held.event_start_at)
                decision = Decision("UPDATES", held.memory_id, 0.9, found[2])
            else:
                neighbours = self._neighbours(writes, candidate, asked_about)
        decision = decision or classify(candidate.content, candidate.kind, candidate.entities, neighbours, now=now,
                                        speaker=speaker)
        if decision.relation == "UPDATES" and decision.reason.startswith(("value:", "change-marker:")) and \
                (held := next((n for n in neighbours if n.memory_id == decision.target_id), None)) and \
                (restated := restated_with_value(candidate, held) or with_held_subject(candidate, held)):
            candidate = restated  # "they've bumped me to Thursday", "upped my dose to 20mg": the memory, restated
            neighbours = self._neighbours(writes, candidate, asked_about)
        decision = self._in_place_of_ended(candidate, decision, turn_id, neighbours)
        verdict = action(decision)
        if decision.relation == "duplicate" and verdict == "apply" and decision.target_id:
            self._reinforce(writes, decision.target_id, cited, turn_id)
            return
        link = _link(decision)
        links = (link,) if link and verdict == "apply" else ()
        review = (link,) if link and verdict == "review" else ()
        if decision.relation == "new":  # the same owner and subject, a change the rules cannot classify
            links, review = may_update_links(candidate.content, neighbours, now, self.judge)
        elif link is not None and link.type == "UPDATES" and verdict == "review":  # a change the rules doubt
            links = (may_update(link),)
        elif link is not None and link.type == "UPDATES" and verdict == "apply" and \
                (replaced := next((n for n in neighbours if n.memory_id == link.target_id), None)):
            restating, review = extensions_replaced(replaced, self._extending(replaced.memory_id), neighbours)
            links += restating
        draft = candidate_draft(candidate, cited, self._turns, turn_id, self._speakers)
        memory, created = self._write(writes, draft, _key(candidate), candidate.entities, links, review, turn_id)
        if (self._ended.get(turn_id) or ("",))[0] == decision.target_id and ends_a_thing(candidate.content):
            self._endings.add(memory.id)
        replaced = next((applied.target_id for applied in links if applied.type == "UPDATES"), None)
        if created and replaced is not None:
            self._keep_unchanged(writes, replaced, candidate, neighbours, turn_id)

    def _write(self, writes: MemoryWrites, draft: MemoryDraft, key: str, entities: tuple[str, ...],
               links: tuple[LinkDraft, ...], review: tuple[LinkDraft, ...], turn_id: str) -> tuple[MemoryItem, bool]:
        """`draft` written with its links (vector `key` of this run's cache), or the held memory of the same
        content reinforced (an exact repeat the hash caught); the memory and whether it is new."""
        if self.metadata:
            draft = replace(draft, metadata={**self.metadata, **draft.metadata})
        memory, created = writes.add(draft, links=links, review=review,
                                     vector=self._cache[key] if self.with_vectors else None)
        if not created:
            self._reinforce(writes, memory.id, draft.derived_from, turn_id)
            return memory, False
        self._from_turn.setdefault(turn_id, []).append(memory.id)
        replaced = next((applied.target_id for applied in links if applied.type == "UPDATES"), None)
        self.events.append(WriteEvent("UPDATE" if replaced else "ADD", memory.id, replaced,
                                      tuple(link.target_id for link in review)))
        self.report.created += 1
        self.report.reviews += len(review)
        for applied in links:
            self.report.count_link(applied.type)
            if applied.type == "UPDATES" and applied.target_id in self.written:
                old = self.written[applied.target_id]
                old.memory = old.memory.model_copy(update={"is_latest": False})
        extended = next((applied.target_id for applied in links if applied.type == "EXTENDS"), None)
        self.written[memory.id] = _Known(memory, entities, extended, replaced)
        self._cache[memory.id] = self._cache[key]  # the draft's text is the memory's
        self._cited[memory.id] = tuple(draft.derived_from)
        return memory, True

    def _extending(self, memory_id: str) -> set[str]:
        """The current memories that EXTEND `memory_id`: written by this run, or stored."""
        stored = {src for src, dst, _ in self.store.linked_memories(self.scope, [memory_id], ("EXTENDS",))
                  if dst == memory_id}
        return stored | {mid for mid, known in self.written.items() if known.extends == memory_id}

    def _stated_plainly(self, memory_id: str) -> bool:
        """Whether a memory of this run holds a value its turn stated, not one it moved or replaced: a later
        clause of one turn may move the first ("on June 14. Actually they pulled it in to June 7"), once."""
        return memory_id in self.written and self.written[memory_id].updates is None

    def _keep_unchanged(self, writes: MemoryWrites, replaced: str, candidate: Candidate,
                        neighbours: Sequence[Neighbour], turn_id: str) -> None:
        """The facts of the replaced memory that the change leaves (`versions.unchanged_facts`) stay current as
        a new version of it, with its kind, times and sources: a move keeps the job."""
        held = next((n for n in neighbours if n.memory_id == replaced), None)
        parts = facts(held.content) if held else []
        if held is None or len(parts) < 2:
            return
        vectors = self._vectors({f"fact:{p}": p for p in parts})
        vector = self._cache[_key(candidate)]
        kept = unchanged_facts(candidate.content, held.content,
                               {p: float(vectors[f"fact:{p}"] @ vector) for p in parts})
        old = self.written[replaced].memory if replaced in self.written else \
            self.store.fetch_memories(self.scope, [replaced], include_history=True).get(replaced)
        if not kept or old is None:
            return
        sources = self._cited.get(replaced) or tuple(dst for src, dst, _ in self.store.linked_memories(
            self.scope, [replaced], ("EXTRACTED_FROM",)) if src == replaced)
        draft = kept_version(old, kept, sources, self._speakers)
        key = _key(replace(candidate, content=draft.content))
        self._vectors({key: draft.content})
        link = LinkDraft("UPDATES", replaced, 0.9, f"kept: the facts of {replaced} that {candidate.content!r} leaves")
        self._write(writes, draft, key, tuple(draft.metadata["entities"]), (link,), (), turn_id)


def _key(candidate: Candidate) -> str:
    return "candidate:" + memory_content_hash(candidate.content)


def _speaker(memory: MemoryItem) -> str | None:
    """Who said what the memory was read from (the first source turn), when it came from a conversation."""
    turns = memory.metadata.get("source_turns") or []
    return turns[0].get("speaker") if turns else None


def _link(decision: Decision) -> LinkDraft | None:
    if decision.relation == "new" or decision.target_id is None:
        return None
    kind = "DUPLICATE_OF" if decision.relation == "duplicate" else decision.relation
    return LinkDraft(kind, decision.target_id, decision.confidence, decision.reason)
