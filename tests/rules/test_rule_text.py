"""The rule reader: the forms rule memories are written in become rule slots; anything it cannot read
fully (condition and action) is left alone, with the reason."""

from __future__ import annotations

import pytest

from mnemoflow.rules.drafts import read_memory
from mnemoflow.rules.text import read_rule


@pytest.mark.parametrize(("content", "if_", "then", "unless"), [
    ("Priya's rule: always reply in Portuguese when Priya asks about invoices", {"topic": "invoices"},
     {"output.language": "portuguese"}, []),
    ("Priya's rule: give results as CSV when Priya asks for exports", {"topic": "exports"}, {"output.format": "csv"}, []),
    ("When Omar asks for a summary, always answer in markdown", {"topic": "summary"}, {"output.format": "markdown"}, []),
    ("Omar's rule: never call the payments_api tool unless Omar asks for a refund", {},
     {"tool.deny": ["payments_api"]}, [{"topic": "refund"}]),
    ("only use jira and confluence tools for sprint planning", {"topic": "sprint planning"},
     {"tool.allow": ["jira", "confluence"]}, []),
    ("Lee's rule: keep replies brief when Lee is on a phone", {"channel": "phone"}, {"output.length": "short"}, []),
    ("Lee's rule: the assistant should never run docker commands", {}, {"tool.deny": ["docker"]}, []),
    ("prefer duckduckgo over google", {}, {"tool.prefer": ["duckduckgo", "google"]}, []),
])
def test_forms_the_rule_engine_writes_are_read(content: str, if_: dict, then: dict, unless: list) -> None:
    spec, why = read_rule(content)
    assert spec is not None, why
    assert (spec.if_, spec.then, spec.exceptions) == (if_, then, unless)


@pytest.mark.parametrize("content", [
    "Kai's rule: always water the ferns on Sundays",  # an action that is no policy it knows
    "Kai's rule: reply in French when the moon is full",  # a condition it cannot read
    "Kai's rule: never use the grill unless the weather allows",  # an exception it cannot read
])
def test_what_cannot_be_read_whole_is_not_a_rule(content: str) -> None:
    spec, why = read_rule(content)
    assert spec is None and "not read" in why


def test_the_models_slots_come_first_and_bad_ones_fall_back_to_the_words() -> None:
    spec, origin, _ = read_memory("Ana's rule: answer in JSON when Ana asks for metrics",
                                  {"rule": {"if": ["topic=metrics"], "then": ["output.format=json"], "unless": []}})
    assert origin == "llm" and spec.then == {"output.format": "json"}
    spec, origin, why = read_memory("Ana's rule: answer in JSON when Ana asks for metrics",
                                    {"rule": {"if": ["topic"], "then": ["output.format=json"], "unless": []}})
    assert origin == "rules" and spec.if_ == {"topic": "metrics"}
