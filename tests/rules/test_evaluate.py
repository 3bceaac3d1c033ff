"""Evaluating rules and selecting tools with them, as pure functions over rule values."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from mnemoflow.errors import BadInputError
from mnemoflow.rules.evaluate import evaluate
from mnemoflow.rules.model import Rule, RuleSpec
from mnemoflow.rules.tools import choose

T0 = datetime(2026, 3, 1, 9, 0)


def rule(rule_id: str, state: str, if_: list[str], then: list[str], unless: list[str] | None = None,
         age_min: int = 0) -> Rule:
    spec = RuleSpec.from_pairs(if_, then, unless)
    created = T0 - timedelta(minutes=age_min)
    return Rule(rule_id=rule_id, tenant_id="t", user_id="u", state=state, origin="api", created_at=created,
                updated_at=created, **spec.model_dump(by_alias=False))


def test_only_active_rules_shape_applied_and_shadow_reports_what_it_would_change() -> None:
    rules = [rule("r_draft", "draft", ["lang=sql"], ["output.format=markdown"]),
             rule("r_shadow", "shadow", ["lang=sql"], ["output.style=terse"]),
             rule("r_active", "active", ["lang=sql"], ["output.format=csv"]),
             rule("r_retired", "retired", ["lang=sql"], ["output.format=xml"])]
    result, applied_by = evaluate(rules, {"lang": "SQL"})
    assert result.applied == {"output.format": "csv"}
    assert result.shadow == {"output.style": "terse"}
    assert {(m.rule_id, m.state) for m in result.matched} == {("r_shadow", "shadow"), ("r_active", "active")}
    assert result.sources == {"output.format": ["r_active"]} and applied_by == ["r_active"]


def test_all_conditions_are_required_and_nested_or_list_values_match() -> None:
    rules = [rule("r1", "active", ["plan.tier=gold", "region=eu"], ["limits.max_tokens=4000"])]
    assert evaluate(rules, {"plan": {"tier": "Gold"}, "region": "eu"})[0].applied == {"limits.max_tokens": 4000}
    assert evaluate(rules, {"plan.tier": "gold", "region": ["us", "eu"]})[0].applied == {"limits.max_tokens": 4000}
    assert evaluate(rules, {"plan": {"tier": "gold"}})[0].applied == {}
    anything = [rule("r2", "active", ["ticket=*"], ["output.cite=true"])]
    assert evaluate(anything, {"ticket": 7123})[0].applied == {"output.cite": True}


def test_an_exception_keeps_a_rule_out_and_says_which() -> None:
    rules = [rule("r1", "active", ["room=kitchen"], ["device.volume=low"], ["guests=none", "hour=late"])]
    assert evaluate(rules, {"room": "kitchen", "guests": "two"})[0].applied == {"device.volume": "low"}
    result, _ = evaluate(rules, {"room": "kitchen", "hour": "late"})
    assert result.applied == {} and result.matched == []
    assert [(e.rule_id, e.exception) for e in result.excepted] == [("r1", {"hour": "late"})]


def test_conflicts_go_to_the_more_specific_rule_then_to_the_newer() -> None:
    broad = rule("r_broad", "active", ["team=ops"], ["reply.tone=formal"], age_min=1)
    narrow = rule("r_narrow", "active", ["team=ops", "channel=pager"], ["reply.tone=blunt"], age_min=60)
    newer = rule("r_newer", "active", ["team=ops"], ["reply.tone=friendly"], age_min=0)
    result, _ = evaluate([broad, narrow, newer], {"team": "ops", "channel": "pager"})
    assert result.applied == {"reply.tone": "blunt"}
    assert {(c.winner, c.loser) for c in result.conflicts} == {("r_narrow", "r_broad"), ("r_narrow", "r_newer")}
    assert all("more specific" in c.why for c in result.conflicts)
    result, _ = evaluate([broad, newer], {"team": "ops"})
    assert result.applied == {"reply.tone": "friendly"}
    assert result.conflicts[0].winner == "r_newer" and result.conflicts[0].why.startswith("newer")


def test_a_shadow_rule_in_a_conflict_changes_shadow_not_applied() -> None:
    active = rule("r_a", "active", ["app=crm"], ["export.format=json"], age_min=5)
    shadow = rule("r_s", "shadow", ["app=crm", "user.role=analyst"], ["export.format=parquet"])
    result, _ = evaluate([active, shadow], {"app": "crm", "user": {"role": "analyst"}})
    assert result.applied == {"export.format": "json"} and result.shadow == {"export.format": "parquet"}
    assert [(c.winner, c.shadow) for c in result.conflicts] == [("r_s", True)]


def test_deny_lists_join_allow_lists_narrow_each_other_prefer_orders() -> None:
    rules = [rule("r_d1", "active", [], ["tool.deny=ftp"]),
             rule("r_d2", "active", [], ["tool.deny=telnet,FTP"]),
             rule("r_a1", "active", [], ["tool.allow=wiki,jira,slack,telnet"]),
             rule("r_a2", "active", [], ["tool.allow=jira,slack,wiki"]),
             rule("r_p", "active", [], ["tool.prefer=slack,jira"])]
    applied = evaluate(rules, {})[0].applied
    assert sorted(n.lower() for n in applied["tool.deny"]) == ["ftp", "telnet"]  # once each, whatever the case
    assert applied["tool.prefer"] == ["slack", "jira"]
    assert sorted(applied["tool.allow"]) == ["jira", "slack", "wiki"]
    choice = choose(rules, ["ftp", "wiki", "Telnet", "jira", "email", "slack"])
    assert choice.selected == ["slack", "jira", "wiki"]
    assert choice.denied == ["ftp", "Telnet"] and choice.not_allowed == ["email"]
    assert choice.fallback is None and set(choice.shaped_by) == {"r_d1", "r_d2", "r_a1", "r_a2", "r_p"}


def test_allow_lists_that_leave_nothing_select_nothing_unless_not_strict() -> None:
    rules = [rule("r_a1", "active", [], ["tool.allow=maps"]), rule("r_a2", "active", [], ["tool.allow=weather"]),
             rule("r_d", "active", [], ["tool.deny=shell"])]
    strict = choose(rules, ["maps", "weather", "shell", "calc"])
    assert strict.selected == [] and strict.fallback is None and "strict" in " ".join(strict.explanation)
    loose = choose(rules, ["maps", "weather", "shell", "calc"], strict=False)
    assert loose.selected == ["maps", "weather", "calc"] and loose.denied == ["shell"]
    assert loose.fallback is not None and "deny" in loose.fallback and "r_a1" in loose.fallback


def test_no_tool_rule_selects_every_candidate() -> None:
    choice = choose([rule("r", "active", [], ["output.format=json"])], ["a", "b"])
    assert choice.selected == ["a", "b"] and choice.denied == [] and choice.fallback is None


@pytest.mark.parametrize(("if_", "then"), [
    (["topic"], ["output.format=json"]),  # no value
    ([], []),  # no action
    ([], ["tool.block=shell"]),  # not a tool key
    ([], ["tool.deny=rm -rf"]),  # not a tool name
    (["a=1", "A=2"], ["x.y=1"]),  # one key twice
    ([], ["Bad Key=1"]),
])
def test_a_rule_that_says_nothing_usable_is_refused(if_: list[str], then: list[str]) -> None:
    with pytest.raises(BadInputError):
        RuleSpec.from_pairs(if_, then)
