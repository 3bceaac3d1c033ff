"""The relative-date resolver (`mnemoflow/memory/english/temporal.py`) beside dateparser, the maintained library
the issue names, on the same phrases and the same moment of speech.

Two sets: the resolver's own test phrases (it was written against them, so they favour it) and
twenty everyday phrases written for this comparison. A phrase counts as resolved when the date
found starts on the expected day; non-dates count the dates either one invents. dateparser is not a
dependency of the project: `pip install dateparser==1.5.0` into the venv first.

    .venv/bin/python bench/temporal_vs_dateparser.py
"""

from __future__ import annotations

import re
import sys
import time
from datetime import datetime
from pathlib import Path

try:
    from dateparser.search import search_dates
except ImportError:
    sys.exit("dateparser is not installed: .venv/bin/pip install dateparser==1.5.0")

from mnemoflow.memory.english.temporal import resolve_dates

TESTS = Path(__file__).resolve().parent.parent / "tests" / "memory" / "test_temporal.py"
NOWS = {"WED": datetime(2024, 5, 8, 10, 0), "DEC_20": datetime(2024, 12, 20, 9, 0), "JAN_31": datetime(2024, 1, 31, 9, 0)}
WED = NOWS["WED"]  # a Wednesday
NEW_PHRASES = [
    ("we fly the day after tomorrow", "2024-05-10"), ("the offsite is next Friday", "2024-05-17"),
    ("the review is in two weeks", "2024-05-22"), ("I've been vegan since January", "2024-01-01"),
    ("the lease ends on the 30th", "2024-05-30"), ("we met three days ago", "2024-05-05"),
    ("the launch moved to next Tuesday", "2024-05-14"), ("I started the job in March last year", "2023-03-01"),
    ("the exam is on Thursday", "2024-05-09"), ("my parents arrive tomorrow evening", "2024-05-09"),
    ("the contract started in February", "2024-02-01"), ("we're getting married on June 22", "2024-06-22"),
    ("the invoice is due in 10 days", "2024-05-18"), ("my brother moved out a week ago", "2024-05-01"),
    ("the conference is on the 3rd of July", "2024-07-03"), ("I'll be in Lisbon in August", "2024-08-01"),
    ("the dentist appointment was on Monday", "2024-05-06"), ("she turned 30 last Saturday", "2024-05-04"),
    ("we're renovating this summer", "2024-06-01"), ("the move is planned for early September", "2024-09-01"),
]
NON_DATES = ["I go every Monday", "her birthday is October 12", "May I ask something?", "we march on",
             "I work from home on Fridays", "the second option is better", "we can sort it out later",
             "I sat for an hour", "she's a June bug fan", "call me when you land"]


def test_phrases() -> list[tuple[datetime, str, str]]:
    pattern = r'\((WED|DEC_20|JAN_31), "([^"]+)", "[^"]+", "([\d-]+)"'
    return [(NOWS[m.group(1)], m.group(2), m.group(3)) for m in re.finditer(pattern, TESTS.read_text())]


def dateparser_dates(text: str, now: datetime) -> list[str]:
    found = search_dates(text, languages=["en"], settings={"RELATIVE_BASE": now, "PREFER_DATES_FROM": "future",
                                                              "PREFER_DAY_OF_MONTH": "first"})
    return [d.date().isoformat() for _, d in found or []]


def resolver_dates(text: str, now: datetime) -> list[str]:
    start = resolve_dates(text, now).start
    return [start.date().isoformat()] if start else []


def main() -> None:
    sets = {"resolver's test phrases": test_phrases(), "new everyday phrases": [(WED, t, s) for t, s in NEW_PHRASES]}
    for name, cases in sets.items():
        for label, find in (("dateparser 1.5", dateparser_dates), ("resolver", resolver_dates)):
            began = time.perf_counter()
            right = [start in find(text, now) for now, text, start in cases]
            ms = (time.perf_counter() - began) * 1000 / len(cases)
            print(f"{name:24} {label:15} {sum(right):3}/{len(cases)} resolved, {ms:.2f} ms per phrase")
            for ok, (now, text, start) in zip(right, cases, strict=True):
                if not ok:
                    print(f"    missed {text!r} (want {start}, got {find(text, now)})")
    for label, find in (("dateparser 1.5", dateparser_dates), ("resolver", resolver_dates)):
        invented = [(t, find(t, WED)) for t in NON_DATES if find(t, WED)]
        print(f"non-dates {label:15} {len(invented)}/{len(NON_DATES)} given a date: {invented}")


if __name__ == "__main__":
    main()
