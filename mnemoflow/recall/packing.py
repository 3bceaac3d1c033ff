"""Packing ranked candidates into a context of at most `budget` tokens (ceil(chars / 4)).

Greedy in rank order; an item that does not fit is skipped and smaller ones may
still fit. Items that share a group (a conversation session) share one header
line, which buys room for more items; groups are shown in the order of their best
item, and a group's items in their own order (chronological for turns).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any



def tokens_of(text: str) -> int:
    return math.ceil(len(text) / 4)


@dataclass
class Candidate:
    kind: str
    id: str
    line: str  # the item's own text in the context
    score: float
    scores: dict[str, float]
    why: str
    source: Any  # what the item was built from; citations are made only for packed items
    group: str | None = None  # items with the same group share `header`
    header: str | None = None
    order: tuple[Any, ...] = field(default_factory=tuple)


@dataclass
class Packed:
    items: list[Candidate]
    context: str

    @property
    def tokens(self) -> int:
        return tokens_of(self.context)


# Below this many free characters no item fits ("- x (2024-01-01)" is 16); stop looking.
MIN_ITEM_CHARS = 16


def pack(candidates: Iterable[Candidate], budget: int, max_items: int | None = None) -> Packed:
    """`candidates` best first (any iterable: they are built only as far as packing looks)."""
    budget_chars = budget * 4
    used = 0
    chosen: list[Candidate] = []
    open_groups: set[str] = set()
    for cand in candidates:
        if max_items is not None and len(chosen) >= max_items:
            break
        if budget_chars - used < MIN_ITEM_CHARS:
            break
        cost = len(cand.line) + 1
        new_group = cand.group is not None and cand.group not in open_groups
        if new_group and cand.header:
            cost += len(cand.header) + 1
        if used + cost > budget_chars:
            continue
        used += cost
        chosen.append(cand)
        if new_group:
            open_groups.add(cand.group)  # type: ignore[arg-type]
    context = render(chosen)
    assert tokens_of(context) <= budget, "packing exceeded its budget"
    return Packed(chosen, context)


def render(chosen: list[Candidate]) -> str:
    sections: dict[str, list[Candidate]] = {}
    for cand in chosen:  # rank order decides section order
        sections.setdefault(cand.group or f"\x00{cand.id}", []).append(cand)
    lines: list[str] = []
    for members in sections.values():
        if members[0].group is not None and members[0].header:
            lines.append(members[0].header)
        lines.extend(c.line for c in sorted(members, key=lambda c: c.order))
    return "\n".join(lines)
