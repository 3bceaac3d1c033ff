"""DERIVES: memories inferred from two or more memories of one scope, by a few precise rule families.

Precision over recall: a family fires only on the sentence shapes it knows, with the same people,
amounts, dates or versions named exactly in its supports; anything else derives nothing. Every
`Derived` names its supports (one DERIVES link per support), its rule and its confidence (the
pipeline's thresholds apply: >= 0.85 auto, 0.5 - 0.85 review).

Families:
- kinship: "Anna is Tom's sister" + "Anna's son Leo ..." -> "Leo is Tom's nephew" (also niece,
  grandparent, grandchild, aunt and uncle; only when the gender is stated by the kin word)
- recovery: "Marta's knee surgery is on February 10, 2025" + "Marta's recovery from knee surgery
  takes about six weeks" -> "... recovered from the knee surgery around late March 2025"; a recovery
  that names no event ("Marta's recovery takes about six weeks") is from the owner's one dated
  medical procedure (surgery, operation, ...), and from nothing when there are several
- budget: "Nadia's budget for the Iceland trip is €3,000" (or "The total budget for Nadia's Iceland
  trip is ...") + "Nadia spent €1,200 on flights for the Iceland trip" (or "Flights were €1,200 for
  Nadia": a travel cost goes to the owner's only trip budget) -> "Nadia has €1,800 left in the
  Iceland trip budget after flights"
- share of income: "Carlos takes home $6,000 a month" (or "Carlos's monthly take-home pay is $6,000
  after tax") + "Carlos pays $1,800 a month in rent" (or "... for the flat", or the speaker's
  fragment "Carlos: $1,800 a month for the flat") -> "Rent takes 30% of Carlos's take-home pay"
- expiry: "Sara's passport expires on June 1, 2024" + a dated trip of Sara's after it -> the
  passport will have expired before the trip
- work permit: "Kenji is a Japanese citizen" + "Kenji accepted a job in Vancouver" -> "Kenji will
  likely need a Canadian work permit ..." (a small country table: citizens' adjective and major
  cities; not within a free-movement area, nor once a permit, visa or residence is mentioned)

A conversational lead-in ("Just remember", "FYI") is dropped before the shapes are read.
A conclusion some input memory already states is not derived again, so `derive` is idempotent over
its own output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from mnemoflow.memory.generate.inference.common import Derived, MemoryLike, _norm
from mnemoflow.memory.generate.inference.dates import expiry, recovery
from mnemoflow.memory.generate.inference.kinship import kinship
from mnemoflow.memory.generate.inference.money import budget, income_share
from mnemoflow.memory.generate.inference.permits import work_permit

# A conversational lead-in a memory may keep ("Just remember Fatima is vegan"): it adds nothing to
# what the sentence states, and the families' shapes start at the statement itself.
_LEAD_IN = re.compile(r"^(?:(?:just |please )?(?:remember|note|keep in mind)(?: that)?|fyi|btw|by the way),? ",
                      re.IGNORECASE)


# Every family, in the order their conclusions are kept (a later one never replaces an earlier one).
FAMILIES: tuple[Callable[[Sequence[tuple[str, str]]], list[Derived]], ...] = (
    kinship, recovery, budget, income_share, expiry, work_permit)


def derive(memories: Sequence[MemoryLike]) -> list[Derived]:
    """Inferences over the memories of ONE scope (the caller never mixes scopes)."""
    items = [(m.memory_id, _LEAD_IN.sub("", m.content.strip().rstrip("."))) for m in memories]
    out: list[Derived] = []
    for family in FAMILIES:
        out.extend(family(items))
    known = {_norm(text) for _, text in items}
    unique: dict[str, Derived] = {}
    for d in out:
        if _norm(d.content) not in known and _norm(d.content) not in unique:
            unique[_norm(d.content)] = d
    return list(unique.values())
