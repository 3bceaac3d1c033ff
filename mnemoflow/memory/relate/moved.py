"""Values a turn moves without naming the new one in full: a date moved by an amount ("pushed the install
back a week", `shifts`), an amount changed by a difference ("put the gym up by a fiver", `deltas`), a new value
said with no subject of its own ("mine's 5518 now", `revalue`), a day that names no event ("so it's Friday
instead"), a change that names nothing of what changed ("they've upped my dose to 20mg"). Each becomes the
memory that held the old value, restated with the new one, and the pipeline lets it replace that memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta

from mnemoflow.memory.english.deltas import (
    find_count_difference,
    find_difference,
    written_like,
)
from mnemoflow.memory.english.lexicon import MONTHS, WEEKDAYS
from mnemoflow.memory.english.shifts import find_shift, rescheduled, shifted_clause
from mnemoflow.memory.generate.candidates import Candidate
from mnemoflow.memory.relate.claim_values import Value
from mnemoflow.memory.relate.claim_words import MEASURE_UNITS, STOPWORDS, stem
from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.relations import Neighbour
from mnemoflow.memory.relate.restate import RESTATE_FROM
from mnemoflow.memory.relate.revalue import new_value, revalued
from mnemoflow.timeutil import aware_utc

__all__ = ["changed_by_difference", "moved_by_amount", "moved_to_named_day", "moved_to_named_place", "restated_with_value",
           "revalued_memory", "with_count_difference", "with_difference", "with_held_subject"]


def _ahead(neighbours: Sequence[Neighbour], now: datetime) -> tuple[list[Neighbour], list[Neighbour]]:
    """The neighbours that are events still ahead, and those of them at least `RESTATE_FROM` near, nearest
    first: the things a reschedule that names none can be about."""
    ahead = [n for n in neighbours if n.event_start_at and aware_utc(n.event_start_at) >= aware_utc(now)]
    return ahead, sorted((n for n in ahead if (n.vector_similarity or 0.0) >= RESTATE_FROM),
                         key=lambda n: -(n.vector_similarity or 0.0))


def _rescheduled(candidate: Candidate, held: Neighbour, shift: timedelta) -> Candidate | None:
    """The candidate as `held` restated with its date moved by `shift`; None when the date cannot be moved."""
    moved = rescheduled(held.content, held.event_start_at, shift) if shift else None  # type: ignore[arg-type]
    return replace(candidate, content=moved[0], kind=held.kind, event_start_at=moved[1], event_end_at=None,
                   reasons=(*candidate.reasons, "rescheduled")) if moved else None


def moved_by_amount(candidate: Candidate, neighbours: Sequence[Neighbour],
                     now: datetime) -> tuple[Candidate, Neighbour] | None:
    """"They pushed the install back a week": no date is named, so the candidate becomes the memory of the
    thing moved, restated with its date moved by the amount, and replaces it: returned with that memory. The
    thing is the nearest memory of an event still ahead (at least `RESTATE_FROM` near), or the only one
    among the neighbours: "the install" rarely shares words with "the fitters put the kitchen in". None
    when the candidate names a date or no amount."""
    shift = find_shift(candidate.content) if candidate.event_start_at is None else None
    if shift is None:
        return None
    ahead, near = _ahead(neighbours, now)
    said = parse_claim(shifted_clause(candidate.content))
    # the lone event ahead is the thing moved unless the candidate names another ("all the comms shift a
    # week earlier" moves the comms, not the launch they are planned around)
    pronoun = said.subject is None or said.subject.split("'")[0] in STOPWORDS  # "they've pushed the install back"
    lone = [n for n in ahead if pronoun or said.subject in said.names
            or said.subject in parse_claim(n.content).anchors] if len(ahead) == 1 else []
    for neighbour in near or lone:
        if moved := _rescheduled(candidate, neighbour, shift):
            return moved, neighbour
    return None


_CLAUSES = re.compile(r",\s+(?!\d{4}\b)(?:so\s+|and\s+|but\s+)?|;\s+|\s+so\s+(?=it|we|they)")


_IT_IS_NOW = re.compile(r"^(?:so\s+)?it(?:'s|\s+is)\s+.*?\bnow\b", re.I)  # "it's tuesday the 11th now"


def moved_to_named_day(candidate: Candidate, neighbours: Sequence[Neighbour],
                       now: datetime) -> tuple[Candidate, Neighbour] | None:
    """"Can't do the 18th now, so it's Friday September 19 instead", "it's tuesday the 11th now": a strong change
    (or "it's ... now") that puts "it" on a day names no thing, so the thing is the lone event still ahead
    among the neighbours (or the nearest, at least `RESTATE_FROM` near), restated on that day; returned with
    that memory. The changed clause is the last that names a day ("..., so the glazing moves up a week too" is
    another's). None when that clause has a subject of its own or no one day."""
    changes = [claim for c in _CLAUSES.split(candidate.content)
               if (claim := parse_claim(c)).change == "strong" or _IT_IS_NOW.match(c)]
    said = next((c for c in reversed(changes) if any(v.type == "date" for v in c.values)), None)  # the change to a day
    days = [v.key for v in said.values if v.type == "date"] if said else []
    if said is None or len(days) != 1 or not all(isinstance(getattr(days[0], f), int) for f in ("year", "month", "day")):
        return None
    if said.subject and said.subject.split("'")[0] not in STOPWORDS | _CALENDAR:
        return None  # "the comms move to Friday": the comms, not the event
    new_day = date(days[0].year, days[0].month, days[0].day)  # type: ignore[attr-defined]
    ahead, near = _ahead(neighbours, now)
    said_words = {stem(w) for w in re.findall(r"[a-z]+", (said.change_text or "").lower())[:1]}  # the verb
    for neighbour in (ahead if len(ahead) == 1 else near)[:1]:
        if _what_is_on(said.text) - said_words - _what_is_on(neighbour.content):
            return None  # "we're going to the cinema on Friday instead" names its own thing
        shift = new_day - aware_utc(neighbour.event_start_at).date()  # type: ignore[arg-type]
        if moved := _rescheduled(candidate, neighbour, shift):
            return moved, neighbour
    return None


# "so I've moved us to Dishoom King's Cross": a place moved to, by its name
_TO_PLACE = re.compile(r"\b(?:mov|relocat|shift)\w*\s+(?:[\w']+\s+){0,2}?to\s+(?P<place>[A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*)*)")


def moved_to_named_place(candidate: Candidate, neighbours: Sequence[Neighbour],
                         people: Sequence[str]) -> tuple[Candidate, Neighbour] | None:
    """"Ottolenghi couldn't do step-free, so I've moved us to Dishoom": the memory that named the old place
    (said again in the candidate, and no one of `people`) is restated at the new one, and replaces it;
    returned with that memory. None when the candidate moves nothing to a named place, or names no place a
    memory held."""
    if candidate.event_start_at is not None or not (to := _TO_PLACE.search(candidate.content)):
        return None
    said = {n.split()[0] for n in parse_claim(candidate.content).names}  # "Ottolenghi" of "Ottolenghi Spitalfields"
    persons = {p.lower() for p in people}
    for neighbour in neighbours:
        held = [v.text for v in parse_claim(neighbour.content).all_values if v.type == "name"
                and str(v.key).split()[0] in said and str(v.key) not in persons
                and str(v.key).split()[0] not in persons and to["place"].lower() not in str(v.key)]
        if len(held) == 1 and neighbour.content.count(held[0]) == 1:
            content = neighbour.content.replace(held[0], to["place"])
            return replace(candidate, content=content, kind=neighbour.kind, event_start_at=neighbour.event_start_at,
                           reasons=(*candidate.reasons, "moved to a place")), neighbour
    return None


def restated_with_value(candidate: Candidate, held: Neighbour) -> Candidate | None:
    """"The surgery rang, they've bumped me to Thursday the 13th" replaces "Mairead's dentist is on Tuesday
    March 11" but names nothing of what was moved, nor does "they've upped my dose to 20mg" name the
    citalopram: the candidate becomes that memory restated with the new date or amount, so the current memory
    says what is on that day, or of what there is that much. None when the candidate names all the memory
    named (it says what changed itself), names someone or something the memory does not (it is about that),
    or holds no such value: "moved me to spot 17" replacing "Ines parks her bike at Kade station, spot 12" is
    restated, or the bike and the station would be lost."""
    if _what_is_on(held.content) <= _what_is_on(candidate.content) or \
            _names(candidate.content, after_first=True) - _names(held.content):
        return None
    if candidate.event_start_at is not None and held.event_start_at is not None:
        if candidate.observed_at and aware_utc(candidate.event_start_at).date() < aware_utc(candidate.observed_at).date():
            return None  # "moved it to the wiki last month": nothing is moved into the past
        shift = aware_utc(candidate.event_start_at).date() - aware_utc(held.event_start_at).date()
        return _rescheduled(candidate, held, shift)
    amounts = [v for v in parse_claim(candidate.content).values if v.type in ("quantity", "money", "percent")]
    if len(amounts) != 1 or not re.search(rf"\bto\s+(?:[a-z]+\s+)?{re.escape(amounts[0].text)}", candidate.content):
        return None  # only an amount set "to" a new one ("to 20mg", "to spot 17")
    found = revalued(held.content, amounts[0])
    return replace(candidate, content=found[0], kind=held.kind, reasons=(*candidate.reasons, "revalued")) if found else None


_ONE_WORD_SUBJECT = re.compile(r"^(?P<word>[A-Za-z][a-z]+)\s+(?=(?:has|have|is|are|was|were|got|moved|relocated)\b)")


def with_held_subject(candidate: Candidate, held: Neighbour) -> Candidate | None:
    """"Chess has relocated to the library" replacing "Chidi's chess club meets at the Red Lion": the bare
    subject is said as the memory it replaces said it ("Chidi's chess club"), so the new memory stands
    alone. None when the candidate's subject is more than one plain word or the memory's is not owned."""
    bare = _ONE_WORD_SUBJECT.match(candidate.content)
    if bare is None or bare["word"].lower() in STOPWORDS:
        return None
    owned = re.match(rf"^(?P<phrase>[A-Z][\w-]*'s\s+(?:[\w-]+\s+){{0,2}}?{bare['word'].lower()})(?:\s+(?P<noun>[a-z]+))?\s",
                     held.content)
    if owned is None:
        return None
    noun = f" {owned['noun']}" if owned["noun"] and not owned["noun"].endswith("s") else ""  # "Omar's choir rehearses"
    return replace(candidate, content=owned["phrase"] + noun + candidate.content[bare.end("word"):],
                   reasons=(*candidate.reasons, "subject as held"))


def revalued_memory(candidate: Candidate, known: Sequence[str], speaker: str) -> tuple[Candidate, str, str] | None:
    """"Mine's 5518 now", "we're at 120 now": a new value that names no subject becomes the memory, among
    those the turn was drafted with (most relevant first), that holds the one value of its kind, restated
    with the new one (`revalue`); with that memory's text, so the caller can find it, and the reason."""
    value = new_value(claim := parse_claim(candidate.content), speaker)
    if value is None:
        return None
    for text in known:
        if found := revalued(text, value):
            reason = f"revalued: {found[1]} -> {value.text}, said with '{claim.change_text}' and no subject of its own"
            return replace(candidate, content=found[0], reasons=(*candidate.reasons, "revalued")), text, reason
    return None


# "from March 2027": when the new amount starts, carried onto the restated memory
_FROM_MONTH = re.compile(rf"\b(?:from|in|starting|as of)\s+(?P<when>(?:{'|'.join(MONTHS)})\s+\d{{4}})", re.I)


def changed_by_difference(candidate: Candidate, neighbours: Sequence[Neighbour]) -> tuple[Candidate, Neighbour] | None:
    """"They've put the gym up by a fiver from March": no amount is named, so the candidate becomes the memory
    that held the old amount, restated with it moved by the difference, and replaces it: returned with that
    memory. The memory is one holding a single amount that shares a topic with the candidate ("gym"), else
    the nearest such (at least `RESTATE_FROM`), else the only one among the neighbours."""
    found = find_difference(candidate.content)
    count = find_count_difference(candidate.content) if found is None else None  # it reads no money itself
    if found is None and count is None:
        return None
    said = parse_claim(candidate.content)
    topic = said.stems - {said.subject} - STOPWORDS
    holding = [(n, text) for n in neighbours
               if (text := with_difference(n.content, *found) if found else with_count_difference(n.content, *count))]
    if found and any(_new_amount_said(candidate.content, found[0], n.content) for n, _ in holding):
        return None  # the amount may be the new one of that memory: read as said
    named = [(n, t) for n, t in holding if topic & _topic(n.content)]
    near = [(n, t) for n, t in holding if (n.vector_similarity or 0.0) >= RESTATE_FROM]
    pool = named or near or (holding if len(holding) == 1 else [])
    if not pool:
        return None
    neighbour, text = max(pool, key=lambda pair: pair[0].vector_similarity or 0.0)
    if (since := _FROM_MONTH.search(candidate.content)) and since["when"].lower() not in text.lower():
        text = f"{text} from {since['when']}"
    return replace(candidate, content=text, kind=neighbour.kind, reasons=(*candidate.reasons, "changed by")), neighbour


def _new_amount_said(content: str, difference: float, held: str) -> bool:
    """"put the rent up £1,240 from July" of a rent of £1,150: an amount said after "up" with no "by" that is
    as large as the held amount itself is the new amount, not what was added to it."""
    if re.search(r"\b(?:up|down)\s+by\b", content, re.I):
        return False
    amounts = [v.key[1] for v in parse_claim(held).all_values if v.type == "money"]  # type: ignore[index]
    return len(amounts) == 1 and abs(difference) >= amounts[0]


def with_count_difference(content: str, difference: float, unit: str) -> str | None:
    """`content` with its one count of `unit` moved by `difference` ("12 units" and +2 -> "14 units"); None when
    it holds no such count, several, or one that would go below zero."""
    counts = [v for v in parse_claim(content).all_values if v.type == "quantity" and v.unit == stem(unit)]
    if len(counts) != 1 or counts[0].key + difference < 0:  # type: ignore[operator]
        return None
    value = counts[0].key + difference  # type: ignore[operator]
    found = revalued(content, Value("quantity", value, f"{value:g}", unit=counts[0].unit))
    return found[0] if found else None


def _names(content: str, after_first: bool = False) -> frozenset[str]:
    """The names a memory says, `after_first` its first word ("Payments still aren't set up ...", "They've moved
    Ana ...": a capital there may only start the sentence; a new subject there is not this change's)."""
    first = content.split(maxsplit=1)[0].lower() if after_first and content.strip() else None
    return frozenset(v.key for v in parse_claim(content).all_values
                     if v.type == "name" and "'" not in v.key and v.key != first)


def _topic(content: str) -> frozenset[str]:
    claim = parse_claim(content)
    return claim.stems - {claim.subject}


def _what_is_on(content: str) -> frozenset[str]:
    """What a dated statement says is on that day, in content stems: not who, nor the day's own words, nor
    what it keeps ("same time", "same place")."""
    return parse_claim(re.sub(r"\bsame\s+\w+", "", content, flags=re.I)).stems - _CALENDAR - STOPWORDS - MEASURE_UNITS


_CALENDAR = frozenset(stem(word.lower()) for word in (*MONTHS, *WEEKDAYS))


def with_difference(content: str, difference: float, currency: str | None) -> str | None:
    """`content` with its one amount of money moved by `difference`, written the way it was ("£1,150" ->
    "£1,200"; `revalue` does the restating); None when it holds no amount, several, one in another currency,
    or one that would go below zero."""
    amounts = [v for v in parse_claim(content).all_values if v.type == "money"]
    if len(amounts) != 1 or (currency and amounts[0].key[0] != currency):  # type: ignore[index]
        return None
    old = amounts[0]
    value = old.key[1] + difference  # type: ignore[index]
    if value < 0:
        return None
    found = revalued(content, Value("money", (old.key[0], value), written_like(old.text, value)))  # type: ignore[index]
    return found[0] if found else None
