"""What a generation engine sees and what it proposes: the contract between the LLM engine, the
rule-based engine, and the relationship step that decides what a candidate does to the store.

Event time (when something happens in the world: `event_start_at`, `temporal_text`) is kept apart
from lifecycle time (when the store learnt it: `observed_at`, later valid_from/valid_to).
"""

from __future__ import annotations

import re

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal, Protocol

from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.english.sentences import strip_padding, written_out
from mnemoflow.memory.relate.entities import typed_entities
from mnemoflow.memory.relate.triples import categories_of, relation_triples
from mnemoflow.models import MemoryDraft, MemoryItem, MemoryKind, RelationDraft
from mnemoflow.timeutil import utcnow

WINDOW_TURNS = 6  # recent turns an engine may read for an elliptic question's topic


@dataclass(frozen=True)
class TurnView:
    """One conversation turn as generation reads it."""

    turn_id: str
    session_id: str
    speaker: str
    text: str
    ts: datetime | None = None
    role: str | None = None  # user / assistant / other


@dataclass(frozen=True)
class GenerationContext:
    """Everything a decision about one turn may use.

    `previous` is the latest earlier turn by another speaker (the question a short answer
    answers); `window` the bounded recent turns before this one, oldest first; `memories` and
    `entities` what the scope already knows (recalled for this turn); `now` the turn's own time
    for historical data, so "next April" resolves against when it was said."""

    turn: TurnView
    now: datetime
    previous: TurnView | None = None
    window: tuple[TurnView, ...] = ()
    memories: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()

    def written_out(self) -> GenerationContext:
        """This context with every turn's chat spellings written out ("my bro", "im"), so the rules that read
        the turns before this one (who "he" is, what a question asked) see the words they know."""
        def out(turn: TurnView) -> TurnView:
            return replace(turn, text=written_out(turn.text))
        return replace(self, turn=out(self.turn), previous=self.previous and out(self.previous),
                       window=tuple(out(t) for t in self.window))


@dataclass(frozen=True)
class Candidate:
    """A proposed memory: self-contained, entity-centric content ("Alex prefers morning meetings")."""

    should_store: bool
    content: str
    kind: MemoryKind
    confidence: float  # how sure the engine is that this is right, in [0, 1]
    salience: float  # how much it matters, in [0, 1]
    source_turn_ids: tuple[str, ...]
    entities: tuple[str, ...] = ()
    observed_at: datetime | None = None
    event_start_at: datetime | None = None
    event_end_at: datetime | None = None
    temporal_text: str | None = None  # the words that gave the event time ("next April")
    reasons: tuple[str, ...] = field(default=())  # which rules or prompt fields produced it
    rule: dict[str, list[str]] | None = field(default=None, hash=False, compare=False)  # a rule's slots (LLM)


MemoryContext = Literal["relevant", "newest"]


class GenerationEngine(Protocol):
    """An engine proposes zero or more candidates per turn; it never writes. `memory_context` says
    which of the scope's memories a turn is drafted with: the most relevant to it (a model that reads
    them; finding them costs a vector per turn) or the newest (the rules read them only for names)."""

    name: str
    memory_context: MemoryContext

    def generate(self, context: GenerationContext) -> list[Candidate]: ...

    def close(self) -> None:
        """Release what the engine holds (an HTTP client); the caller is done with it."""
        ...


def turn_context(turns: Sequence[TurnView], position: int, known: tuple[str, ...] = ()) -> GenerationContext:
    """What an engine sees of one turn: the latest earlier turn by another speaker, a bounded window,
    what the scope knows (its memories and the names they hold), and the turn's own time as "now"."""
    turn = turns[position]
    earlier = turns[max(0, position - WINDOW_TURNS):position]
    previous = next((t for t in reversed(turns[:position]) if t.speaker != turn.speaker), None)
    named = tuple(dict.fromkeys(name for text in known for name in find_entities(text)))  # "Lisbon's off": a name
    return GenerationContext(turn=turn, now=turn.ts or utcnow(), previous=previous, window=tuple(earlier),
                             memories=known, entities=named)


_DETAIL_QUESTION_RE = re.compile(r"^(?:when|which|where|how(?! are| is it going| have you been)|do you have|did you|"
                                 r"is it|are they|will it|can you tell|(?:is|was) (?:that|this)|are (?:those|these))\b", re.I)
_NEW_TOPIC_RE = re.compile(r"^(?:and\s+)?(?:any|anything|what(?:'s| is)? (?:next|else)|what are you)\b", re.I)


def asks_for_detail(text: str) -> bool:
    """A question about what was just said ("Which day?", "How often are the sessions?", "Self-taught?"),
    not one that opens a new topic ("What's next?", "Any allergies?", "Who is on your committee?")."""
    asked = [s.strip() for s in re.findall(r"[^.!?]*\?", text)]
    if not asked:
        return False
    question = strip_padding(asked[-1])  # "Sure, how many nights?" asks "how many nights?"
    if _NEW_TOPIC_RE.match(question):
        return False
    return bool(_DETAIL_QUESTION_RE.match(question)) or len(question.split()) <= 3


def speaker_of(memory: MemoryItem) -> str | None:
    """Who said what the memory was read from (the first source turn), when it came from a conversation."""
    turns = memory.metadata.get("source_turns") or []
    return turns[0].get("speaker") if turns else None


def memory_draft(candidate: Candidate, cited: tuple[str, ...], turns: dict[str, TurnView], said_in: str,
           speakers: tuple[str, ...]) -> MemoryDraft:
    """`source_turns` lets recall cite a memory the way it cites a conversation chunk: session,
    turn, speaker and time of each turn it was read from, the turn that said it first (then the
    question it answers)."""
    order = sorted(candidate.source_turn_ids, key=lambda i: i != said_in)
    sources = [{"session_id": t.session_id, "turn_id": t.turn_id, "speaker": t.speaker,
                "ts": t.ts.isoformat() if t.ts else None}
               for t in (turns.get(i) for i in order) if t is not None]
    entities = tuple(typed_entities(candidate.content, candidate.entities, speakers=speakers))
    return MemoryDraft(
        content=candidate.content, kind=candidate.kind, salience=candidate.salience, confidence=candidate.confidence,
        observed_at=candidate.observed_at, event_start_at=candidate.event_start_at,
        event_end_at=candidate.event_end_at, temporal_text=candidate.temporal_text,
        metadata={"entities": list(candidate.entities), "source_turn_ids": list(candidate.source_turn_ids),
                  "source_turns": sources, "why": list(candidate.reasons),
                  **({"rule": candidate.rule} if candidate.rule else {})},
        derived_from=cited, entities=entities,
        relations=tuple(RelationDraft(*t) for t in relation_triples(candidate.content, entities)),
        categories=tuple(categories_of(candidate.content, candidate.kind)),
    )
