"""Packing ranked candidates into a context of at most `budget` tokens (`tokens.token_count`).

Greedy in rank order; an item that does not fit is skipped and smaller ones may
still fit. Items that share a group (a conversation session) share one header
line, which buys room for more items; groups are shown in the order of their best
item, and a group's items in their own order (chronological for turns). A second piece of a turn
already shown (a long answer is cut into parts) is offered only after every other candidate.

With `drop_restated`, a memory read from conversation turns that the context shows word
for word (their chunks are packed) is left out: the turns already say what it says, with
speaker and session date, so it would spend budget on a second copy of the same evidence.
Whichever comes first in rank order, the turn is what stays: a memory packed before its
turns is taken out again when the last of them is packed, and its room goes to the items
after. A memory read from any turn not shown stays (it adds that turn's content), and so
does every memory without source turns (added directly, or read from a document). Opt-in
(`RecallConfig.drop_restated_memories`): for an agent that wants the leanest context; by
default recall returns the memories themselves (resolved dates, current versions) beside the turns.

An item is not offered twice under two kinds: a memory whose text a packed profile line already is
(the line cites it), or a profile line saying only memories already packed, is passed over.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mnemoflow.tokens import budget_units, token_count, units

TurnKey = tuple[Any, str]  # (session_id, turn_id)


def tokens_of(text: str) -> int:
    return token_count(text)


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
    shows: frozenset[TurnKey] = frozenset()  # conversation turns whose text the item shows (a chunk)
    restates: frozenset[TurnKey] = frozenset()  # turns the item was read from (a memory)
    part_of: frozenset[TurnKey] = frozenset()  # the turn a chunk is a piece of, whole or excerpted
    states: frozenset[str] = frozenset()  # the memories whose text the item is (a memory; a profile line's)


@dataclass
class Packed:
    items: list[Candidate]
    context: str

    @property
    def tokens(self) -> int:
        return tokens_of(self.context)


# Below this many free units (characters of English) no item fits ("- x (2024-01-01)" is 16); stop looking.
MIN_ITEM_CHARS = 16


def _cost(chosen: list[Candidate]) -> int:
    """Units (`tokens.units`) `render` spends on `chosen` (plus one separator)."""
    headers = {c.group: c.header for c in chosen if c.group is not None and c.header}
    return sum(units(c.line) + 1 for c in chosen) + sum(units(h) + 1 for h in headers.values())


def pack(candidates: Iterable[Candidate], budget: int, max_items: int | None = None,
         drop_restated: bool = False, later_parts_last: bool = False) -> Packed:
    """`candidates` best first (any iterable: they are built only as far as packing looks)."""
    budget_chars = budget_units(budget)
    used = 0
    chosen: list[Candidate] = []
    open_groups: set[str] = set()
    shown: dict[TurnKey, Candidate] = {}  # turn -> the packed item showing it

    def restated(cand: Candidate) -> bool:
        if not (drop_restated and cand.restates and cand.restates <= shown.keys()):
            return False
        for shower in {shown[t].id: shown[t] for t in sorted(cand.restates, key=str)}.values():
            shower.why += f"; {cand.kind} {cand.id}, read from this turn, is left out"
        return True

    stated: set[str] = set()  # memories whose text a packed item is
    seen_turns: set[TurnKey] = set()  # turns a packed chunk shows
    deferred: list[Candidate] = []

    def offered(stream: Iterable[Candidate]) -> Iterable[Candidate]:
        """Another piece of a turn already shown waits until every other candidate was offered: a
        long answer cut into parts must not fill the context with itself (host crowding)."""
        for cand in stream:
            if later_parts_last and cand.part_of and cand.part_of <= seen_turns:
                deferred.append(cand)
            else:
                yield cand
        yield from deferred

    for cand in offered(candidates):
        if max_items is not None and len(chosen) >= max_items:
            break
        if budget_chars - used < MIN_ITEM_CHARS:
            break
        if restated(cand) or (cand.states and cand.states <= stated):
            continue
        cost = units(cand.line) + 1
        new_group = cand.group is not None and cand.group not in open_groups
        if new_group and cand.header:
            cost += units(cand.header) + 1
        if used + cost > budget_chars:
            continue
        used += cost
        chosen.append(cand)
        stated.update(cand.states)
        seen_turns.update(cand.part_of)
        if new_group:
            open_groups.add(cand.group)  # type: ignore[arg-type]
        if drop_restated and cand.shows:
            shown.update(dict.fromkeys(cand.shows, cand))
            kept = [c for c in chosen if not restated(c)]
            if len(kept) < len(chosen):  # a memory packed before its turns: the turns take its place
                chosen = kept
                stated = {m for c in chosen for m in c.states}
                open_groups = {c.group for c in chosen if c.group is not None}
                used = _cost(chosen)
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
