"""Two small pieces of English the drafts need: a reschedule told as an amount ("pushed back a week"),
and a noun's contracted "is"/"has" ("my phone's a Vireo", "rent's going up")."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from mnemoflow.memory.english.shifts import find_shift, rescheduled
from mnemoflow.memory.english.verbs import expand_is


@pytest.mark.parametrize(("text", "days"), [
    ("the worktops are delayed so they've pushed the install back a week", 7),
    ("the wedding is postponed by a week", 7),
    ("the review was pushed back 2 weeks", 14),
    ("it slipped a week", 7),
    ("the flight is a day later than planned", 1),
    ("we're going two days earlier, out on the 20th instead", -2),
    ("they brought the launch forward by 3 days", -3),
    ("moved it up a day", -1),
])
def test_an_amount_of_moving_is_a_shift(text: str, days: int) -> None:
    assert find_shift(text) == timedelta(days=days)


@pytest.mark.parametrize("text", [
    "I moved here two weeks ago", "I work two days a week", "we moved to Leeds a week after the wedding",
    "I go running three days a week", "the launch is on Friday",
])
def test_durations_and_routines_are_no_shift(text: str) -> None:
    assert find_shift(text) is None


def test_a_memory_is_restated_with_its_date_moved() -> None:
    content = "Leontine's fitters are coming to put the new kitchen in on Tuesday March 12, 2024"
    assert rescheduled(content, datetime(2024, 3, 12), timedelta(days=7)) == (
        "Leontine's fitters are coming to put the new kitchen in on March 19, 2024", datetime(2024, 3, 19))
    assert rescheduled("The kitchen goes in next spring", datetime(2024, 3, 12), timedelta(days=7)) is None


@pytest.mark.parametrize(("text", "expanded"), [
    ("my phone's a Vireo X3", "my phone is a Vireo X3"),
    ("rent's going up to 1,240 a month", "rent is going up to 1,240 a month"),
    ("party's on Sunday instead", "party is on Sunday instead"),
    ("Amara's coming, she's vegan", "Amara is coming, she's vegan"),
    ("Dev's got a van", "Dev has got a van"),
    ("the team's been great", "the team has been great"),
    # possessives stay: a noun after the -ing word, or a plain noun
    ("Maya's running shoes are red", "Maya's running shoes are red"),
    ("Jo's cooking is amazing", "Jo's cooking is amazing"),
    ("Sam's dog is called Rex", "Sam's dog is called Rex"),
    ("it's 8 units now", "it's 8 units now"),
    ("Biscuit's back leg is stiff again", "Biscuit's back leg is stiff again"),  # the verb comes later
])
def test_a_nouns_contracted_is_is_written_out(text: str, expanded: str) -> None:
    assert expand_is(text) == expanded
