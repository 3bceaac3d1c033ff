"""Date families: when a recovery ends, a document that expires before a dated trip, a runtime that
reaches end of life while a service still runs on it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemoflow.memory.english.temporal import day_text
from mnemoflow.memory.generate.inference.common import (
    _NAME,
    Derived,
    _add,
    _days,
    _full_dates,
    _month_text,
    _number,
    _states,
)

_EVENT = re.compile(rf"^(?P<o>{_NAME})'s (?P<event>[a-z][a-z -]*?) (?:is|was)(?: scheduled| planned)? (?:on|for) ")
_RECOVERY = re.compile(
    rf"^(?P<o>{_NAME})'s recovery(?: from (?:(?:her|his|their|the) )?(?P<event>[a-z][a-z -]*?))? "
    r"(?:takes|will take|should take|lasts) (?P<approx>(?:about|around|roughly|approximately) )?"
    r"(?P<n>\d+|[a-z]+) (?P<unit>days?|weeks?|months?)\b")


# a small stated list of medical procedures a recovery follows
_PROCEDURE = re.compile(r"\b(?:surgery|operation|procedure|transplant|replacement|implant|extraction|c-section)$")


def recovery(items: Sequence[tuple[str, str]]) -> list[Derived]:
    events = []
    for mid, text in items:
        m = _EVENT.match(text)
        if m:
            dates = _days(text)
            if len(dates) == 1:
                events.append((m.group("o"), m.group("event"), dates[0], mid))
    out = []
    for mid, text in items:
        m = _RECOVERY.match(text)
        n = _number(m.group("n")) if m else None
        if not m or n is None:
            continue
        # "Marta's recovery takes six weeks" names no event: it is from the owner's one dated procedure
        procedures = [e for e in events if e[0] == m.group("o") and _PROCEDURE.search(e[1])]
        for owner, event, start, eid in events:
            if owner != m.group("o") or (event != m.group("event") if m.group("event") else
                                         len(procedures) != 1 or procedures[0][3] != eid):
                continue
            end = _add(start, n, m.group("unit"))
            if m.group("approx"):
                part = "early" if end.day <= 10 else "mid" if end.day <= 20 else "late"
                when, conf = f"around {part} {_month_text(end)}", 0.85
            else:
                when, conf = f"by {day_text(end)}", 0.9
            if _states(items, owner, "recover", _month_text(end)):
                continue
            out.append(Derived(f"{owner} should be recovered from the {event} {when}", "fact", conf, (eid, mid),
                               "date-plus-duration",
                               f"{event} on {day_text(start)} + {n} {m.group('unit')} = {day_text(end)}"))
    return out


_DOCUMENT = re.compile(
    rf"^(?P<o>{_NAME})'s (?P<doc>passport|visa|ID card|identity card|residence permit) expires on ")
_TRAVEL = re.compile(r"\b(?:flies|fly|flying|flight|travels|travelling|traveling|trip|vacation|holiday)\b", re.I)


def expiry(items: Sequence[tuple[str, str]]) -> list[Derived]:
    out = []
    for did, text in items:
        m = _DOCUMENT.match(text)
        if not m:
            continue
        expiry = _days(text)
        if len(expiry) != 1:
            continue
        owner, doc = m.group("o"), m.group("doc")
        for tid, trip in items:
            if tid == did or not (trip.startswith(owner + " ") or trip.startswith(owner + "'s ")):
                continue
            if not _TRAVEL.search(trip) or re.search(rf"\b{doc}\b", trip, re.I):
                continue
            when = [v for v in _full_dates(trip) if v.year and v.month]
            if len(when) != 1:
                continue
            w = when[0]
            after = (w.year, w.month, w.day or 32) > (expiry[0].year, expiry[0].month, expiry[0].day)
            if not after:
                continue
            event = trip[0].lower() + trip[1:] if not trip.startswith(owner) else trip
            out.append(Derived(f"{owner}'s {doc} will have expired before {event}, so {owner} needs to renew it",
                               "fact", 0.9, (tid, did), "expires-before-event",
                               f"{doc} expires {day_text(expiry[0])}, before the trip"))
    return out


