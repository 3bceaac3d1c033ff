"""The place a question about going leaves to the conversation before: "When are you going?" / "Next April",
with the trip named earlier ("I'm planning a trip to Japan"), is "Alex is going to Japan in April".
`destination` finds the place, `is_going_without_place` says a statement needs it, `with_destination`
puts it after the verb of going."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mnemoflow.memory.english.lexicon import MONTHS, WEEKDAYS

_GOING = re.compile(r"\b(?:go|goes|going|went|come|comes|coming|came|travel(?:s|ing|ling|ed|led)?|fly|flies|"
                    r"flying|flew|head(?:s|ing|ed)?)\b(?!\s+to\s+[a-z])", re.I)  # not "going to start"
_DESTINATION = re.compile(r"\b(?:go(?:es|ing)?|went|com(?:e|es|ing)|came|travel\w*|fl(?:y|ies|ying|ew)|head\w*|trip|"
                          r"flight|moving|move|visit(?:ing)?)\b[^.?!;]*?\bto\s+(?P<place>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)")
_HAS_PLACE = re.compile(r"\b(?:to|into|in|at|from)\s+(?!(?i:" + "|".join(MONTHS + WEEKDAYS) + r")\b)[A-Z]|"
                        r"\b(?:home|abroad|there|here|back|overseas)\b")  # "in April" is when, not where


def destination(texts: Iterable[str], people: Iterable[str] = ()) -> str | None:
    """Where the conversation said someone is going, newest first: "Japan" in "When are you going to
    Japan?" or "I'm planning a trip to Japan". None when no trip names a place (a person is not one)."""
    names = set(people)
    for text in texts:
        places = [m["place"] for m in _DESTINATION.finditer(text) if m["place"] not in names]
        if places:
            return places[-1]
    return None


def is_going_without_place(text: str) -> bool:
    """Whether `text` says someone goes or comes without saying where: "Ben is coming with me"."""
    return bool(_GOING.search(text)) and not _HAS_PLACE.search(text)


def with_destination(statement: str, place: str) -> str:
    """`place` put after the verb of going: "Ben is coming with Alex" -> "Ben is coming to Japan with Alex"."""
    return _GOING.sub(lambda m: f"{m.group()} to {place}", statement, count=1)
