"""The memory pipeline for real: turns posted as events, the rule engine, neighbours from the
store, decisions written through it; scored by the scenario suite's own scorer."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoflow.eval.scenario_run import run_scenario
from mnemoflow.eval.scenario_scores import score_scenario
from mnemoflow.eval.scenarios import load_scenario
from mnemoflow.memory.generate.candidates import Candidate, GenerationContext, TurnView
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.memory.pipeline import KNOWN_MEMORIES, MemoryGenerator
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import utcnow

SCENARIOS = Path(__file__).resolve().parents[2] / "eval" / "scenarios"


@pytest.mark.parametrize("name", ["multi-tenant-same-user-id", "multi-user-both-going-to-japan",
                                  "multi-tenant-move-and-stale"])
def test_scopes_never_meet(service: MemoryService, name: str) -> None:
    scenario = load_scenario(SCENARIOS / f"{name}.json")
    run = run_scenario(service, scenario, RuleEngine())
    result = score_scenario(scenario, run)
    assert run.memories, "the engine stored nothing"
    assert all(m.source_turn_ids for m in run.memories), "every memory cites the turns it came from"
    assert result.recall_checks.out_of_scope_returned == 0
    assert result.relationships.cross_scope_links == 0


def test_a_repeated_statement_reinforces_and_an_update_supersedes(service: MemoryService) -> None:
    scope = Scope("acme", "lena")
    said = [("t1", "2024-03-01T09:00:00Z", "I live in Hamburg."),
            ("t2", "2024-03-02T09:00:00Z", "I live in Hamburg."),
            ("t3", "2024-06-01T09:00:00Z", "I moved to Munich last month, I live in Munich now.")]
    outcome = service.post_events(scope, [{"session_id": "s", "turn_id": t, "speaker": "Lena", "role": "user",
                                           "ts": ts, "text": text} for t, ts, text in said])
    assert outcome.drain is not None and outcome.drain.generation is not None
    assert outcome.drain.generation.reinforced >= 1
    memories = service.store.list_memories(scope, include_inactive=True)
    hamburg = [m for m in memories if "Hamburg" in m.content and "Munich" not in m.content]
    munich = [m for m in memories if "Munich" in m.content]
    assert len(hamburg) == 1 and munich
    assert not hamburg[0].is_latest
    assert sorted(service.store.memory_source_turns(scope)[hamburg[0].id]) == ["t1", "t2"]
    ids = [item.id for item in service.recall(scope, "Where does Lena live?").items]
    assert hamburg[0].id not in ids and any(m.id in ids for m in munich)


def test_an_answer_to_a_question_after_a_detail_can_extend_what_it_details(service: MemoryService) -> None:
    """Trip, then "Tomas is coming with me", then "Where will you go?": the places detail the trip."""
    scope = Scope("acme", "ines")
    said = [("t1", "Rui", "When are you going to Portugal?"), ("t2", "Ines", "Next May."),
            ("t3", "Rui", "Nice! Are you going alone?"), ("t4", "Ines", "No, Tomas is coming with me."),
            ("t5", "Rui", "Where will you go?"), ("t6", "Ines", "Lisbon for sure, and a few days in Porto.")]
    service.post_events(scope, [{"session_id": "s", "turn_id": t, "speaker": who, "role": "user",
                                 "ts": f"2024-11-02T10:0{i}:00Z", "text": text} for i, (t, who, text) in enumerate(said)])
    memories = {m.id: m.content for m in service.store.list_memories(scope)}
    trip = next(i for i, c in memories.items() if "Portugal" in c and "Tomas" not in c)
    places = next(i for i, c in memories.items() if "Lisbon" in c)
    links = {(src, dst) for src, dst, _ in service.store.linked_memories(scope, [places], ("EXTENDS",))}
    assert links == {(places, trip)}, memories


def test_a_definite_thing_right_after_a_clause_extends_what_the_clause_said(service: MemoryService) -> None:
    """"I own the Q3 roadmap; the review with leadership is July 18": the review is the roadmap's."""
    scope = Scope("acme", "maria")
    said = [("t1", "I own the Q3 roadmap for Atlas; the review with leadership is July 18."),
            ("t2", "I own the Q4 budget. The offsite is in Porto.")]
    service.post_events(scope, [{"session_id": "s", "turn_id": t, "speaker": "Maria", "role": "user",
                                 "ts": f"2024-07-01T09:0{i}:00Z", "text": text} for i, (t, text) in enumerate(said)])
    memories = {m.id: m.content for m in service.store.list_memories(scope)}
    roadmap = next(i for i, c in memories.items() if "roadmap" in c)
    review = next(i for i, c in memories.items() if "review" in c)
    offsite = next(i for i, c in memories.items() if "offsite" in c)
    links = {(src, dst) for src, dst, _ in service.store.linked_memories(scope, list(memories), ("EXTENDS",))}
    assert (review, roadmap) in links, memories
    assert not any(offsite in pair for pair in links), memories  # another sentence: no bridge


