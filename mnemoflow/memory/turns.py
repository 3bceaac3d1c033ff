"""What generation reads a turn with: its context (the turn answered, a bounded window, what the scope
knows) and whether a question asks about what was just said."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.english.sentences import strip_padding
from mnemoflow.memory.generate.candidates import GenerationContext, TurnView
from mnemoflow.timeutil import utcnow

WINDOW_TURNS = 6  # recent turns an engine may read for an elliptic question's topic


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
