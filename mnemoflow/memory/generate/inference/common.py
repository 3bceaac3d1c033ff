"""What every inference family shares: the memory shape it reads (`MemoryLike`), what it proposes
(`Derived`), name and money patterns, and the date, number and "already stated" helpers."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Protocol

from mnemoflow.memory.english.lexicon import MONTHS
from mnemoflow.memory.english.temporal import _add_months
from mnemoflow.memory.relate.claim_values import DateValue, Value
from mnemoflow.memory.relate.claim_words import NUMBER_WORDS
from mnemoflow.memory.relate.claims import parse_claim


class MemoryLike(Protocol):
    memory_id: str
    content: str


@dataclass(frozen=True)
class Derived:
    content: str
    kind: str
    confidence: float
    supporting_ids: tuple[str, ...]
    rule: str
    reason: str


_NAME = r"(?:[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?)(?: [A-Z][a-z]+)?"
_MONEY = r"[$€£]\d[\d,]*(?:\.\d+)?"


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[\w$€£%.,-]+", text.lower())).rstrip(".")


def _first_match(patterns: Iterable[re.Pattern[str]], text: str) -> re.Match[str] | None:
    """The first of `patterns` that matches at the start of `text` (the shapes of one statement)."""
    return next((m for pattern in patterns if (m := pattern.match(text))), None)


def _states(items: Iterable[tuple[str, str]], *needles: str) -> bool:
    """Some input memory already says this (contains every needle, case-insensitive)."""
    return any(all(n.lower() in text.lower() for n in needles) for _, text in items)


def _date_values(text: str) -> list[Value]:
    return [v for v in parse_claim(text).all_values if v.type == "date"]


def _full_dates(text: str) -> list[DateValue]:
    return [v.key for v in _date_values(text)]  # type: ignore[misc]


def _days(text: str) -> list[date]:
    """The calendar days the text names in full (year, month and day)."""
    return [d for d in (_as_date(v) for v in _full_dates(text)) if d]


def _as_date(value: DateValue) -> date | None:
    if value.year and value.month and value.day:
        try:
            return date(value.year, value.month, value.day)
        except ValueError:
            return None
    return None


def _month_text(d: date) -> str:
    return f"{MONTHS[d.month - 1]} {d.year}"


def _add(start: date, n: int, unit: str) -> date:
    unit = unit.rstrip("s")
    if unit == "day":
        return start + timedelta(days=n)
    if unit == "week":
        return start + timedelta(weeks=n)
    return _add_months(start, n)


def _number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    return NUMBER_WORDS.get(text.lower())
