"""A new value said with no subject of its own ("mine's 5518 now", "we're at 120 now") restates the one
memory that holds a value of its kind."""

from __future__ import annotations

import pytest

from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.revalue import new_value, revalued


@pytest.mark.parametrize(("said", "speaker", "held", "restated"), [
    ("Mine's 5518 now", "Rosalind", "Rosalind's storage unit is B-217 at Halden Self Storage, gate code 0392",
     "Rosalind's storage unit is B-217 at Halden Self Storage, gate code 5518"),
    ("Leontine is at 120 now", "Leontine", "Leontine's wedding guest list is capped at 90",
     "Leontine's wedding guest list is capped at 120"),
    ("Harriet: 25mg, just once a day now", "Harriet", "Biscuit is on carprofen, 50mg twice a day with food",
     "Biscuit is on carprofen, 25mg twice a day with food"),
    ("It's $5,500 now", "Sam", "The monthly ads budget is $4,000", "The monthly ads budget is $5,500"),
])
def test_a_bare_new_value_restates_the_memory_holding_one_of_its_kind(said: str, speaker: str, held: str,
                                                                       restated: str) -> None:
    value = new_value(parse_claim(said), speaker)
    assert value is not None
    found = revalued(held, value)
    assert found is not None and found[0] == restated


@pytest.mark.parametrize(("said", "speaker"), [
    ("Sam is 35 now", "Sam"),  # the speaker's age
    ("The rent is 1,450 now", "Sam"),  # a subject of its own: the value rule relates it
    ("Mine's 5518", "Rosalind"),  # no change said
    ("we're at 120 guests and 14 tables now", "Leontine"),  # two values: which one changed is not said
])
def test_a_value_with_a_subject_or_without_a_change_is_not_bare(said: str, speaker: str) -> None:
    assert new_value(parse_claim(said), speaker) is None


@pytest.mark.parametrize("held", [
    "Leontine has two dogs and 3 cats",  # two numbers: which one is not said
    "Leontine's flat is on the 3rd floor at number 120",  # the same value already
    "Leontine has saved 40,000 for a deposit",  # another magnitude
    "Biscuit is on carprofen, 50mg twice a day",  # another unit
])
def test_no_memory_is_restated_when_the_value_fits_no_single_one(held: str) -> None:
    value = new_value(parse_claim("Leontine is at 120 now"), "Leontine")
    assert value is not None and revalued(held, value) is None