def test_a_later_sync_knows_what_an_earlier_one_wrote(service: MemoryService) -> None:
    """Tom's "our standup" in one sync, Devi's "the daily standup" in the next: one standup, Tom's."""
    scope = Scope("acme", "devi")
    for turn, who, role, ts, text in [
            ("t1", "Tom", "other", "2024-04-02T09:00:00Z", "FYI our standup is at 9:30."),
            ("t2", "Devi", "user", "2024-04-16T08:00:00Z",
             "Don't book anything over the daily standup, it's 9:30 every morning.")]:
        service.post_events(scope, [{"session_id": f"s{turn}", "turn_id": turn, "speaker": who, "role": role,
                                     "ts": ts, "text": text}])
    contents = sorted(m.content for m in service.store.list_memories(scope))
    # the rule keeps its whole statement (a turn is one statement); the standup is Tom's, not a second one
    assert contents == ["Devi's rule: don't book anything over the daily standup, it's 9:30 every morning",
                        "Tom's standup is at 9:30"]


class _Recording:
    """The rule engine, noting the memories each turn was drafted with."""

    def __init__(self) -> None:
        self.engine = RuleEngine()
        self.name, self.memory_context = self.engine.name, self.engine.memory_context
        self.seen: dict[str, tuple[str, ...]] = {}

    def close(self) -> None:
        self.engine.close()

    def generate(self, context: GenerationContext) -> list[Candidate]:
        self.seen[context.turn.turn_id] = context.memories
        return self.engine.generate(context)


def test_a_turn_is_drafted_with_the_memories_relevant_to_it_not_only_the_newest(service: MemoryService) -> None:
    scope = Scope("acme", "priya")
    service.add(scope, "Priya's vegetable garden has six raised beds of tomatoes")
    for note in ["Priya's dentist is Dr. Osei", "Priya runs the Thursday book club", "Priya's car is a blue Skoda",
                 "Priya's sister lives in Leeds", "Priya takes the 7:40 train to work", "Priya is learning Greek"]:
        service.add(scope, note)
    turns = [TurnView("t1", "s", "Priya", "The tomatoes in my raised beds got blight, so I'm growing peppers instead.",
                      utcnow(), "user")]
    chosen = {}
    for context in ("relevant", "newest"):
        engine = _Recording()
        MemoryGenerator(service.store, service.embedder, engine, scope, context=context).run(turns)
        chosen[context] = engine.seen["t1"]
    assert chosen["relevant"][0] == "Priya's vegetable garden has six raised beds of tomatoes"
    assert len(chosen["relevant"]) == KNOWN_MEMORIES
    assert "Priya's vegetable garden has six raised beds of tomatoes" not in chosen["newest"]  # six newer ones
    assert RuleEngine().memory_context == "newest"  # the rules read them for names only: no vector per turn


@pytest.mark.parametrize("said", [
    "The Fitbit finally died, I'm wearing a Garmin Venu 2 now.",
    "I'm wearing a Garmin Venu 2 now, the Fitbit finally died.",  # the ending is decided first either way
])
def test_what_a_turn_names_in_place_of_what_it_ended_replaces_it(service: MemoryService, said: str) -> None:
    scope = Scope("acme", "lucinda")
    turns = [("t1", "2021-01-12T09:00:00Z", "My Fitbit Charge 4 keeps losing sync with my phone."),
             ("t2", "2021-09-27T09:00:00Z", said)]
    service.post_events(scope, [{"session_id": "s", "turn_id": t, "speaker": "Lucinda", "role": "user",
                                 "ts": ts, "text": text} for t, ts, text in turns])
    memories = service.store.list_memories(scope, include_inactive=True)
    [fitbit] = [m for m in memories if "Charge 4" in m.content]
    [garmin] = [m for m in memories if "Garmin" in m.content]
    assert not fitbit.is_latest and garmin.is_latest
    updates = service.store.linked_memories(scope, [garmin.id], ("UPDATES",))
    assert [(src, dst) for src, dst, _ in updates] == [(garmin.id, fitbit.id)]
    ids = [item.id for item in service.recall(scope, "Which watch does Lucinda wear?").items]
    assert fitbit.id not in ids and garmin.id in ids
