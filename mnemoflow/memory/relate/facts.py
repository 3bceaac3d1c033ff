"""The facts of one memory, so that a change replaces only the fact it changes.

"Sam lives in Cardiff and works as a plumber" holds two facts; "Sam moved to Swansea" replaces the first
and leaves "Sam works as a plumber", which must stay current and cited. A memory splits at a semicolon,
and at "and" (or ", and") before a verb of the same subject ("... and works as ..."); a fact without a
subject of its own takes the first fact's ("Sam"). One that names no verb after "and" ("lives with Ana and
Tom") is one fact. A new memory is judged by its parts split also at a comma before a clause with a subject
of its own ("Mo drives a Kia now, the Tesla was too dear").
"""

from __future__ import annotations

import re

from mnemoflow.memory.relate.claim_words import AUXILIARIES, IRREGULAR_PAST

_SPLIT = re.compile(r";\s+|,?\s+and\s+(?=(?P<verb>[a-z][a-z']+)\b)")
_CLAUSE = re.compile(r",\s+(?=(?:the|my|our|his|her|their)\s+(?:[\w-]+\s+){1,2}?(?:is|was|are|were|has|had)\b)")


def _is_verb(word: str) -> bool:
    return word in AUXILIARIES or word in IRREGULAR_PAST or (len(word) > 3 and word.endswith(("s", "ed"))
                                                                and not word.endswith(("ss", "us", "is")))


def facts(content: str, *, clauses: bool = False) -> list[str]:
    """The facts of `content`, each a sentence of its own; one when it does not split. With `clauses`, also at
    a comma before a clause of its own: how a new memory's parts are judged. A held memory's facts are not
    split there, since the clause after the comma often says more of the same fact ("..., the plan is React")."""
    parts, start = [], 0
    splits = sorted([*_SPLIT.finditer(content), *(_CLAUSE.finditer(content) if clauses else ())], key=lambda m: m.start())
    for m in splits:
        if (verb := m.groupdict().get("verb")) is not None and not _is_verb(verb):
            continue
        parts.append(content[start:m.start()].strip())
        start = m.end()
    parts.append(content[start:].strip())
    parts = [p.rstrip(".;, ") for p in parts if p.strip(" .;,")]
    if len(parts) < 2:
        return [content]
    subject = _subject(parts[0])
    return [parts[0]] + [f"{subject} {p}" if subject and _needs_subject(p.split()[0]) else p for p in parts[1:]]


def _needs_subject(word: str) -> bool:
    """A fact that opens with a verb ("works", "doesn't") has no subject of its own; one that opens with
    "Kemal's" or "it's" has."""
    return _is_verb(word) and ("'" not in word or word.endswith("n't"))


def _subject(fact: str) -> str | None:
    """The words before the fact's first verb ("Sam", "Sam's daughter Ida", "The flat in Leeds"), as written;
    None unless they open with a name or "The"."""
    words = fact.split()
    for n, word in enumerate(words):
        if n and word.islower() and _is_verb(word):
            head = " ".join(words[:n])
            return head if head[:1].isupper() else None
    return None
