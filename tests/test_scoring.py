"""The rule-based fast score and kind classifier are features: measured on labelled examples."""

import pytest

from mnemoflow.memory.generate.direct import classify_kind
from mnemoflow.scoring import fast_score, matched_rules

SALIENT = [
    "Remember that my passport expires on 3 March 2027.",
    "I prefer aisle seats and I hate red-eye flights.",
    "The contract is worth $12,000 and is due next month.",
    "We decided to switch the API to version 2.3 after the crash.",
    "Traceback: KeyError in the billing job failed again last night.",
    "Don't forget Maya's birthday is on Friday.",
]
ORDINARY = [
    "ok",
    "haha nice",
    "Sounds good to me, thanks!",
    "Let me think about it for a bit.",
    "That is a very interesting point you are making there.",
    "Hello there, how are you doing today my friend?",
]


def test_salient_text_outscores_ordinary_text() -> None:
    salient = [fast_score(t) for t in SALIENT]
    ordinary = [fast_score(t) for t in ORDINARY]
    assert min(salient) > max(ordinary), (salient, ordinary)
    assert all(0.0 <= s <= 1.0 for s in salient + ordinary)


def test_rules_name_what_they_saw() -> None:
    assert {"remember", "date"} <= set(matched_rules(SALIENT[0]))
    assert "money" in matched_rules(SALIENT[2])
    assert {"decision", "version", "error"} <= set(matched_rules(SALIENT[3]))


LABELLED_KINDS = {
    "Alex prefers morning meetings": "preference",
    "Priya loves Thai food": "preference",
    "Never deploy on Fridays": "rule",
    "Expense reports must be filed within 30 days": "rule",
    "To deploy, first run the tests, then tag the release": "procedure",
    "1. Open the console 2. Click rotate keys": "procedure",
    "Yesterday we met the new vendor in Porto": "episode",
    "Sam visited the Lisbon office last week": "episode",
    "The billing service runs on Kubernetes": "fact",
    "Maya is Alex's sister": "fact",
}


@pytest.mark.parametrize(("text", "kind"), [
    ("Always use metric units", "rule"),
    ("Never book me on a red-eye", "rule"),
    # "always"/"never" in a habit or a state is no rule
    ("Hannah's GP is Dr. Okafor and it always feels so rushed", "fact"),
    ("Alex always walks to work", "fact"),
    ("Alex has never been to Japan", "fact"),
    ("I'll never quit the choir", "fact"),
    ("I always take the train to work", "fact"),
    ("From now on, never schedule calls before 10", "rule"),
    ("Please always copy my manager in", "rule"),
])
def test_always_and_never_make_a_rule_only_as_an_instruction(text: str, kind: str) -> None:
    assert classify_kind(text) == kind


def test_kind_classifier_accuracy() -> None:
    correct = sum(classify_kind(text) == kind for text, kind in LABELLED_KINDS.items())
    assert correct / len(LABELLED_KINDS) >= 0.9
