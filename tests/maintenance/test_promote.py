"""`promote`: SHADOW rules whose record meets the thresholds are suggested for ACTIVE, with the command
that does it; the job changes no state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.rules.model import RuleSpec
from mnemoflow.service import MemoryService
from mnemoflow.storage.scope import Scope
from tests.test_cli import run

OWNER = Scope("delta", "yuki")
THRESHOLDS = {"promote_min_evaluations": 3, "promote_min_ratings": 2, "promote_min_positive_rate": 0.75}


def _rated(service: MemoryService, context: dict, ratings: list[str]) -> None:
    for rating in ratings:
        selection = service.select_tools(OWNER, context, ["archive", "mailer", "sms"])
        service.rate_selection(OWNER, selection.selection_id, rating)  # type: ignore[arg-type]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    with MemoryService(load_settings(home, **THRESHOLDS)) as service:
        spec = RuleSpec.from_pairs
        earned = service.add_rule(OWNER, spec(["queue=billing"], ["tool.prefer=mailer"]), state="shadow")
        doubted = service.add_rule(OWNER, spec(["queue=fraud"], ["tool.deny=sms"]), state="shadow")
        service.add_rule(OWNER, spec(["queue=billing"], ["tool.deny=archive"]), state="active")
        unrated = service.add_rule(OWNER, spec(["queue=ops"], ["tool.prefer=sms"]), state="shadow")
        _rated(service, {"queue": "billing"}, ["positive", "positive", "positive", "negative"])  # 3 of 4
        _rated(service, {"queue": "fraud"}, ["positive", "negative", "negative"])  # 1 of 3
        for _ in range(5):
            service.evaluate_rules(OWNER, {"queue": "ops"})  # often matched, never rated
        home.joinpath("ids.json").write_text(json.dumps([earned.rule_id, doubted.rule_id, unrated.rule_id]))
    return home


def test_suggests_only_the_shadow_rules_that_earned_it_and_moves_none(home: Path) -> None:
    earned, doubted, unrated = json.loads(home.joinpath("ids.json").read_text())
    with MemoryService(load_settings(home, **THRESHOLDS)) as service:
        before = {r.rule_id: r.state for r in service.list_rules(OWNER)}
        report = service.maintain("promote")
        after = {r.rule_id: r.state for r in service.list_rules(OWNER)}
    (suggestion,) = report.details["suggestions"]
    assert suggestion["rule_id"] == earned and report.counts == {"suggested": 1}
    assert (suggestion["evaluations"], suggestion["positive"], suggestion["negative"]) == (4, 3, 1)
    assert suggestion["command"] == f"mnemoflow rules state {earned} active --tenant delta --user yuki"
    assert before == after and after[earned] == after[doubted] == after[unrated] == "shadow"


def test_maintain_promote_on_the_command_line(home: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    earned = json.loads(home.joinpath("ids.json").read_text())[0]
    for name, value in THRESHOLDS.items():
        monkeypatch.setenv(f"MNEMOFLOW_{name.upper()}", str(value))
    code, out, err = run(capsys, "maintain", "promote", "--home", str(home), "--json")
    assert code == 0, err
    assert [s["rule_id"] for s in json.loads(out)["details"]["suggestions"]] == [earned]
    code, out, _ = run(capsys, "maintain", "promote", "--home", str(home), "--tenant", "elsewhere", "--json")
    assert code == 0 and json.loads(out)["details"]["suggestions"] == []


@pytest.mark.slow
def test_the_flow_runs_the_same_job(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemoflow.flows.maintenance import maintain_flow

    earned = json.loads(home.joinpath("ids.json").read_text())[0]
    for name, value in THRESHOLDS.items():
        monkeypatch.setenv(f"MNEMOFLOW_{name.upper()}", str(value))
    result = maintain_flow(job="promote", home=str(home))
    assert [s["rule_id"] for s in result["details"]["suggestions"]] == [earned]
