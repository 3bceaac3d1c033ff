"""Reschedules told as an amount: "pushed the install back a week", "postponed by two days", "we're going
two days earlier". No date is named, so the new date is the old one moved by the amount: the caller
finds the memory that held the old date and restates it with the new one (`rescheduled`).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from mnemoflow.memory.english.lexicon import MONTHS, NUMBERS_TO_TWELVE, WEEKDAYS
from mnemoflow.memory.english.temporal import day_text

_AMOUNT = r"(?P<n>\d{1,2}|an?|" + "|".join(NUMBERS_TO_TWELVE) + r")\s+(?P<unit>day|week)s?"
_LATER_VERB = r"(?:push|postpon|delay|put(?:ting)? off|bump|mov|shift|slip|reschedul)\w*"
_EARLIER_VERB = r"(?:br(?:ing|ought|ings) (?:\w+ ){0,3}?forward|pull(?:s|ed|ing)? (?:\w+ ){0,3}?(?:in|forward|ahead))"
# a verb of moving, then within a few words the amount ("pushed the install back a week", "postponed by a
# week"); or the amount with its direction ("two days earlier", "a week later")
_BY_VERB = re.compile(rf"\b(?P<verb>{_LATER_VERB}|{_EARLIER_VERB})\b(?:\s+[\w']+){{0,4}}?\s+(?:(?P<dir>back|forward|up|"
                      rf"out)\s+)?(?:by\s+)?{_AMOUNT}\b(?!\s+(?:before|after|ago|a|an|per|every|of)\b)", re.IGNORECASE)
_WITH_DIRECTION = re.compile(rf"\b{_AMOUNT}\s+(?P<dir>later|earlier|sooner|early|late)\b", re.IGNORECASE)
_EARLIER = frozenset({"forward", "up", "earlier", "sooner", "early"})
_DATE = re.compile(rf"(?:(?:{'|'.join(WEEKDAYS)}),?\s+)?(?P<date>(?:{'|'.join(MONTHS)}) \d{{1,2}}, \d{{4}})",
                   re.IGNORECASE)


def find_shift(text: str) -> timedelta | None:
    """How far `text` says something was moved, later (positive) or earlier (negative); None when it
    names no amount."""
    m = _WITH_DIRECTION.search(text) or _BY_VERB.search(text)
    if m is None:
        return None
    n = m["n"].lower()
    days = (int(n) if n.isdigit() else NUMBERS_TO_TWELVE.get(n, 1)) * (7 if m["unit"].lower() == "week" else 1)
    verb = m.groupdict().get("verb") or ""
    earlier = (m["dir"] or "").lower() in _EARLIER or verb.lower().startswith(("br", "pull"))
    return timedelta(days=-days if earlier else days)


_CLAUSE_START = re.compile(r"(?:[,;]\s+|\s+(?:so|and|but|because)\s+)")


def shifted_clause(text: str) -> str:
    """The clause of `text` that says the move ("the worktops are delayed so they've pushed the install back a
    week" -> "they've pushed the install back a week"), for the caller to read what was moved."""
    m = _WITH_DIRECTION.search(text) or _BY_VERB.search(text)
    if m is None:
        return text
    starts = [b.end() for b in _CLAUSE_START.finditer(text, 0, m.start())]
    return text[starts[-1]:] if starts else text


def rescheduled(content: str, old_start: datetime, shift: timedelta) -> tuple[str, datetime] | None:
    """`content` (a memory dated `old_start`) with its date moved by `shift`, and the new start; None when
    the content does not write the date the way memories do ("March 12, 2024"), so it cannot be moved."""
    new_start = old_start + shift
    for m in _DATE.finditer(content):
        if m["date"] == day_text(old_start.date()):
            return content[:m.start()] + day_text(new_start.date()) + content[m.end():], new_start
    return None
