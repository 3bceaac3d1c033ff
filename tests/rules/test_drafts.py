"""Rule memories read from conversations become DRAFT rules, on the rule engine (for the forms its
reader knows) and on the LLM path (from the slots the model fills); nothing generated is ACTIVE."""

from __future__ import annotations

from pathlib import Path


from mnemoflow.config import Settings, load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage.scope import Scope
from tests.conftest import turn, write_transcript
from tests.llm_double import ChatDouble, Reply, candidates

SCOPE = Scope("harbor", "ines")


def test_rule_engine_drafts_what_its_reader_can_read(service: MemoryService, tmp_path: Path) -> None:
    chat = write_transcript(tmp_path / "prefs.jsonl", [
        turn("s1", "1", "Ines", "2025-06-02T09:00:00Z", "Hi! Quick thing before we start.", role="user"),
        turn("s1", "2", "Ines", "2025-06-02T09:00:30Z", "Always reply in Italian when I ask about recipes.",
             role="user"),
        turn("s1", "3", "assistant", "2025-06-02T09:01:00Z", "Noted.", role="assistant"),
        turn("s1", "4", "Ines", "2025-06-02T09:02:00Z", "Never use the web_search tool when I ask about my diary.",
             role="user"),
        turn("s1", "5", "Ines", "2025-06-02T09:03:00Z", "Always water the basil before noon.", role="user"),
    ])
    service.ingest(SCOPE, [chat])
    drafts = service.list_rules(SCOPE)
    assert {(r.state, r.origin) for r in drafts} == {("draft", "rules")}
    read = {tuple(sorted(r.if_.items())): r.then for r in drafts}
    assert read == {(("topic", "recipes"),): {"output.language": "italian"},
                    (("topic", "diary"),): {"tool.deny": ["web_search"]}}
    rule_memories = {m.id: m for m in service.get_all(SCOPE).results if m.kind == "rule"}
    assert {r.memory_id for r in drafts} <= set(rule_memories) and len(rule_memories) >= 3  # the basil too
    assert all(r.transitions[0].actor == "generate" for r in (service.get_rule(SCOPE, d.rule_id) for d in drafts))
    assert service.evaluate_rules(SCOPE, {"topic": "recipes"}).applied == {}  # drafts apply nothing

    service.drain()  # read once: a second pass drafts nothing new
    assert len(service.list_rules(SCOPE)) == len(drafts)
    readings = service.sql("SELECT count(*), count(rule_id) FROM rule_readings").rows[0]
    assert readings == [len(rule_memories), len(drafts)]


def test_llm_path_drafts_from_the_slots_the_model_fills(double: ChatDouble, tmp_path: Path) -> None:
    settings: Settings = load_settings(tmp_path / "home", llm_provider="openai", llm_model="m",
                                       openai_base_url=double.base_url)
    double.script(Reply(candidates({
        "content": "Ines's rule: reply in Spanish at weekends", "kind": "rule", "source_turn_ids": ["1"],
        "rule_if": ["day=weekend"], "rule_then": ["output.language=spanish"], "rule_unless": ["urgent=true"]})))
    with MemoryService(settings) as service:
        service.post_events(SCOPE, [turn("s2", "1", "Ines", "2025-06-07T10:00:00Z",
                                         "At weekends please just answer me in Spanish.", role="user")])
        (draft,) = service.list_rules(SCOPE)
        assert (draft.state, draft.origin) == ("draft", "llm")
        assert (draft.if_, draft.then, draft.exceptions) == ({"day": "weekend"}, {"output.language": "spanish"},
                                                             [{"urgent": "true"}])
        schema = double.requests[0]["response_format"]["json_schema"]["schema"]["properties"]["candidates"]["items"]
        assert {"rule_if", "rule_then", "rule_unless"} <= set(schema["required"])
        assert service.evaluate_rules(SCOPE, {"day": "weekend"}).applied == {}
        service.set_rule_state(SCOPE, draft.rule_id, "active", actor="person")
        assert service.evaluate_rules(SCOPE, {"day": "weekend"}).applied == {"output.language": "spanish"}


def test_a_hard_deletion_takes_the_drafts_read_from_the_memory_and_unlinks_adopted_rules(tmp_path: Path) -> None:
    from tests.deletion_proof import duckdb_hits

    with MemoryService(load_settings(tmp_path / "home", retention_days=0)) as service:
        kept, _ = service.add(SCOPE, "Always answer in YAML when I ask for configs", kind="rule")
        dropped, _ = service.add(SCOPE, "Never use the fax_gateway tool", kind="rule")
        drafts = {r.memory_id: r for r in service.list_rules(SCOPE)}
        adopted = service.set_rule_state(SCOPE, drafts[kept.id].rule_id, "shadow", actor="person")
        service.delete(SCOPE, kept.id)
        service.delete(SCOPE, dropped.id)
        service.maintain("decay")
        (left,) = service.list_rules(SCOPE)
        assert (left.rule_id, left.memory_id, left.state) == (adopted.rule_id, None, "shadow")
        assert duckdb_hits(service, {kept.id, dropped.id, drafts[dropped.id].rule_id}) == {}
        assert all(report.ok for report in service.verify())
