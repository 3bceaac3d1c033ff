"""An amount changed by a difference ("up by a fiver", "£50 more", "knocked £20 off"): how much, and the old
amount restated with it."""

from __future__ import annotations

import pytest

from mnemoflow.memory.english.deltas import find_difference
from mnemoflow.memory.relate.moved import with_difference


@pytest.mark.parametrize(("text", "difference"), [
    ("they've put the gym up by a fiver from March", (5.0, None)),
    ("rent's going up £50 in April", (50.0, "£")),
    ("it's a tenner more from March", (10.0, None)),
    ("they knocked £20 off the quote", (-20.0, "£")),
    ("the fare went down by $1.50", (-1.5, "$")),
    ("up 20 quid a month", (20.0, None)),
])
def test_a_difference_is_how_much_and_which_way(text: str, difference: tuple[float, str | None]) -> None:
    assert find_difference(text) == difference


@pytest.mark.parametrize("text", [
    "the rent went up to £1,240",  # the new amount itself: no difference to add
    "prices are up 5%",  # a percent of no named amount
    "I ran up the hill",
    "she's a grand person",
])
def test_a_new_amount_or_no_amount_is_no_difference(text: str) -> None:
    assert find_difference(text) is None


def test_the_one_amount_is_moved_and_written_the_way_it_was() -> None:
    assert with_difference("Ana's rent is £1,150 a month", 50, "£") == "Ana's rent is £1,200 a month"
    assert with_difference("Rent is £950 a month", 50, None) == "Rent is £1,000 a month"
    assert with_difference("The app costs $9.99", 1, None) == "The app costs $10.99"
    assert with_difference("Rent is £950, bills £120", 50, None) is None  # two amounts: which one?
    assert with_difference("Rent is €950", 50, "£") is None  # another currency
    assert with_difference("Ana is 34", 5, None) is None  # no money
