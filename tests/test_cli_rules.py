"""`mnemoflow rules` and `mnemoflow tools` end to end on a real store: states moved from the command
line, what each state does to `applied`, exceptions, deny/allow/prefer, the non-strict fallback,
isolation between users and tenants, feedback counts, and the chain recording each move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import run


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    home = str(tmp_path / "home")

    def call(*args: str, user: str = "mira", tenant: str = "orbit", ok: bool = True) -> str:
        code, out, err = run(capsys, *args, "--home", home, "--tenant", tenant, "--user", user)
        assert (code == 0) == ok, (args, code, err)
        return out if ok else err

    call.home = home  # type: ignore[attr-defined]
    return call


def evaluate(cli, context: dict, **who: str) -> dict:
    return json.loads(cli("rules", "evaluate", "--context", json.dumps(context), "--json", **who))


def test_rules_move_through_their_states_and_only_active_ones_apply(cli, capsys: pytest.CaptureFixture[str]) -> None:
    rule_id = cli("rules", "add", "--if", "task=report", "--if", "audience=board", "--then", "report.pages=2",
                  "--then", "tool.deny=spreadsheet").strip()
    assert rule_id.startswith("rul_")
    situation = {"task": "report", "audience": "board"}
    listed = json.loads(cli("rules", "list", "--state", "draft", "--json"))
    assert [(r["rule_id"], r["state"], r["if"]) for r in listed] == [(rule_id, "draft", {"task": "report",
                                                                                           "audience": "board"})]
    drafted = evaluate(cli, situation)
    assert drafted["matched"] == [] and drafted["applied"] == {}  # a draft is recorded, nothing more

    assert "draft -> shadow" in cli("rules", "state", rule_id, "shadow")
    shadowed = evaluate(cli, situation)
    assert [(m["rule_id"], m["state"]) for m in shadowed["matched"]] == [(rule_id, "shadow")]
    assert shadowed["applied"] == {} and shadowed["shadow"] == {"report.pages": 2, "tool.deny": ["spreadsheet"]}

    assert "shadow -> active" in cli("rules", "state", rule_id, "active")
    active = evaluate(cli, situation)
    assert active["applied"] == {"report.pages": 2, "tool.deny": ["spreadsheet"]} and active["shadow"] == {}
    assert active["sources"]["report.pages"] == [rule_id]
    assert evaluate(cli, {"task": "report"})["applied"] == {}  # one condition of two is not enough

    cli("rules", "state", rule_id, "retired")
    assert evaluate(cli, situation)["applied"] == {}
    assert "stays so" in cli("rules", "state", rule_id, "active", ok=False)
    moves = json.loads(cli("rules", "list", "--json"))[0]
    assert moves["state"] == "retired"

    code, out, _ = run(capsys, "verify", "--home", cli.home)  # every move is a commit in the chain
    assert code == 0 and "orbit" in out and "ok" in out


def test_exceptions_hold_and_conflicts_name_their_winner(cli) -> None:
    general = cli("rules", "add", "--if", "kind=email", "--then", "draft.tone=warm", "--except", "recipient=legal",
                  "--state", "active").strip()
    specific = cli("rules", "add", "--if", "kind=email", "--if", "urgency=high", "--then", "draft.tone=direct",
                   "--state", "active").strip()
    assert evaluate(cli, {"kind": "email"})["applied"] == {"draft.tone": "warm"}
    held = evaluate(cli, {"kind": "email", "recipient": "legal"})
    assert held["applied"] == {} and held["excepted"][0]["rule_id"] == general
    both = evaluate(cli, {"kind": "email", "urgency": "high"})
    assert both["applied"] == {"draft.tone": "direct"}
    assert [(c["winner"], c["loser"]) for c in both["conflicts"]] == [(specific, general)]


def test_tool_selection_combines_lists_and_reports_the_fallback(cli) -> None:
    cli("rules", "add", "--if", "env=prod", "--then", "tool.deny=ssh", "--state", "active")
    cli("rules", "add", "--if", "env=prod", "--then", "tool.allow=grafana,pagerduty,ssh", "--state", "active")
    cli("rules", "add", "--then", "tool.allow=grafana,statuspage", "--then", "tool.prefer=grafana", "--state", "active")

    def select(*extra: str, candidates: str = "ssh,pagerduty,grafana,statuspage") -> dict:
        return json.loads(cli("tools", "select", "--context", '{"env": "prod"}', "--candidates", candidates,
                              *extra, "--json"))

    chosen = select()
    assert chosen["selected"] == ["grafana"] and chosen["denied"] == ["ssh"]
    assert set(chosen["not_allowed"]) == {"pagerduty", "statuspage"} and chosen["fallback"] is None
    assert chosen["selection_id"].startswith("sel_")

    strict = select(candidates="ssh,pagerduty")  # the allow-lists together leave nothing of these
    assert strict["selected"] == [] and strict["fallback"] is None
    loose = select("--no-strict", candidates="ssh,pagerduty")
    assert loose["selected"] == ["pagerduty"] and loose["denied"] == ["ssh"]
    assert "deny" in loose["fallback"]


def test_another_user_and_another_tenant_see_nothing(cli) -> None:
    cli("rules", "add", "--if", "mode=focus", "--then", "notify.mute=true", "--state", "active")
    assert evaluate(cli, {"mode": "focus"})["applied"] == {"notify.mute": True}
    for who in ({"user": "zed"}, {"tenant": "rival"}):
        other = evaluate(cli, {"mode": "focus"}, **who)
        assert other["matched"] == [] and other["applied"] == {}
        assert json.loads(cli("rules", "list", "--json", **who)) == []
        selected = json.loads(cli("tools", "select", "--context", '{"mode": "focus"}', "--candidates", "a", "--json",
                                  **who))
        assert selected["rules"] == []
    shared = cli("rules", "add", "--then", "notify.digest=daily", "--state", "active", "--shared").strip()
    assert evaluate(cli, {}, user="zed")["sources"] == {"notify.digest": [shared]}  # shared with the tenant
    assert evaluate(cli, {}, tenant="rival")["applied"] == {}
    assert "no rule" in cli("rules", "state", shared, "retired", user="zed", ok=False)  # seen, not theirs to move


def test_feedback_is_counted_for_every_rule_that_matched(cli) -> None:
    deny = cli("rules", "add", "--if", "site=docs", "--then", "tool.deny=crawler", "--state", "active").strip()
    watch = cli("rules", "add", "--if", "site=docs", "--then", "tool.prefer=sitemap", "--state", "shadow").strip()

    def select() -> dict:
        return json.loads(cli("tools", "select", "--context", '{"site": "docs"}', "--candidates",
                              "crawler,search,sitemap", "--json"))

    first, second = select(), select()
    assert first["selected"] == ["search", "sitemap"]  # the SHADOW rule's preference changes nothing ...
    assert first["shadow"] == {"selected": ["sitemap", "search"], "denied": ["crawler"]}  # ... it is reported
    rated = json.loads(cli("tools", "feedback", first["selection_id"], "positive", "--json"))
    assert {r["rule_id"] for r in rated["rules"]} == {deny, watch}
    cli("tools", "feedback", second["selection_id"], "negative")
    cli("tools", "feedback", second["selection_id"], "negative")  # the same rating again counts once
    assert "already rated" in cli("tools", "feedback", second["selection_id"], "positive", ok=False)
    assert "no tool selection" in cli("tools", "feedback", first["selection_id"], "negative", user="zed", ok=False)
    stats = {r["rule_id"]: r["stats"] for r in json.loads(cli("rules", "list", "--json"))}
    assert stats[deny] == {"evaluations": 2, "applications": 2, "positive": 1, "negative": 1}
    assert stats[watch] == {"evaluations": 2, "applications": 0, "positive": 1, "negative": 1}


@pytest.mark.parametrize("args", [
    ["rules", "add", "--then", "nokey"],
    ["rules", "add", "--if", "a=1"],
    ["rules", "add", "--then", "x.y=1", "--state", "retired"],
    ["rules", "list", "--state", "sleeping"],
    ["rules", "state", "rul_x", "paused"],
    ["rules", "evaluate", "--context", "{not json"],
    ["rules", "evaluate", "--context", "[1, 2]"],
    ["tools", "select", "--context", "{}", "--candidates", "ok,bad name"],
    ["tools", "feedback", "sel_x", "meh"],
])
def test_a_wrong_argument_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                 args: list[str]) -> None:
    code, _, err = run(capsys, *args, "--home", str(tmp_path / "home"))
    assert code == 2 and err.count("\n") == 1 and err.startswith("mnemoflow: ")
