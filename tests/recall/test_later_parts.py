"""A long answer cut into parts: its later parts wait until every other candidate was offered."""

from __future__ import annotations

from mnemoflow.recall.packing import Candidate, pack

TURN = ("s1", "7")


def _chunk(cid: str, chars: int, part_of: frozenset = frozenset()) -> Candidate:
    return Candidate("chunk", cid, "x" * chars, 1.0, {}, "", None, part_of=part_of)


def test_a_second_part_of_a_shown_turn_yields_to_other_turns() -> None:
    ranked = [_chunk("part0", 800, frozenset({TURN})), _chunk("part1", 800, frozenset({TURN})),
              _chunk("other", 300, frozenset({("s1", "3")}))]
    crowded = pack(ranked, budget=450)  # rank order alone: the answer's two parts fill it
    assert [c.id for c in crowded.items] == ["part0", "part1"]
    packed = pack(ranked, budget=450, later_parts_last=True)
    assert [c.id for c in packed.items] == ["part0", "other"]
    roomy = pack(ranked, budget=600, later_parts_last=True)  # with room to spare the part still comes
    assert [c.id for c in roomy.items] == ["part0", "other", "part1"]
