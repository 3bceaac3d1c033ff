"""What a query asks for, by its wording (general English cues, not any dataset's phrasings)."""

from __future__ import annotations

import pytest

from mnemoflow.recall.intent import asks_about_now, breadth, named_months, without_names


@pytest.mark.parametrize(("query", "expected"), [
    ("What do you know about me?", "person"),
    ("tell me everything about Maya Lin", "person"),
    ("Who is Anthony?", "person"),
    ("Describe Priya.", "person"),
    ("What is Maya's background?", "person"),
    ("Who is Maya's manager?", "narrow"),  # a fact about her, not her
    ("Describe the painting Melanie made", "narrow"),
    ("Summarise the trip planning", "broad"),
    ("what did we talk about in March?", "broad"),
    ("Give me a recap of last week", "broad"),
    ("What has Jon been up to lately?", "broad"),
    ("What happened during the offsite?", "broad"),
    ("When did Ana start at Siemens?", "narrow"),
    ("What did Caroline research?", "narrow"),
    ("Which huts did Ana book?", "narrow"),
])
def test_breadth(query: str, expected: str) -> None:
    assert breadth(query) == expected


def test_named_months() -> None:
    assert named_months("what did we talk about in March?") == [(3, None)]
    assert named_months("highlights of May 2023 and Sept. 2022") == [(5, 2023), (9, 2022)]
    assert named_months("May I ask what happened in may?") == [(5, None)]  # the verb is not the month
    assert named_months("summarise the trip") == []


@pytest.mark.parametrize(("query", "now"), [
    ("Which city does Ingrid live in?", True),
    ("What is Raj's mobile number now?", True),
    ("What does Lena drink first thing before bed?", True),  # "first" and "before" name no time
    ("When did Ana start at Siemens?", False),
    ("What did Caroline research?", False),
    ("Which car was Owen driving in March?", False),
    ("What phone did Marisol have last year?", False),
    ("What did we talk about in March?", False),  # broad
    ("Tell me about Maya", False),  # a person as a whole
])
def test_asks_about_now(query: str, now: bool) -> None:
    assert asks_about_now(query) is now


def test_without_names() -> None:
    assert without_names("How much does Beatriz pay in rent?", {"Beatriz"}) == "How much does pay in rent?"
    assert without_names("What is beatriz's rent and Ana's?", {"Beatriz", "Ana"}) == "What is rent and ?"
    assert without_names("Which car does Anabel drive?", {"Ana"}) == "Which car does Anabel drive?"
