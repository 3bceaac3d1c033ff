"""Relative dates to absolute ones, so a memory means the same thing next year.

"next April" said on 2024-05-08 is April 2025: the phrase is rewritten in the text ("in April 2025")
and its span becomes the event time (half-open: `end` is the first instant after it). `now` is when
the words were said, not when they are processed, so historical transcripts resolve correctly.

Conventions: weeks start on Monday; "next Friday" is the Friday of next week, "this Friday" the one of this
week, a bare "Friday" the next one to come (the last one gone in a past-tense clause); "next April" is the
first April after the current month; seasons are northern-hemisphere meteorological. Days are written the
way the memories are ("June 14, 2024"). Counted offsets keep their words and gain the date ("in 3 weeks
(May 29, 2024)"), so no number said is lost, and give way to an exact date said with them ("in two weeks,
on the 15th"). Recurring phrases ("every Monday", "on Fridays", a birthday on "October 12") are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

from mnemoflow.memory.english.lexicon import (
    MONTH_ABBREVIATIONS,
    MONTH_NUMBERS,
    MONTHS,
    NUMBERS_TO_TWELVE,
    SEASONS,
    WEEKDAYS,
)
from mnemoflow.memory.english.tense import (
    FUTURE,
    PAST,
    PAST_TIME,
    PLANNED,
    has_past_verb,
    has_present_verb,
)

_MONTH_NUMBER = MONTH_NUMBERS | MONTH_ABBREVIATIONS
_FULL_MONTH = "|".join(m.lower() for m in MONTHS)
_ANY_MONTH = _FULL_MONTH + "|" + "|".join(sorted(MONTH_ABBREVIATIONS, key=len, reverse=True))
_NUMBERS = {"a": 1, "an": 1} | NUMBERS_TO_TWELVE | {"a couple of": 2, "a couple": 2, "couple of": 2}
_NUM = r"\d{1,3}|a couple of|a couple|couple of|an?|" + "|".join(NUMBERS_TO_TWELVE)
_PREP = r"(?:\b(?P<prep>on|in|by|until|till|from|since|before|after|during|for|at|over|through)\s+)?"
_DAY_PREP = _PREP.replace("on|in|", "on|")  # "staying in tonight", "on the way in today": "in" is not the day's
_PART = r"(?:\s+(?P<part>morning|afternoon|evening|night)\b)?"
_KEEP_PREPS = {"by", "until", "till", "from", "since", "before", "after", "during", "for", "over", "through"}
_RECURRING = re.compile(r"\b((?<!\d(?:st|nd|rd|th) )(?:birthdays?|anniversary)(?!\s+(?:party|dinner|drinks|lunch))|born|"
                        r"every|each|annual(ly)?|yearly|weekly|daily)\b", re.I)  # a yearly date; a "7th birthday" is one day
_SEASON = "|".join(SEASONS)
_WEEKDAY = "|".join(WEEKDAYS)

_CLAUSE_EDGE = re.compile(r"[,;:]|\b(?:and|but|because|so|while|when)\b", re.I)
_DAY_NAME = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_DAY_LIST_BEFORE = re.compile(rf"\b(?:every|each)\s+(?:{_DAY_NAME}\s*(?:,|and|or|&)\s*)*$|"
                              rf"\b{_DAY_NAME}\s*(?:through|thru|to|until|till|-|\u2013)\s*$", re.I)
_DAY_RANGE_AFTER = re.compile(rf"^\s*(?:through|thru|to|until|till|-|\u2013)\s*{_DAY_NAME}\b", re.I)
# "not (on) the 14th", "can't do Saturday": what comes next is named as the one it is not (also read by
# relate.compare for the values a claim rules out)
RULED_OUT = r"\b(?:(?:not|can't|cannot|couldn't)\s+(?:do\s+|make\s+)?|(?:instead of|rather than)\s+(?:on\s+)?)"
_RULED_OUT_BEFORE = re.compile(RULED_OUT + "$", re.I)
_ORDINAL_BEFORE = re.compile(r"\b(?:first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th)\s+$", re.I)
_OF_MONTH_AFTER = re.compile(r"\s+of\s+(?:the|every|each)\s+month\b", re.I)
_DATE_AFTER_DAY = re.compile(rf",?\s+(?:the\s+\d|\d{{1,2}}(?:st|nd|rd|th)\b|(?:{_ANY_MONTH})\.?\s+\d|"
                             rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_ANY_MONTH})\b)", re.I)
_OWNED_BEFORE = re.compile(r"\b(?:the|my|our|your|his|her|their)\s+(?:[a-z]+\s+)?$", re.I)
_PLURAL_AFTER = re.compile(r"\s+[a-z]{3,}s\b(?<!ss\b)")
_CHANGE = re.compile(r"\b(?:(mov|chang|push|reschedul|shift|postpon|bump|switch|delay|rais|increas|reduc|lower)\w*|"
                     r"(?:put|puts|putting|gone|going|goes|went)\b.{0,40}?\b(?:up|down))\b", re.I)  # "put it up ... from"
_TARGET_WORDS = {"to", "until", "till", "for", "by", "into", "before"}
_TARGET_WEEKDAY = re.compile(rf"\b(?:{'|'.join(_TARGET_WORDS)})\s+(?:{_WEEKDAY}),?\s+$", re.I)
_BARE_AFTER = _TARGET_WORDS | {"of", "from", "since", "after", "through", "during", "over", "do", "make"} | set(WEEKDAYS) | {
    "my", "our", "your", "his", "her", "their"}  # "our Sunday lunch" -> "our April 21, 2024 lunch"


@dataclass(frozen=True)
class EventTime:
    phrase: str  # as written, without a leading preposition ("next April")
    start: datetime
    end: datetime  # exclusive
    rendered: str  # what replaced the words in the text ("in April 2025")
    ruled_out: bool = False  # "can't do Saturday", "not on the 14th": named as the date it is not


@dataclass(frozen=True)
class Resolution:
    """The text with its relative dates made absolute, and the event times found in it."""

    text: str
    times: tuple[EventTime, ...] = ()

    @property
    def start(self) -> datetime | None:
        return min((t.start for t in self._meant), default=None)

    @property
    def end(self) -> datetime | None:
        return max((t.end for t in self._meant), default=None)

    @property
    def _meant(self) -> tuple[EventTime, ...]:
        return tuple(t for t in self.times if not t.ruled_out) or self.times

    @property
    def temporal_text(self) -> str | None:
        return "; ".join(t.phrase for t in self.times) or None


@dataclass(frozen=True)
class _Span:
    start: date
    end: date  # exclusive
    bare: str  # the absolute wording without a preposition ("April 2025")
    prep: str = "on"  # the preposition that wording takes by default
    mode: str = "replace"  # replace the words / "keep" them and add the date / "absolute": already is


def day_text(d: date) -> str:
    """The way memories write a day: "June 14, 2024"."""
    return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"


def _add_months(d: date, months: int) -> date:
    index = d.year * 12 + d.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(d.day, _month_length(year, month + 1)))


def _month_length(year: int, month: int) -> int:
    return ((date(year + month // 12, month % 12 + 1, 1)) - date(year, month, 1)).days


def _month_span(year: int, month: int, qualifier: str | None = None) -> _Span:
    first, last = date(year, month, 1), _month_length(year, month)
    name = f"{MONTHS[month - 1]} {year}"
    if not qualifier:
        return _Span(first, _add_months(first, 1), name, "in")
    q = qualifier.lower()
    if q.startswith("early") or "beginning" in q or "start" in q:
        lo, hi = 1, 10
    elif q.startswith("mid") or "middle" in q:
        lo, hi = 11, 20
    else:
        lo, hi = 21, last
    joined = f"{q}{name}" if q.endswith("-") else f"{q} {name}"
    return _Span(first.replace(day=lo), first.replace(day=hi) + timedelta(days=1), joined,
                 "at" if q.startswith("the") else "in")


def _day_span(d: date, part: str | None = None) -> _Span:
    return _Span(d, d + timedelta(days=1), f"the {part} of {day_text(d)}" if part else day_text(d))


def _weekend_span(saturday: date) -> _Span:
    sunday = saturday + timedelta(days=1)
    saturday_month, sunday_month = MONTHS[saturday.month - 1], MONTHS[sunday.month - 1]
    if saturday.month == sunday.month:
        bare = f"the weekend of {saturday_month} {saturday.day}-{sunday.day}, {sunday.year}"
    elif saturday.year == sunday.year:
        bare = f"the weekend of {saturday_month} {saturday.day}-{sunday_month} {sunday.day}, {sunday.year}"
    else:
        bare = f"the weekend of {day_text(saturday)}-{day_text(sunday)}"
    return _Span(saturday, saturday + timedelta(days=2), bare)


def _is_past(text: str, start: int, end: int, prep: str | None, clause_only: bool = False) -> bool:
    """Past or future, judged on the clause around the phrase first, then (unless `clause_only`) on the
    whole text. A date something is moved to or due by is ahead ("the deadline got moved to June 14"), as
    is the date of a plan made in the past ("we decided to move in September")."""
    if (prep or _word_before(text, start)).lower() in _TARGET_WORDS or _TARGET_WEEKDAY.search(text[:start]):
        return False  # "moved to June 14", "bumped me to Thursday June 6"
    if (prep or "").lower() == "from" and _CHANGE.search(text):
        return False  # "moved from Thursday to Friday": the plan being changed is still ahead
    edges = list(_CLAUSE_EDGE.finditer(text))
    lo = max((m.end() for m in edges if m.end() <= start), default=0)
    hi = min((m.start() for m in edges if m.start() >= end), default=len(text))
    # statements joined by ";" keep their own tense: "Lily chose Riverside; Lily starts in the fall"
    after = text.find(";", end)
    statement = text[text.rfind(";", 0, start) + 1:after if after >= 0 else len(text)]
    for own, scope in ((True, text[lo:start] + " " + text[end:hi]),) + (() if clause_only else ((False, statement),)):
        if FUTURE.search(scope):
            return False
        if PAST.search(scope) or has_past_verb(scope):
            return not (PLANNED.search(text[lo:start]) and not PAST_TIME.search(statement))
        if own and has_present_verb(text[lo:start]):
            return False  # "ordered a bike, arrives friday": a present verb of its own, not the statement's past
    return False


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[text.lower()]


# Each handler gets the match, today's date and whether the clause is past tense; None rejects it.
_Handler = Callable[[re.Match[str], date, bool], _Span | None]


def _relative_day(m: re.Match[str], today: date, _past: bool) -> _Span:
    word = m["word"].lower()
    shift = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1, "last night": -1,
             "the day after tomorrow": 2, "the day before yesterday": -2}.get(word, 0)
    part = m["part"] or ("night" if word in {"tonight", "last night"} else
                         word.removeprefix("this ") if word.startswith("this ") else None)
    return _day_span(today + timedelta(days=shift), part and part.lower())


def _direction(word: str | None) -> str | None:
    if not word:
        return None
    word = word.lower()
    return {"the coming": "next", "coming": "next", "the following": "next", "the past": "last"}.get(word, word)


def _relative_unit(m: re.Match[str], today: date, _past: bool) -> _Span:
    step = {"next": 1, "last": -1, "this": 0}[_direction(m["dir"]) or "this"]
    unit = m["unit"].lower()
    monday = today - timedelta(days=today.weekday())
    if unit == "week":
        start = monday + timedelta(weeks=step)
        return _Span(start, start + timedelta(weeks=1), f"the week of {day_text(start)}", "in")
    if unit == "weekend":
        return _weekend_span(monday + timedelta(days=5, weeks=step))
    if unit == "month":
        first = _add_months(today.replace(day=1), step)
        return _month_span(first.year, first.month)
    year = today.year + step
    return _Span(date(year, 1, 1), date(year + 1, 1, 1), str(year), "in")


def _the_weekend(m: re.Match[str], today: date, past: bool) -> _Span:
    monday = today - timedelta(days=today.weekday())
    return _weekend_span(monday + timedelta(days=5, weeks=-1 if past and today.weekday() < 5 else 0))


def _weekday(m: re.Match[str], today: date, past: bool) -> _Span | None:
    if _DATE_AFTER_DAY.match(m.string, m.end()) or m.string[:m.start("day")].lower().endswith("the "):
        return None  # "Tuesday, October 15": the date says it; "the Saturday slot": not a date
    if _OWNED_BEFORE.search(m.string[:m.start("day")]) and _PLURAL_AFTER.match(m.string, m.end()):
        return None  # "the long Sunday runs", "my Monday classes": a kind of thing, not a date
    if _ORDINAL_BEFORE.search(m.string[:m.start("day")]) or _OF_MONTH_AFTER.match(m.string, m.end()):
        return None  # "first Tuesday of every month", "the same first Tuesday slot": a day of each month
    moved = _CHANGE.search(m.string)  # "moved from Thursday to Friday": two dates, not a routine
    routine = _DAY_LIST_BEFORE.search(m.string[:m.start("day")]) or _DAY_RANGE_AFTER.match(m.string[m.end():])
    if routine and not moved:
        return None  # "every Monday and Thursday", "Tuesday through Thursday": a routine, not a date
    target = WEEKDAYS.index(m["day"].lower())
    said = (m["dir"] or "").lower()
    monday = today - timedelta(days=today.weekday())
    if said == "next":
        day = monday + timedelta(weeks=1, days=target)
    elif said == "this":
        day = monday + timedelta(days=target)
    elif said == "last" or (not said and past):
        day = today - timedelta(days=(today.weekday() - target) % 7 or 7)
    else:  # "coming", or a bare weekday in a present or future clause
        day = today + timedelta(days=(target - today.weekday()) % 7 or 7)
    return _day_span(day, m["part"] and m["part"].lower())


def _weekday_of_week(m: re.Match[str], today: date, _past: bool) -> _Span:
    """"Thursday next week", "next week on Thursday", "Friday of this week": that day of that week."""
    monday = today - timedelta(days=today.weekday())
    week = 0 if m["dir"].lower() == "this" else 1
    return _day_span(monday + timedelta(weeks=week, days=WEEKDAYS.index(m["day"].lower())))


def _weekday_after_next(m: re.Match[str], today: date, _past: bool) -> _Span:
    """"the Monday after next": a week after the coming Monday."""
    return _day_span(today + timedelta(days=((WEEKDAYS.index(m["day"].lower()) - today.weekday()) % 7 or 7) + 7))


def _unit_after_next(m: re.Match[str], today: date, _past: bool) -> _Span:
    """"the weekend after next", "the week after next": a week after the coming one."""
    if m["unit"].lower() == "weekend":
        return _weekend_span(today + timedelta(days=((5 - today.weekday()) % 7 or 7) + 7))
    start = today - timedelta(days=today.weekday()) + timedelta(weeks=2)
    return _Span(start, start + timedelta(weeks=1), f"the week of {day_text(start)}", "in")


def _weeks_from(m: re.Match[str], today: date, _past: bool) -> _Span:
    """"three weeks today", "a week from tomorrow", "a fortnight on Tuesday": that many weeks from the day named."""
    anchor, weeks = m["anchor"].lower(), _number(m["n"]) * (2 if m["unit"].lower() == "fortnight" else 1)
    days = 0 if anchor == "today" else 1 if anchor == "tomorrow" else (WEEKDAYS.index(anchor) - today.weekday()) % 7 or 7
    return _day_span(today + timedelta(weeks=weeks, days=days))


def _offset(m: re.Match[str], today: date, _past: bool) -> _Span:
    n = _number(m["n"]) * (-1 if m["ago"] else 1)
    unit = m["unit"].lower()
    if unit in {"day", "week", "fortnight"}:
        day = today + timedelta(days=n * {"day": 1, "week": 7, "fortnight": 14}[unit])
    else:
        day = _add_months(today, n * (12 if unit == "year" else 1))
    return _Span(day, day + timedelta(days=1), day_text(day), mode="keep")


def _month_of(m: re.Match[str]) -> int:
    return _MONTH_NUMBER[m["month"].lower().rstrip(".")]


def _calendar_day(m: re.Match[str], today: date, past: bool) -> _Span | None:
    month, day = _month_of(m), int(m["day"])
    if m["month"] == "may" or not 1 <= day <= 31:
        return None  # "I may 2 ...": lowercase "may" is the verb
    if m["year"]:
        year = int(m["year"])
        if day > _month_length(year, month):
            return None
        return _Span(date(year, month, day), date(year, month, day) + timedelta(days=1), "", mode="absolute")
    if _RECURRING.search(m.string):
        return None
    year = today.year
    candidates = [y for y in (year - 1, year, year + 1) if day <= _month_length(y, month)]
    dates = [date(y, month, day) for y in candidates]
    before, after = [d for d in dates if d <= today], [d for d in dates if d >= today]
    chosen = (max(before) if before else None) if past else (min(after) if after else None)
    return _day_span(chosen) if chosen else None


def _day_of_month(m: re.Match[str], today: date, past: bool) -> _Span | None:
    day = int(m["day"])
    if not 1 <= day <= 31 or _RECURRING.search(m.string):
        return None
    named = re.search(r"\b(" + _WEEKDAY + r")\W*$", m.string[:m.start()], re.I)  # "Wednesday the 16th"
    weekday = WEEKDAYS.index(named.group(1).lower()) if named else None
    for k in range(0, 13):
        month = _add_months(today.replace(day=1), k * (-1 if past else 1))
        if day <= _month_length(month.year, month.month):
            candidate = month.replace(day=day)
            if ((past and candidate <= today) or (not past and candidate >= today)) and (
                    weekday is None or candidate.weekday() == weekday):
                return _day_span(candidate)
    return None


def _month(m: re.Match[str], today: date, past: bool) -> _Span | None:
    month, word, said = _month_of(m), m["month"], (m["dir"] or "").strip().lower()
    direction = said if said in {"next", "last", "this"} else None
    qualifier = said if said and direction is None else None
    anchored = bool(m["prep"] or said or m["year"])
    anchored = anchored or _word_before(m.string, m.start()).lower() in _TARGET_WORDS
    if word.lower() == "may" and not (m["year"] or said or (anchored and word == "May")):
        return None  # the verb, or a name at the start of a sentence
    if not anchored and word[0].islower():
        return None  # "march" the verb
    if not (direction or m["year"]) and _RECURRING.search(m.string) and (m["prep"] or "").lower() != "since":
        return None  # "every March"; but "every day since January" says when it began
    if m["year"]:
        span = _month_span(int(m["year"]), month, qualifier)
        return span if qualifier else _Span(span.start, span.end, "", mode="absolute")
    current = today.year * 12 + today.month - 1
    index = today.year * 12 + month - 1  # this year's
    if direction == "next" and index <= current:
        index += 12
    elif (direction == "last" and index >= current) or (direction is None and past and index > current):
        index -= 12
    elif direction is None and not past and index < current:
        index += 12
    return _month_span(index // 12, index % 12 + 1, qualifier)


def _season(m: re.Match[str], today: date, past: bool) -> _Span:
    name = m["season"].lower()
    first_month = SEASONS[name][0]
    starts = [date(y, first_month, 1) for y in (today.year - 2, today.year - 1, today.year, today.year + 1)]
    current = max(s for s in starts if s <= today)
    ongoing = today < _add_months(current, 3)
    direction = _direction(m["dir"]) or ("last" if past and not ongoing else None)
    if direction == "last":
        start = _add_months(current, -12) if ongoing else current
    elif direction == "next" and ongoing:
        start = _add_months(current, 12)
    else:
        start = current if ongoing else _add_months(current, 12)
    year = f"{start.year}-{str(start.year + 1)[2:]}" if first_month == 12 else str(start.year)
    return _Span(start, _add_months(start, 3), f"{name} {year}", "in")


def _absolute_date(m: re.Match[str], _today: date, _past: bool) -> _Span | None:
    try:
        day = date(int(m["y"]), int(m["m"]), int(m["d"]))
    except ValueError:
        return None
    return _Span(day, day + timedelta(days=1), "", mode="absolute")


def _year(m: re.Match[str], _today: date, _past: bool) -> _Span:
    year = int(m["year"])
    return _Span(date(year, 1, 1), date(year + 1, 1, 1), "", mode="absolute")


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


_PATTERNS: tuple[tuple[re.Pattern[str], _Handler], ...] = (
    (_rx(_DAY_PREP + r"\b(?P<word>the day after tomorrow|the day before yesterday|today|tonight|tomorrow|yesterday|"
         r"last night|this (?:morning|afternoon|evening))\b" + _PART), _relative_day),
    (_rx(_PREP + r"(?<!\bthe )\b(?P<dir>next|last|this|the coming|the past|the following|coming)\s+"
         r"(?P<unit>week|month|year|weekend)\b(?!'s)"), _relative_unit),
    (_rx(r"\b(?P<prep>over|on)\s+the\s+weekend\b"), _the_weekend),
    (_rx(_PREP + r"\b(?P<day>" + _WEEKDAY + r")\s+(?:of\s+)?(?P<dir>next|this|the following)\s+week\b"),
     _weekday_of_week),
    (_rx(_PREP + r"\b(?P<dir>next|this|the following)\s+week\s+(?:on\s+)?(?P<day>" + _WEEKDAY + r")\b"),
     _weekday_of_week),
    (_rx(_PREP + r"\b(?:the\s+)?(?P<day>" + _WEEKDAY + r")\s+after\s+next\b"), _weekday_after_next),
    (_rx(_PREP + r"\bthe\s+(?P<unit>weekend|week)\s+after\s+next\b"), _unit_after_next),
    (_rx(r"\b(?P<prep>)(?P<n>" + _NUM + r")\s+(?P<unit>weeks?|fortnight)\s+(?:on\s+|from\s+)?(?P<anchor>today|tomorrow|"
         + _WEEKDAY + r")\b"), _weeks_from),
    (_rx(_DAY_PREP + r"(?<!\bevery )(?<!\beach )(?<!\ba )\b(?:(?P<dir>next|last|this|the coming|coming)\s+)?"
         r"(?P<day>" + _WEEKDAY + r")\b"
         r"(?!\s+(?:morning|afternoon|evening|night)s\b)" + _PART), _weekday),
    (_rx(r"\b(?P<prep>)in\s+(?P<n>" + _NUM + r")\s+(?P<unit>day|week|fortnight|month|year)s?\b(?P<ago>)"), _offset),
    (_rx(r"\b(?P<prep>)(?P<n>" + _NUM + r")\s+(?P<unit>day|week|fortnight|month|year)s?\s+(?P<ago>ago)\b"), _offset),
    (_rx(_PREP + r"\b(?P<month>" + _ANY_MONTH + r")\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b"
         r"(?!:)(?:,?\s+(?P<year>(?:19|20)\d\d)\b)?"), _calendar_day),
    (_rx(_PREP + r"\b(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>" + _ANY_MONTH + r")\b"
         r"(?:,?\s+(?P<year>(?:19|20)\d\d)\b)?"), _calendar_day),
    (_rx(_PREP + r"(?:\bthe\s+|(?<=day )(?:the\s+)?)(?P<day>\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:century|floor|grade|percentile|place|time|"
         r"birthday|anniversary|row|street|avenue)\b)"), _day_of_month),
    (_rx(_PREP + r"(?<!\bthe )\b(?:(?P<dir>next|last|this|early|late|mid-|mid|the end of|the beginning of|"
         r"the start of|the middle of)\s*)?(?P<month>" + _FULL_MONTH + r")\b(?:\s+(?P<year>(?:19|20)\d\d)\b)?"),
     _month),
    (_rx(r"\b(?P<prep>in|by|until|till|since|from|before|after)\s+(?P<dir>)(?P<month>"  # "turns 8 in Jan" ("Jan"
         + "|".join(sorted(MONTH_ABBREVIATIONS, key=len, reverse=True)) + r")\b\.?(?!\s*\d)(?P<year>)"), _month),  # alone: a name)
    (_rx(_PREP + r"\b(?P<dir>next|last|this|the coming|the past)\s+(?P<season>" + _SEASON + r")\b"), _season),
    (_rx(r"\b(?P<prep>in|during|over|by)\s+the\s+(?P<dir>)(?P<season>" + _SEASON + r")\b"), _season),
    (_rx(r"\b(?P<prep>)(?P<y>(?:19|20)\d\d)-(?P<m>\d\d)-(?P<d>\d\d)\b"), _absolute_date),
    (_rx(r"\b(?P<prep>in|since|from|by|during|until|of|back in)\s+(?P<year>(?:19|20)\d\d)\b(?![-/.:]\d)"), _year),
)
ANY_DATE_WORD = re.compile(r"\d|\b(?:today|tonight|tomorrow|yesterday|night|morning|afternoon|evening|next|last|"
                            r"this|coming|past|following|weekend|ago|(?:day|week|fortnight|month|year)s?|"
                            + _WEEKDAY + "|" + _ANY_MONTH + "|" + _SEASON + r")\b", re.I)
# A calendar day is an appointment: only its own clause says whether it is past ("I checked the booking,
# it's June 16" is ahead).
_CLAUSE_TENSE = (_calendar_day, _day_of_month)
_VERB_AFTER = re.compile(r"\s*(?:is|was|will|would|'s|works|sounds)\b", re.I)


def _word_before(text: str, start: int) -> str:
    found = re.search(r"([A-Za-z]+),?\s+$", text[:start])
    return found.group(1) if found else ""


def _render(m: re.Match[str], span: _Span, text: str) -> str:
    if span.mode == "absolute":
        return m.group()
    if span.mode == "keep":
        return f"{m.group()} ({span.bare})"
    prep = m["prep"]
    if prep and prep.lower() in _KEEP_PREPS:
        rendered = f"{prep} {span.bare}"
    elif not prep and (_word_before(text, m.start()).lower() in _BARE_AFTER or text.startswith("'s", m.end())):
        rendered = span.bare  # "moved to June 14" -> "moved to June 14, 2024"; "Monday the 11th"; "tomorrow's"
    elif m.start() == 0 and not prep and _VERB_AFTER.match(text, m.end()):
        rendered = span.bare
    else:
        rendered = f"{span.prep} {span.bare}"
    return rendered[0].upper() + rendered[1:] if m.group()[0].isupper() and m.start() == 0 else rendered


def _phrase(m: re.Match[str]) -> str:
    """The words without their leading preposition: "next April", not "in next April"."""
    return m.group()[m.end("prep") - m.start():].strip() if m["prep"] else m.group()


@lru_cache(maxsize=4096)
def resolve_dates(text: str, now: datetime) -> Resolution:
    """Rewrite relative dates in `text` as absolute ones, against `now`; collect their event times.
    Pure and cached: the rule engine resolves the same sentence several times on its way to a memory."""
    if not ANY_DATE_WORD.search(text):
        return Resolution(text)  # most sentences name no date: skip the patterns
    today = now.date()
    found: list[tuple[re.Match[str], _Span]] = []
    for pattern, handler in _PATTERNS:
        for m in pattern.finditer(text):
            past = _is_past(text, m.start(), m.end(), m["prep"], clause_only=handler in _CLAUSE_TENSE)
            span = handler(m, today, past)
            if span is not None:
                found.append((m, span))
    if any(span.mode != "keep" and span.end - span.start <= timedelta(days=1) for _, span in found):
        found = [(m, span) for m, span in found if span.mode != "keep"]  # "in two weeks, on the 15th": the date
    found.sort(key=lambda item: (item[0].start(), -(item[0].end() - item[0].start())))
    chosen: list[tuple[re.Match[str], _Span]] = []
    for m, span in found:
        if not chosen or m.start() >= chosen[-1][0].end():
            chosen.append((m, span))
    if not chosen:
        return Resolution(text)
    pieces, cursor, times = [], 0, []
    for m, span in chosen:
        rendered = _render(m, span, text)
        pieces += [text[cursor:m.start()], rendered]
        cursor = m.end()
        times.append(EventTime(_phrase(m), datetime.combine(span.start, datetime.min.time()),
                               datetime.combine(span.end, datetime.min.time()), rendered,
                               bool(_RULED_OUT_BEFORE.search(text[:m.start()]))))
    pieces.append(text[cursor:])
    return Resolution("".join(pieces), tuple(times))
