"""Isolation probes: tenants whose owners fill a grid of users, agents, runs and containers, shared and
private rows, random probes of every service path from scopes of every level; no leak on either BM25
engine, every memory intact, and a store whose user wall or agent boundary were broken would be caught."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemoflow.config import Settings, load_settings
from mnemoflow.eval.isolation import (
    IsolationReport,
    Route,
    World,
    check_intact,
    probe,
    run_isolation_probes,
    service_route,
    write_world,
)
from mnemoflow.service import MemoryService
from mnemoflow.storage import scope as scope_module

LEVELS = {"user", "user+agent", "user+run", "user+container", "user+agent+run", "user+agent+container",
          "user+run+container", "user+agent+run+container", "agent", "agent+run", "agent+container",
          "agent+run+container", "run", "run+container"}
PATHS = {"recall", "search", "get", "history", "get_all", "delete", "update", "pin", "delete_all"}


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryService, World]]:
    """Two tenants whose owners fill the grid with one user (21 owners each), on LanceDB's BM25."""
    with MemoryService(load_settings(tmp_path_factory.mktemp("isolation") / "home")) as service:
        yield service, write_world(service, random.Random(11), tenants=2, users=1)


def reads_only(route: Route) -> Route:
    return {name: question for name, question in route.items() if question.kind in ("find", "fetch", "list")}


def test_no_service_path_leaks_across_scopes_of_any_level(probed: tuple[MemoryService, World]) -> None:
    service, world = probed
    report = IsolationReport(seed=11)
    probe(world, "service", service_route(service), 240, random.Random(11), report)
    check_intact(world, service, report)
    assert report.total_leaks == 0, report.leaked
    assert report.unreached == 0  # every probe reached what its scope may see: the probes can find rows
    assert report.probes == 240 and {where.removeprefix("service.") for where in report.paths} == PATHS
    assert set(report.levels) == LEVELS  # every kind of scope asked, strangers included
    assert report.intact.probes == 2 * 21 and report.intact.leaks == 0


def test_the_probes_catch_a_broken_user_wall(probed: tuple[MemoryService, World],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads that forget the owner (only the tenant predicate left) must show up as leaks."""
    def tenant_only(scope, alias=""):
        return scope_module.tenant(scope.tenant_id, alias)

    from mnemoflow.storage import memories, versions

    monkeypatch.setattr(memories, "visible", tenant_only)
    monkeypatch.setattr(versions, "visible", tenant_only)  # get reads a memory as it is now (its newest version)
    service, world = probed
    report = IsolationReport(seed=11)
    probe(world, "service", reads_only(service_route(service)), 120, random.Random(11), report)
    assert report.paths["service.get"].leaks > 0 and report.paths["service.get_all"].leaks > 0
    assert report.leaked and " of probe" in report.leaked[0]


def test_the_probes_catch_a_forgotten_agent_boundary(probed: tuple[MemoryService, World],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A storage layer that stamps rows with their agent but forgets it when it reads: a scope of one
    agent then sees the user's rows of every agent, and only scopes that name an agent leak."""
    monkeypatch.setattr(scope_module, "BOUNDARIES", ("run_id", "container"))
    service, world = probed
    report = IsolationReport(seed=11)
    probe(world, "service", reads_only(service_route(service)), 160, random.Random(11), report)
    leaky = {level for level, counts in report.levels.items() if counts.leaks}
    assert leaky and all("agent" in level for level in leaky), leaky


@pytest.mark.embedded_only("DuckDB FTS is the one-machine store's BM25 engine")
def test_the_evaluate_jobs_probes_on_duckdbs_bm25(settings: Settings) -> None:
    report = run_isolation_probes(settings.model_copy(update={"bm25_engine": "duckdb"}), seed=12, probes=120,
                                  tenants=2, users=1)
    assert (report.total_leaks, report.unreached, report.probes) == (0, 0, 120), report.leaked
    assert report.intact.probes == 42 and report.bm25_engine == "duckdb"


@pytest.mark.slow
def test_the_evaluate_job_records_runs_analysts_can_follow(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "eval" / "scenarios" / "conflict-grandma-birthday.json", scenarios)
    with MemoryService(load_settings(tmp_path / "home", eval_scenarios_dir=scenarios,
                                     eval_locomo_dir=tmp_path / "no-locomo")) as service:
        first = service.maintain("evaluate")
        assert first.counts["scenarios"] == 1 and first.counts["leaks"] == 0
        assert first.counts["isolation scope levels"] == len(LEVELS)
        assert first.problems == [(f"locomo: eval_locomo_dir {tmp_path / 'no-locomo'} has no "
                                   "conversations.jsonl or questions.jsonl")]
        service.maintain("evaluate")
        _, rows = service.store.sql("SELECT suite, value, change FROM eval_trends WHERE metric = 'lancedb.leaks' "
                                    "ORDER BY created_at")
        assert rows == [("isolation", 0.0, None), ("isolation", 0.0, 0.0)]
        _, levels = service.store.sql("SELECT count(DISTINCT item_id) FROM eval_results WHERE metric = 'leaks' "
                                      "AND item_id LIKE 'duckdb.level.%agent%' AND value = 0")
        assert levels == [(8,)]  # the eight levels that name an agent, each with its leak count (none)
        _, per_scenario = service.store.sql("SELECT item_id, metric FROM eval_results WHERE item_id <> '' "
                                            "AND metric = 'extraction_recall'")
        assert per_scenario == [("conflict-grandma-birthday", "extraction_recall")] * 2
        # the scenario runs keep their report page, which the dashboard serves; isolation has none
        runs = service.runs("acme").evaluations
        assert sorted((r.suite, r.has_report) for r in runs) == [("isolation", False)] * 2 + [("scenarios", True)] * 2
        page = service.run_report(next(r.run_id for r in runs if r.suite == "scenarios"))
        assert page.startswith("<!DOCTYPE html>") and "Scenario suite evaluation" in page
