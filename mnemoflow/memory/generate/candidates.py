"""What a generation engine sees and what it proposes: the contract between the LLM engine, the
rule-based engine, and the relationship step that decides what a candidate does to the store.

Event time (when something happens in the world: `event_start_at`, `temporal_text`) is kept apart
from lifecycle time (when the store learnt it: `observed_at`, later valid_from/valid_to).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal, Protocol

from mnemoflow.memory.english.sentences import written_out
from mnemoflow.models import MemoryKind


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
