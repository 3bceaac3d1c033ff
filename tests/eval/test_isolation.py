"""Isolation probes: random tenants, users and shared rows, every read path from every scope; no leak on
either BM25 engine, and a store whose user wall were broken would be caught."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mnemoflow.config import Settings, load_settings
from mnemoflow.eval.isolation import run_isolation_probes
from mnemoflow.service import MemoryService
from mnemoflow.storage import scope as scope_module

SMALL = {"tenants": 2, "users": 2, "rows_per_user": 2}


@pytest.mark.parametrize("engine", ["lancedb", "duckdb"])
def test_no_read_path_leaks_across_scopes(settings: Settings, engine: str) -> None:
    report = run_isolation_probes(settings.model_copy(update={"bm25_engine": engine}), seed=11, **SMALL)
    assert report.rows == 2 * 2 * 3 and report.probes == report.rows * 4
    assert report.total_leaks == 0, report.leaked
    assert report.unreached == 0  # every probe reached what its scope may see: the probes can find rows


def test_the_probes_catch_a_broken_user_wall(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads that forget the user (only the tenant predicate left) must show up as leaks."""
    def tenant_only(scope, alias=""):
        return scope_module.tenant(scope.tenant_id, alias)

    from mnemoflow.storage import memories

    monkeypatch.setattr(memories, "visible", tenant_only)
    report = run_isolation_probes(settings, seed=11, **SMALL)
    assert report.leaks["get"] > 0 and report.leaks["get_all"] > 0
    assert report.leaked and "of probe" in report.leaked[0]


@pytest.mark.slow
def test_the_evaluate_job_records_runs_analysts_can_follow(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "eval" / "scenarios" / "conflict-dinner-venue.json", scenarios)
    with MemoryService(load_settings(tmp_path / "home", eval_scenarios_dir=scenarios,
                                     eval_locomo_dir=tmp_path / "no-locomo")) as service:
        first = service.maintain("evaluate")
        assert first.counts["scenarios"] == 1 and first.counts["leaks"] == 0
        assert first.problems == [f"locomo: eval_locomo_dir {tmp_path / 'no-locomo'} has no conversations.jsonl "
                                  "or questions.jsonl"]
        service.maintain("evaluate")
        _, rows = service.store.sql("SELECT suite, value, change FROM eval_trends WHERE metric = 'lancedb.leaks' "
                                    "ORDER BY created_at")
        assert rows == [("isolation", 0.0, None), ("isolation", 0.0, 0.0)]
        _, per_scenario = service.store.sql("SELECT item_id, metric FROM eval_results WHERE item_id <> '' "
                                            "AND metric = 'extraction_recall'")
        assert per_scenario == [("conflict-dinner-venue", "extraction_recall")] * 2
