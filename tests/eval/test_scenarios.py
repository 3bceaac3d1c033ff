"""The memory-quality scenario suite: the data validates and covers what the issue asks for, and the
scorers give the right figures on hand-built runs."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from mnemoflow.errors import BadInputError
from mnemoflow.eval.scenario_report import ScenarioReport, build_report, summary_table
from mnemoflow.eval.scenario_scores import (
    ProducedLink,
    ProducedMemory,
    ScenarioRun,
    match_memories,
    score_recall_checks,
    score_relationships,
    score_scenario,
)
from mnemoflow.eval.scenarios import (
    CLASSES,
    HALVES,
    RELATIONSHIP_TYPES,
    Scenario,
    load_scenario,
    load_scenarios,
    scenario_half,
    select_half,
)

SCENARIOS = Path(__file__).resolve().parents[2] / "eval" / "scenarios"


@pytest.fixture(scope="module")
def suite() -> list[Scenario]:
    return load_scenarios(SCENARIOS)


def by_id(suite: list[Scenario], scenario_id: str) -> Scenario:
    return next(s for s in suite if s.id == scenario_id)


def pid(key: str) -> str:
    return f"mem-{key}"


def perfect_memories(scenario: Scenario) -> list[ProducedMemory]:
    return [ProducedMemory(memory_id=pid(m.key), tenant_id=m.tenant_id, user_id=m.user_id, content=m.content,
                           kind=m.kind, is_latest=m.latest, source_turn_ids=tuple(m.source_turn_ids),
                           event_start_at=datetime.fromisoformat((m.event_start + "-01-01")[:10])
                           if m.event_start else None)
            for m in scenario.expected_memories]


def perfect_links(scenario: Scenario) -> list[ProducedLink]:
    return [ProducedLink(pid(r.src), pid(r.dst), r.type) for r in scenario.expected_relationships]


def perfect_recalls(scenario: Scenario) -> list[list[str]]:
    return [[pid(k) for k in check.must_return] + ["chunk-123"] for check in scenario.recall_checks]


def perfect_run(scenario: Scenario) -> ScenarioRun:
    return ScenarioRun(perfect_memories(scenario), perfect_links(scenario), perfect_recalls(scenario))


# ----------------------------------------------------------------------------------------------- the data


def test_every_scenario_file_loads_and_validates(suite: list[Scenario]) -> None:
    files = sorted(SCENARIOS.glob("*.json"))
    assert [s.id for s in suite] == [f.stem for f in files]
    for path in files:  # the strict loader accepts each file on its own too
        assert load_scenario(path).id == path.stem


def test_the_suite_covers_every_class_and_scope_mix(suite: list[Scenario]) -> None:
    assert len(suite) >= 60
    per_class = Counter(t for s in suite for t in {r.type for r in s.expected_relationships})
    for rel_type in RELATIONSHIP_TYPES:
        assert per_class[rel_type] >= 8, rel_type
    # isolation: several scopes, and a check in one scope refuses a memory of another
    isolating = []
    for s in suite:
        scope_of = {m.key: m.scope for m in s.expected_memories}
        if len({c.scope for c in s.conversations}) > 1 and any(
                scope_of[k] != check.scope for check in s.recall_checks for k in check.must_not_return):
            isolating.append(s.id)
    assert len(isolating) >= 8
    tags = Counter(t for s in suite for t in s.tags)
    for tag in ("follow-up", "correction", "preference-change", "dated", "multi-user", "multi-tenant", "chit-chat"):
        assert tags[tag] >= 2, tag
    assert sum(1 for s in suite for m in s.expected_memories if not m.latest) >= 8


def test_scenarios_are_small_and_varied(suite: list[Scenario]) -> None:
    for s in suite:
        turns = sum(len(c.turns) for c in s.conversations)
        assert 3 <= turns <= 15 * len(s.conversations), s.id
        assert all(len(c.turns) <= 15 for c in s.conversations), s.id
        assert s.recall_checks, s.id
    years = {t.at.year for s in suite for c in s.conversations for t in c.turns}
    assert len(years) >= 5
    assert {m.kind for s in suite for m in s.expected_memories} == {"fact", "preference", "episode", "procedure", "rule"}
    speakers = {t.speaker for s in suite for c in s.conversations for t in c.turns if t.role == "user"}
    assert len(speakers) >= 50
    assert sum(1 for s in suite if any(t.role == "assistant" for c in s.conversations for t in c.turns)) >= 20


def test_tags_follow_relationships_and_conversations(suite: list[Scenario]) -> None:
    rel_tag = {"UPDATES": "update", "EXTENDS": "extends", "DUPLICATE_OF": "duplicate", "DERIVES": "derives",
               "CONFLICTS_WITH": "conflict"}
    for s in suite:
        derived = {rel_tag[r.type] for r in s.expected_relationships}
        if any(t.role == "assistant" for c in s.conversations for t in c.turns):
            derived.add("assistant")
        tenants = Counter(c.tenant_id for c in s.conversations)
        if len(tenants) > 1:
            derived.add("multi-tenant")
        if any(n > 1 for n in tenants.values()):
            derived.add("multi-user")
        structural = {"update", "extends", "duplicate", "derives", "conflict", "assistant", "multi-tenant", "multi-user"}
        assert set(s.tags) & structural == derived, s.id


def test_expected_memories_are_entity_centric(suite: list[Scenario]) -> None:
    first_person = re.compile(r"\b(I|me|my|mine|we|our|us)\b")
    for s in suite:
        for m in s.expected_memories:
            assert not first_person.search(m.content), (s.id, m.content)
            assert not re.search(r"\b(tomorrow|yesterday|next week|last month|next year)\b", m.content,
                                 re.IGNORECASE), (s.id, m.content)


# ----------------------------------------------------------------------------------------------- the split


def test_the_half_is_fixed_by_the_file_name_alone(tmp_path: Path) -> None:
    # the rule, spelled out: first byte of sha256(file name), even -> tune, odd -> check
    assert scenario_half("followup-japan-trip.json") == "tune"  # sha256 starts 0x62
    assert scenario_half("update-moved-hamburg-munich.json") == "check"  # 0x6b
    assert scenario_half("correction-flight-lisbon.json") == "check"  # 0xa5
    assert scenario_half("duplicate-peanut-allergy.json") == "tune"  # 0x80
    for name in ("followup-japan-trip.json", "update-moved-hamburg-munich.json"):
        assert len({scenario_half(name) for _ in range(3)}) == 1
        assert scenario_half(SCENARIOS / name) == scenario_half(name) == scenario_half(f"elsewhere/{name}")
    # the contents do not matter: the same file name with other contents stays in its half
    data = _valid()
    path = _write(tmp_path, data)
    before = load_scenario(path).half
    data["description"] = "Something else entirely."
    data["tags"] = ["update", "move"]
    assert load_scenario(_write(tmp_path, data)).half == before == scenario_half("tiny.json")


def test_both_halves_are_non_empty_and_cover_every_file_once(suite: list[Scenario]) -> None:
    files = sorted(p.name for p in SCENARIOS.glob("*.json"))
    halves = {h: [s.id for s in select_half(suite, h)] for h in HALVES}
    assert all(halves[h] for h in HALVES)
    assert sorted(f"{i}.json" for h in HALVES for i in halves[h]) == files  # each file exactly once
    for s in suite:
        assert s.half == scenario_half(f"{s.id}.json") and s.id in halves[s.half]
    assert [s.id for s in select_half(suite, "all")] == [s.id for s in suite]
    # a fair split: neither half has fewer than a third of the files
    assert min(len(ids) for ids in halves.values()) >= len(suite) / 3
    with pytest.raises(ValueError, match="tune, check, all"):
        select_half(suite, "held-out")


def test_every_case_of_the_generalisation_suite_is_in_both_halves(suite: list[Scenario]) -> None:
    for tag in ("move", "switch", "numeric-change", "device-change", "date-change", "follow-up", "dated",
                "exact-token", "group-chat", "chit-chat", "not-an-update"):
        per_half = Counter(s.half for s in suite if tag in s.tags)
        assert sum(per_half.values()) >= 4, tag
        assert all(per_half[h] >= 2 for h in HALVES), (tag, per_half)


def test_group_chats_have_three_speakers(suite: list[Scenario]) -> None:
    for s in suite:
        if "group-chat" in s.tags:
            speakers = {t.speaker for c in s.conversations for t in c.turns if t.role != "assistant"}
            assert len(speakers) >= 3, s.id


# ----------------------------------------------------------------------------------------------- validation


def _valid() -> dict[str, Any]:
    return {
        "id": "tiny", "tags": ["update"], "description": "A move.",
        "conversations": [{"tenant_id": "acme", "user_id": "alex", "turns": [
            {"session_id": "s1", "turn_id": "t1", "speaker": "Alex", "role": "user", "ts": "2024-01-01T10:00:00Z",
             "text": "I live in Berlin."},
            {"session_id": "s1", "turn_id": "t2", "speaker": "Alex", "role": "user", "ts": "2024-06-01T10:00:00Z",
             "text": "I moved to Lisbon."}]}],
        "expected_memories": [
            {"key": "m1", "tenant_id": "acme", "user_id": "alex", "kind": "fact", "content": "Alex lives in Berlin",
             "must_include": ["Alex", "Berlin"], "must_not_include": ["Lisbon"], "source_turn_ids": ["t1"],
             "latest": False},
            {"key": "m2", "tenant_id": "acme", "user_id": "alex", "kind": "fact",
             "content": "Alex moved from Berlin to Lisbon", "must_include": ["Alex", "Lisbon"],
             "source_turn_ids": ["t2"]}],
        "expected_relationships": [{"src": "m2", "dst": "m1", "type": "UPDATES"}],
        "recall_checks": [{"tenant_id": "acme", "user_id": "alex", "query": "Where does Alex live?",
                           "must_return": ["m2"], "must_not_return": ["m1"]}],
    }


def _write(tmp_path: Path, data: dict[str, Any], name: str = "tiny") -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_a_valid_scenario_loads(tmp_path: Path) -> None:
    [scenario] = load_scenarios(_write(tmp_path, _valid()).parent)
    assert scenario.conversations[0].transcript()[0]["turn_id"] == "t1"


def _set(path: str, value: Any) -> Any:
    def mutate(d: dict[str, Any]) -> None:
        *head, last = path.split(".")
        target: Any = d
        for part in head:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value
    return mutate


@pytest.mark.parametrize(("mutate", "message"), [
    (_set("surprise", 1), "surprise"),
    (_set("expected_memories.0.confidence", 0.9), "confidence"),
    (_set("tags", ["update", "nonsense"]), "unknown tags"),
    (_set("expected_relationships.0.dst", "m9"), "no memory m9"),
    (_set("expected_relationships.0.type", "RELATES_TO"), "type"),
    (_set("expected_memories.1.source_turn_ids", ["t7"]), "source turns"),
    (_set("expected_memories.1.key", "m1"), "repeats"),
    (_set("conversations.0.turns.1.turn_id", "t1"), "repeat"),
    (_set("conversations.0.turns.1.ts", "June 1st"), "ISO 8601"),
    (_set("conversations.0.turns.1.ts", "2023-01-01T10:00:00Z"), "earlier"),
    (_set("expected_memories.0.latest", True), "latest false"),
    (_set("expected_memories.0.must_not_include", []), "also matches memory m1"),
    (_set("expected_memories.0.must_include", ["Alex", "Paris"]), "own content"),
    (_set("expected_memories.0.must_include", ["Alex ", "Berlin"]), "must_include"),
    (_set("expected_memories.1.user_id", "bea"), "no conversation"),
    (_set("recall_checks.0", {"tenant_id": "acme", "user_id": "alex", "query": "Where?", "must_return": ["m1"]}),
     "superseded"),
    (_set("recall_checks.0.must_not_return", ["m2"]), "both wanted and refused"),
    (_set("expected_memories.0.kind", "opinion"), "kind"),
    (_set("expected_memories.0.event_start", "April 2025"), "event_start"),
])
def test_invalid_scenarios_are_refused_with_the_reason(tmp_path: Path, mutate: Any, message: str) -> None:
    data = copy.deepcopy(_valid())
    mutate(data)
    with pytest.raises(BadInputError, match=re.escape(message)):
        load_scenario(_write(tmp_path, data))


def test_repeated_json_keys_and_a_wrong_file_name_are_refused(tmp_path: Path) -> None:
    text = json.dumps(_valid())
    path = tmp_path / "tiny.json"
    path.write_text(text.replace('"id": "tiny",', '"id": "tiny", "id": "tiny",'))
    with pytest.raises(BadInputError, match="keys repeat"):
        load_scenario(path)
    with pytest.raises(BadInputError, match="differs from the file name"):
        load_scenario(_write(tmp_path, _valid(), name="other"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BadInputError, match="no scenario files"):
        load_scenarios(empty)
    with pytest.raises(BadInputError, match="not a scenario directory"):
        load_scenarios(tmp_path / "missing")


# ----------------------------------------------------------------------------------------------- scoring


def test_a_perfect_run_scores_one_everywhere(suite: list[Scenario]) -> None:
    report = build_report([score_scenario(s, perfect_run(s)) for s in suite])
    e = report.extraction
    assert (e.precision, e.recall, e.kind_accuracy, e.latest_accuracy, e.event_date_accuracy) == (1.0,) * 5
    assert all(c.precision == 1.0 for c in report.extraction_by_tag.values())
    for cls, counts in report.relationships.items():
        assert counts.expected > 0 and counts.accuracy == 1.0 and counts.precision == 1.0, cls
    assert report.recall.pass_rate == 1.0 and report.recall.hit_rate == 1.0
    assert report.recall.stale_returned == 0 and report.recall.out_of_scope_returned == 0
    assert report.cross_scope_links == 0
    assert report.meets_aims and report.shortfalls == []
    assert report.confusion["UPDATES"] == {"UPDATES": report.relationships["UPDATES"].expected}
    again = ScenarioReport.model_validate_json(report.model_dump_json())
    assert again.extraction == report.extraction and again.scenarios[0].id == suite[0].id
    table = summary_table(report)
    assert f"{len(suite)} scenarios" in table and "DUPLICATE_OF" in table and "aims met" in table
    assert len(table.splitlines()) <= 45


def test_the_report_carries_both_halves(suite: list[Scenario]) -> None:
    report = build_report([score_scenario(s, perfect_run(s)) for s in suite])
    assert set(report.halves) == set(HALVES)
    tune, check = report.halves["tune"], report.halves["check"]
    assert tune.scenarios_count + check.scenarios_count == report.scenarios_count
    assert tune.scenarios_count == len(select_half(suite, "tune")) > 0
    assert tune.extraction + check.extraction == report.extraction
    for half in (tune, check):
        assert (half.extraction.precision, half.extraction.recall) == (1.0, 1.0)
        assert half.recall.pass_rate == 1.0 and half.recall.stale_returned == half.recall.out_of_scope_returned == 0
        assert set(half.relationships) == set(CLASSES)
    for cls in CLASSES:
        assert tune.relationships[cls].expected + check.relationships[cls].expected == \
            report.relationships[cls].expected
    assert tune.recall.checks + check.recall.checks == report.recall.checks
    assert {r.half for r in report.scenarios} == set(HALVES)

    # a miss in one half shows in that half only
    scenario = by_id(suite, "correction-flight-lisbon")  # a check-half scenario
    assert scenario.half == "check"
    broken = ScenarioRun(perfect_memories(scenario)[1:], [], [[] for _ in scenario.recall_checks])
    results = [score_scenario(s, broken if s.id == scenario.id else perfect_run(s)) for s in suite]
    report = build_report(results)
    assert report.halves["tune"].extraction.recall == 1.0 and report.halves["check"].extraction.recall < 1.0
    assert report.halves["tune"].relationships["UPDATES"].accuracy == 1.0
    assert report.halves["check"].relationships["UPDATES"].accuracy < 1.0
    assert report.halves["check"].recall.passed == report.halves["check"].recall.checks - len(scenario.recall_checks)

    data = json.loads(report.model_dump_json())
    assert data["halves"]["check"]["extraction"]["recall"] == report.halves["check"].extraction.recall
    assert data["scenarios"][0]["half"] in HALVES
    again = ScenarioReport.model_validate_json(report.model_dump_json())
    assert again.halves == report.halves
    table = summary_table(report)
    assert "tune half" in table and "check half" in table and "tune accuracy" in table and "check accuracy" in table
    assert f"(tune {report.halves['tune'].scenarios_count}, check {report.halves['check'].scenarios_count})" in table

    only_tune = build_report([r for r in results if r.half == "tune"], config={"half": "tune"})
    assert only_tune.halves["check"].scenarios_count == 0 and only_tune.halves["check"].extraction.recall is None
    assert only_tune.extraction == only_tune.halves["tune"].extraction
    assert "check half" not in summary_table(only_tune)


def test_a_missing_memory_drops_recall_by_one_over_the_expected_count(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "followup-japan-trip")
    memories = [m for m in perfect_memories(scenario) if m.memory_id != pid("m3")]
    result = score_scenario(scenario, ScenarioRun(memories, perfect_links(scenario), perfect_recalls(scenario)))
    assert result.extraction.recall == round(2 / 3, 4)
    assert result.extraction.precision == 1.0
    assert [u.key for u in result.unmatched_expected] == ["m3"]
    outcomes = {(o.src, o.expected): o.outcome for o in result.relationships.outcomes}
    assert outcomes[("m3", "EXTENDS")] == "unmatched"

    whole = build_report([score_scenario(s, perfect_run(s)) for s in suite if s.id != scenario.id] + [result])
    total = sum(len(s.expected_memories) for s in suite)
    assert whole.extraction.recall == round((total - 1) / total, 4)
    assert whole.extraction_by_tag["follow-up"].recall < 1.0 and whole.extraction_by_tag["conflict"].recall == 1.0


def test_a_memory_of_another_user_does_not_match(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "multi-user-where-i-live")
    memories = perfect_memories(scenario)
    alex_home = next(m for m in memories if m.memory_id == pid("m1"))
    wrong = ProducedMemory(memory_id="wrong", tenant_id="acme", user_id="bea", content=alex_home.content, kind="fact")
    memories = [m for m in memories if m is not alex_home] + [wrong]
    matching = match_memories(scenario.expected_memories, memories, scenario.expected_relationships)
    assert "m1" not in matching.pairs
    assert matching.counts.recall == 0.75 and matching.counts.precision == 0.75
    assert [u.memory_id for u in matching.unmatched_produced] == ["wrong"]

    other_tenant = ProducedMemory(memory_id="x", tenant_id="globex", user_id="alex", content=alex_home.content,
                                  kind="fact")
    assert "m1" not in match_memories(scenario.expected_memories, [other_tenant]).pairs


def test_matching_respects_must_not_include_and_is_one_to_one(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "correction-flight-lisbon")
    merged = ProducedMemory("p1", "acme", "priya", "Priya's Lisbon flight moved from June 14 to June 16, 2024", "episode")
    matching = match_memories(scenario.expected_memories, [merged])
    assert matching.pairs == {"m2": "p1"}  # m1 refuses "June 16"
    twice = [ProducedMemory("a", "acme", "priya", "Priya flies to Lisbon on June 16", "episode"),
             ProducedMemory("b", "acme", "priya", "Priya's Lisbon flight: June 16", "episode")]
    matching = match_memories(scenario.expected_memories, twice)
    assert matching.pairs == {"m2": "a"} and matching.counts.precision == 0.5


def test_kind_latest_and_event_date_accuracy(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "correction-flight-lisbon")
    memories = perfect_memories(scenario)
    memories[0] = ProducedMemory(**{**memories[0].__dict__, "kind": "fact", "is_latest": True,
                                    "event_start_at": datetime(2024, 6, 15)})
    counts = match_memories(scenario.expected_memories, memories).counts
    assert counts.kind_accuracy == round(2 / 3, 4)
    assert counts.latest_accuracy == round(2 / 3, 4)
    assert (counts.dated, counts.date_correct) == (2, 1)


def test_a_wrong_link_type_shows_in_the_confusion_summary(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "correction-flight-lisbon")
    matching = match_memories(scenario.expected_memories, perfect_memories(scenario), scenario.expected_relationships)
    score = score_relationships(scenario.expected_relationships, matching, [ProducedLink(pid("m2"), pid("m1"), "EXTENDS")])
    assert score.confusion["UPDATES"] == {"EXTENDS": 1}
    assert score.by_class["UPDATES"].accuracy == 0.0
    assert (score.by_class["EXTENDS"].produced, score.by_class["EXTENDS"].precision) == (1, 0.0)
    assert score.confusion["new"] == {"new": 2}  # m1 and m3; m2 is expected to be an update

    reversed_link = score_relationships(scenario.expected_relationships, matching,
                                        [ProducedLink(pid("m1"), pid("m2"), "UPDATES")])
    assert reversed_link.confusion["UPDATES"] == {"UPDATES (reversed)": 1}
    assert reversed_link.confusion["new"] == {"UPDATES": 1, "new": 1}  # m1 now looks like an update itself

    none = score_relationships(scenario.expected_relationships, matching, [])
    assert none.confusion["UPDATES"] == {"missing": 1}

    ignored = score_relationships(scenario.expected_relationships, matching,
                                  [ProducedLink(pid("m2"), pid("m1"), "UPDATES"),
                                   ProducedLink(pid("m2"), "chunk-1", "EXTRACTED_FROM")])
    assert ignored.by_class["UPDATES"].accuracy == 1.0 and "EXTRACTED_FROM" not in ignored.by_class


def test_new_memories_wrongly_linked_are_not_new(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "multi-user-where-i-live")
    matching = match_memories(scenario.expected_memories, perfect_memories(scenario))
    score = score_relationships([], matching, [ProducedLink(pid("m2"), pid("m1"), "DUPLICATE_OF")])
    assert score.by_class["new"].expected == 4 and score.by_class["new"].correct == 3
    assert score.confusion["new"] == {"new": 3, "DUPLICATE_OF": 1}
    assert score.by_class["DUPLICATE_OF"].precision == 0.0


def test_conflicts_count_either_way_and_cross_scope_links_are_counted(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "conflict-offsite-date")
    matching = match_memories(scenario.expected_memories, perfect_memories(scenario))
    score = score_relationships(scenario.expected_relationships, matching,
                                [ProducedLink(pid("m1"), pid("m2"), "CONFLICTS_WITH")])
    assert score.by_class["CONFLICTS_WITH"].accuracy == 1.0 and score.by_class["CONFLICTS_WITH"].precision == 1.0

    multi = by_id(suite, "multi-user-both-going-to-japan")
    matching = match_memories(multi.expected_memories, perfect_memories(multi), multi.expected_relationships)
    score = score_relationships(multi.expected_relationships, matching,
                                [*perfect_links(multi), ProducedLink(pid("m2"), pid("m1"), "DUPLICATE_OF")])
    assert score.cross_scope_links == 1
    assert score.by_class["DUPLICATE_OF"].produced == 1 and score.by_class["DUPLICATE_OF"].produced_correct == 0


def test_a_duplicate_folded_into_its_original_counts(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "duplicate-peanut-allergy")
    original = ProducedMemory(pid("m1"), "meals", "tariq", "Tariq is allergic to peanuts", "fact",
                              source_turn_ids=("t1", "t3"))  # reinforced by the second mention
    result = score_scenario(scenario, ScenarioRun([original], [], [[pid("m1")]]))
    assert result.extraction.recall == 1.0 and result.extraction.precision == 1.0
    assert result.relationships.by_class["DUPLICATE_OF"].accuracy == 1.0
    assert result.relationships.confusion["DUPLICATE_OF"] == {"absorbed": 1}
    assert result.recall_checks.passed == 1

    not_cited = ProducedMemory(pid("m1"), "meals", "tariq", "Tariq is allergic to peanuts", "fact",
                               source_turn_ids=("t1",))  # the second mention was simply lost
    result = score_scenario(scenario, ScenarioRun([not_cited], [], [[pid("m1")]]))
    assert result.extraction.recall == 0.5
    assert result.relationships.confusion["DUPLICATE_OF"] == {"unmatched": 1}

    only_second = ProducedMemory(pid("m2"), "meals", "tariq", "Tariq has a peanut allergy", "fact",
                                 source_turn_ids=("t3",))  # the original was lost, the repeat kept
    result = score_scenario(scenario, ScenarioRun([only_second], [], [[pid("m2")]]))
    assert result.extraction.recall == 0.5 and [u.key for u in result.unmatched_expected] == ["m1"]
    assert result.recall_checks.outcomes[0].missing == ["m1"]

    stored_twice = score_scenario(scenario, perfect_run(scenario))
    assert stored_twice.relationships.confusion["DUPLICATE_OF"] == {"DUPLICATE_OF": 1}


def test_stale_and_out_of_scope_returns_are_counted(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "multi-tenant-move-and-stale")
    matching = match_memories(scenario.expected_memories, perfect_memories(scenario), scenario.expected_relationships)
    # northwind check gets the superseded Denver too; contoso check is leaked the northwind Austin memory
    recalled = [[pid("m2"), pid("m1")], [pid("m3"), pid("m2")]]
    score = score_recall_checks(scenario.recall_checks, matching, recalled)
    assert score.stale_returned == 1
    assert score.out_of_scope_returned == 1
    assert score.must_not_return_violations == 2
    assert score.passed == 0 and score.hit_rate == 1.0
    assert score.outcomes[0].stale_returned == [pid("m1")] and score.outcomes[0].refused_returned == ["m1"]
    assert score.outcomes[1].out_of_scope_returned == [pid("m2")]

    # a memory the pipeline itself marked superseded is stale even if the expectation did not see it
    flagged = [ProducedMemory(**{**m.__dict__, "is_latest": m.memory_id != pid("m3")})
               for m in perfect_memories(scenario)]
    matching = match_memories(scenario.expected_memories, flagged, scenario.expected_relationships)
    assert score_recall_checks(scenario.recall_checks, matching, [[pid("m2")], [pid("m3")]]).stale_returned == 1

    with pytest.raises(ValueError, match="2 recall checks but 1"):
        score_recall_checks(scenario.recall_checks, matching, [[]])


def test_the_report_names_what_falls_short(suite: list[Scenario]) -> None:
    scenario = by_id(suite, "multi-tenant-move-and-stale")
    run = perfect_run(scenario)
    stale_run = ScenarioRun(run.memories, [], [[pid("m2"), pid("m1")], [pid("m3")]])
    report = build_report([score_scenario(scenario, stale_run)], engine="rule-based", config={"suite": "tiny"})
    assert not report.meets_aims
    assert any(s.startswith("UPDATES accuracy 0.000") for s in report.shortfalls)
    assert "stale_returned 1 > 0" in report.shortfalls
    data = json.loads(report.model_dump_json())
    assert data["meets_aims"] is False and data["scenarios"][0]["recall_checks"]["stale_returned"] == 1
    assert data["extraction"]["precision"] == 1.0 and data["relationships"]["UPDATES"]["accuracy"] == 0.0
    assert "below aim" in summary_table(report)
