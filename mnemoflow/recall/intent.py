"""What a query asks for, by its wording: one fact (narrow), an overview of a period, source or
topic (broad: "summarise the trip planning", "what did we talk about in March?"), or a person as a
whole ("what do you know about me?", "tell me about Maya"). Recall packs summaries for broad
queries and the profile for person queries; narrow ones, most queries, get the evidence alone.

The cues are the general English ways of asking for an overview, not phrasings of any dataset.
"""

from __future__ import annotations

import re
from typing import Literal

Breadth = Literal["narrow", "broad", "person"]

_WHO = r"(?:me|myself|i|[^\W\d_][\w.-]*(?: [^\W\d_][\w.-]*)?)"  # "me", or a name of one or two words
_PERSON = re.compile(  # the person is the whole object of the question: "who is Maya?", not "who is Maya's boss?"
    rf"\b(?:what (?:do|does|did) (?:you|we|i) (?:know|remember) about {_WHO}|tell me (?:everything |all )?about "
    rf"{_WHO}|who (?:is|am|was) {_WHO}|describe {_WHO}|(?:the )?(?:profile|bio|background) of {_WHO}|"
    rf"{_WHO}'s (?:profile|bio|background))\s*[?.!]*\s*$", re.I)
_BROAD = re.compile(
    r"\b(?:summar(?:y|ies|ise|ize|ised|ized|ising|izing)|overview|recap|rundown|digest|gist|highlights|"
    r"main (?:points|topics|themes)|key (?:points|topics|themes)|catch me up|fill me in|"
    r"what (?:did|have|has|do) (?:we|you|i|they|\w+(?: and \w+)?) (?:been )?(?:talk(?:ed)?|chat(?:ted)?|discuss(?:ed)?|"
    r"spoke|speak|cover(?:ed)?|go over|went over) (?:about|over)?|what (?:was|were|has been|have been) "
    r"(?:discussed|said|talked about|going on|happening)|what happened (?:in|on|during|over|last|this|that)|"
    r"what(?:'s| has) (?:\w+ )?been up to|what(?:'s| is) new with|everything (?:about|we|that))\b", re.I)

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = re.compile(rf"\b({'|'.join(MONTHS)}|sept|{'|'.join(m[:3] for m in MONTHS)})\.?(?:,?\s+((?:19|20)\d\d))?\b",
                    re.I)


# a question about what was, or about a time: "what did", "was", "used to", "when", "in March", "last year"
_NOT_NOW = re.compile(r"\b(?:did|didn't|was|wasn't|were|weren't|had|used to|when|ago|last|previous(?:ly)?|"
                      r"originally|yesterday|\d{4})\b", re.I)


def asks_about_now(query: str) -> bool:
    """A narrow question in the present about no named time ("which city does Ingrid live in?", "what is
    Raj's number now?"): its answer is the value that holds now, so of two answers one person gave, the
    later one. A question about the past or a time ("when did ...", "what was ... in March?") is not."""
    return breadth(query) == "narrow" and not _NOT_NOW.search(query) and not named_months(query)


def without_names(query: str, names: set[str]) -> str:
    """`query` with each of `names` (and its "'s") left out: "how much does Beatriz pay in rent?" -> "how much
    does pay in rent?"."""
    for name in sorted(names, key=len, reverse=True):
        query = re.sub(rf"\b{re.escape(name)}(?:'s|’s)?\b", " ", query, flags=re.I)
    return re.sub(r"\s+", " ", query).strip()


def breadth(query: str) -> Breadth:
    """Person beats broad: "tell me about Maya" wants her profile as much as any summary."""
    if _PERSON.search(query):
        return "person"
    return "broad" if _BROAD.search(query) else "narrow"


def named_months(query: str) -> list[tuple[int, int | None]]:
    """(month, year or None) for each month the query names ("in March", "May 2023"). "May" only
    counts as the month when a year follows it or "in"/"during"/"of" comes before it."""
    found = []
    for m in _MONTH.finditer(query):
        word, year = m.group(1).lower(), m.group(2)
        if word == "may" and not year and not re.search(r"\b(?:in|during|of|since|until|by)\s+$",
                                                            query[:m.start()], re.I):
            continue
        month = next(i for i, name in enumerate(MONTHS, start=1) if name.startswith(word))
        found.append((month, int(year) if year else None))
    return found
