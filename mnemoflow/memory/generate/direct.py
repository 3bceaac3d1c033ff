"""Memories written directly (`add TEXT`): classify the kind and score salience by rule."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from mnemoflow.errors import BadInputError
from mnemoflow.memory.english.lexicon import WEEKDAYS
from mnemoflow.models import MemoryDraft, MemoryKind
from mnemoflow.scoring import fast_score

MAX_MEMORY_CHARS = 4000

# a liking said outright: the preference kind here, and (in judge) a "rule" that only states a liking
PREFERENCE_VERB = re.compile(r"\b(prefers?|preferred|favou?rite|likes?|loves?|enjoys?|hates?|dislikes?|"
                             r"can'?t stand|would rather)\b", re.I)
_KIND_RULES: tuple[tuple[MemoryKind, re.Pattern[str]], ...] = (
    # "always use metric", "never book me a red-eye": "always"/"never" opening a clause, an instruction; in a
    # statement of someone it is a habit, a state or a promise ("it always feels rushed", "has never been to
    # Japan", "I'll never quit the choir")
    ("rule", re.compile(r"(?:^|[.;:!?,]\s*|\bplease\s+)(?:always|never)\b|\b(?:must|must not|should(n'?t)?|do not|"
                        r"don'?t ever|is not allowed|are not allowed|policy)\b", re.I)),
    ("procedure", re.compile(r"\b(how to|steps?|first\b.*\bthen|to (deploy|install|run|set up|configure)|"
                             r"run `|follow these)\b|^\s*\d+[.)]\s", re.I | re.M)),
    ("preference", PREFERENCE_VERB),
    ("episode", re.compile(r"\b(yesterday|last (week|month|year|night)|this morning|went|visited|met|attended|"
                           r"happened|on (" + "|".join(WEEKDAYS) + r"))\b", re.I)),
)


def classify_kind(text: str) -> MemoryKind:
    """The first matching rule wins: a rule beats a preference ("never book me on a red-eye")."""
    for kind, pattern in _KIND_RULES:
        if pattern.search(text):
            return kind
    return "fact"


def draft_memory(
    text: str,
    *,
    kind: MemoryKind | None = None,
    observed_at: datetime | None = None,
    expires_at: datetime | None = None,
    metadata: dict[str, Any] | None = None,
    derived_from: list[str] | None = None,
) -> MemoryDraft:
    content = " ".join(text.split())
    if not content:
        raise BadInputError("a memory needs some text")
    if len(content) > MAX_MEMORY_CHARS:
        raise BadInputError(f"a memory is at most {MAX_MEMORY_CHARS} characters; ingest longer text as a document")
    return MemoryDraft(
        content=content, kind=kind or classify_kind(content), salience=fast_score(content), confidence=1.0,
        observed_at=observed_at, expires_at=expires_at, metadata=metadata or {},
        derived_from=tuple(derived_from or ()),
    )
