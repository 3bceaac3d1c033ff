"""A change replaces only the fact it changes (`relate/facts.py`): the others of the memory it replaces stay
current and cited; and an outdated fact said again reinforces its old version instead of becoming current
beside the new one. Through the pipeline and the store for real; wording of these tests' own."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoflow.client import Memory
from mnemoflow.memory.relate.facts import facts
from mnemoflow.memory.relate.versions import unchanged_facts
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.memory.dialogue import say


@pytest.mark.parametrize(("content", "expected"), [
    ("Ines lives in Porto and works as a nurse", ["Ines lives in Porto", "Ines works as a nurse"]),
    ("Ines's flat is in Porto; her sister visits in May", ["Ines's flat is in Porto", "her sister visits in May"]),
    ("Ines lives with Rui and Bea", ["Ines lives with Rui and Bea"]),  # no verb after "and": one fact
    ("Ines drives a Fiat", ["Ines drives a Fiat"]),
    # a fact that opens with a possessive has its own subject ("Rui's" is no verb of the first's)
    ("The Fiat broke down; Rui's van is Ines's car now", ["The Fiat broke down", "Rui's van is Ines's car now"]),
])
def test_a_memory_splits_into_its_facts(content: str, expected: list[str]) -> None:
    assert facts(content) == expected


def test_a_new_memory_is_judged_by_its_clauses_too() -> None:
    """A clause after a comma with a subject of its own is a part of a new memory to judge ("the old Honda"
    is no detail of the Vespa); a held memory keeps it, it often says more of the same fact."""
    said = "Ines rides a Vespa now, the old Honda was always in the shop"
    assert facts(said, clauses=True) == ["Ines rides a Vespa now", "the old Honda was always in the shop"]
    assert facts(said) == [said]
    assert facts("Rui, the new lead, was hired in May", clauses=True) == ["Rui, the new lead, was hired in May"]


def test_the_fact_nearest_the_change_is_the_one_it_replaces() -> None:
    held = "Ines lives in Porto and works as a nurse"
    near = {"Ines lives in Porto": 0.7, "Ines works as a nurse": 0.2}
    assert unchanged_facts("Ines moved to Braga", held, near) == ["Ines works as a nurse"]
    assert unchanged_facts("Ines moved to Braga and works as a nurse still", held, near) == []  # said again
    assert unchanged_facts("Ines moved to Braga", "Ines lives in Porto", {"Ines lives in Porto": 0.7}) == []


def _post(service: MemoryService, scope: Scope, said: list[tuple[str, str]], speaker: str = "Tomas") -> None:
    service.post_events(scope, [{"session_id": f"s{n}", "turn_id": f"t{n}", "speaker": speaker, "role": "user",
                                 "ts": ts, "text": text} for n, (ts, text) in enumerate(said)])


@pytest.mark.parametrize(("text", "expected"), [
    ("I live in Ghent and teach woodwork.", "Tomas lives in Ghent and teaches woodwork"),
    ("I live in Ghent and work at a brewery.", "Tomas lives in Ghent and works at a brewery"),
    ("I work at Sabena and sing in a choir", "Tomas works at Sabena and sings in a choir"),
    ("I have a cat and dog at home", "Tomas has a cat and dog at home"),  # two things, not two predicates
    ("I like waffles and beer from Bruges", "Tomas likes waffles and beer from Bruges"),
])
def test_a_verb_after_and_shares_the_subjects_agreement(text: str, expected: str) -> None:
    assert [c.content for c in say("Tomas", text)] == [expected]


def test_a_move_keeps_the_job_current_and_cited(service: MemoryService) -> None:
    scope = Scope("acme", "tomas")
    _post(service, scope, [("2025-02-03T09:00:00Z", "I live in Ghent and teach woodwork at a college."),
                           ("2025-08-11T09:00:00Z", "I moved to Leuven.")])
    current = {m.content: m for m in service.store.list_memories(scope)}
    kept = [m for c, m in current.items() if "woodwork" in c]
    assert len(kept) == 1 and "Ghent" not in kept[0].content, list(current)
    assert not any("Ghent" in c for c in current), list(current)
    assert service.store.memory_source_turns(scope)[kept[0].id] == ["t0"]  # cited as the old memory was
    items = service.recall(scope, "What does Tomas do for a living?", token_budget=512).items
    assert any(item.id == kept[0].id for item in items)


def test_an_outdated_fact_said_again_reinforces_its_old_version(service: MemoryService) -> None:
    scope = Scope("acme", "tomas")
    _post(service, scope, [("2025-02-03T09:00:00Z", "My gym is Basic-Fit."), ("2025-05-01T09:00:00Z",
                                                                             "I switched gyms to Jims."),
                           ("2025-06-01T09:00:00Z", "My gym is Basic-Fit.")])
    current = [m.content for m in service.store.list_memories(scope)]
    assert not any("Basic-Fit" in c for c in current), current
    old = next(m for m in service.store.list_memories(scope, include_inactive=True) if "Basic-Fit" in m.content)
    assert not old.is_latest
    assert sorted(service.store.memory_source_turns(scope)[old.id]) == ["t0", "t2"]


def test_direct_adds_keep_the_other_facts_and_never_make_the_old_value_current_again(tmp_path: Path) -> None:
    with Memory(home=tmp_path / "home", tenant_id="acme") as memory:
        memory.add("I live in Mysore and work at a bookshop", user_id="devi")
        memory.add("We relocated to Chennai last month", user_id="devi")
        assert "Devi works at a bookshop" in [m.content for m in memory.get_all(user_id="devi")]
        first = memory.add("Priya lives in Pune and teaches yoga", user_id="priya").results[0]
        moved = memory.add("I moved to Goa", user_id="priya").results
        assert {e.event for e in moved} == {"UPDATE"} and {e.previous_id for e in moved} == {first.id}
        assert sorted(m.content for m in memory.get_all(user_id="priya")) == ["Priya moved to Goa",
                                                                                "Priya teaches yoga"]
        again = memory.add("Priya lives in Pune and teaches yoga", user_id="priya").results
        assert [(e.event, e.id) for e in again] == [("NONE", first.id)]
        assert sorted(m.content for m in memory.get_all(user_id="priya")) == ["Priya moved to Goa",
                                                                                "Priya teaches yoga"]
