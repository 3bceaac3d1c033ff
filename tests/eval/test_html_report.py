"""`--html` on every eval command: the page opens in a real browser with every figure drawn, one bar
or point per figure in the report, and asks the network for nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mnemoflow.cli import main
from mnemoflow.eval.scenarios import CLASSES
from tests.eval.browser import chromium, rendered_figures
from tests.eval.test_locomo_harness import write_dataset


@pytest.fixture(scope="session")
def browser() -> str:
    return chromium()


def _run(*args: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    assert exit_info.value.code == 0


def benchmark_figures(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    """What the page of a LoCoMo or LongMemEval report must show: per recall and budget a bar per run for
    the overall figure and each category that run has; per budget a latency point per question and run;
    a context-size bar per run and budget."""
    runs = [report, *report.get("baselines", {}).values()]
    expected = {}
    for budget, figures in report["budgets"].items():
        for metric in ("evidence_recall", "session_recall"):
            if metric in figures:
                expected[f"recall-{metric}-{budget}"] = {
                    "bars": sum(1 + len(run["budgets"][budget]["by_category"]) for run in runs), "points": 0}
        expected[f"latency-{budget}"] = {
            "bars": 0, "points": sum(str(q["budget"]) == budget for run in runs for q in run["questions"])}
    expected["context-tokens"] = {"bars": len(runs) * len(report["budgets"]), "points": 0}
    return expected


def _check_page(browser: str, page: Path, expected: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
    figures = rendered_figures(page, browser)
    assert set(figures) == set(expected)
    for name, figure in figures.items():
        assert figure["width"] > 0 and figure["height"] > 0, name
        assert (figure["bars"], figure["points"]) == (expected[name]["bars"], expected[name]["points"]), name
        assert figure["all_inside"], f"{name}: a bar or point is drawn outside its figure"
    return figures


def _heights_follow_values(figure: dict[str, Any]) -> None:
    """On a share axis (0..1) every bar's height is its value times the same plot height (to the
    tenth of a pixel the SVG is written in)."""
    scale = max(height / value for value, height in figure["bar_heights"] if value > 0)
    assert all(abs(height - value * scale) <= 0.5 for value, height in figure["bar_heights"]), figure["bar_heights"]


def test_the_longmemeval_page_draws_every_figure(browser: str, longmemeval_run: tuple[dict, Path]) -> None:
    report, page = longmemeval_run
    figures = _check_page(browser, page, benchmark_figures(report))
    for budget in report["budgets"]:
        _heights_follow_values(figures[f"recall-evidence_recall-{budget}"])
        _heights_follow_values(figures[f"recall-session_recall-{budget}"])


def test_the_locomo_page_draws_every_figure(browser: str, tmp_path: Path) -> None:
    report_path, page = tmp_path / "report.json", tmp_path / "report.html"
    _run("eval", "locomo", "--data", str(write_dataset(tmp_path)), "--budgets", "64,512", "--out", str(report_path),
         "--html", str(page))
    report = json.loads(report_path.read_text())
    assert list(report["baselines"]) == ["rrf"]  # the default baseline runs beside it
    figures = _check_page(browser, page, benchmark_figures(report))
    _heights_follow_values(figures["recall-evidence_recall-64"])


def test_the_scenario_page_draws_every_figure(browser: str, tmp_path: Path) -> None:
    report_path, page = tmp_path / "scenarios.json", tmp_path / "scenarios.html"
    _run("eval", "scenarios", "--limit", "3", "--out", str(report_path), "--html", str(page))
    report = json.loads(report_path.read_text())
    halves = [report] + [h for h in report["halves"].values() if h["scenarios_count"]]
    headline = sum(value is not None for h in halves for value in (
        h["extraction"]["precision"], h["extraction"]["recall"], h["extraction"]["kind_accuracy"],
        h["recall"]["pass_rate"], h["recall"]["hit_rate"]))
    relationships = sum(h["relationships"][c]["accuracy"] is not None for h in halves for c in CLASSES)
    tags = sum(c[k] is not None for c in report["extraction_by_tag"].values() for k in ("precision", "recall"))
    figures = _check_page(browser, page, {"headline": {"bars": headline, "points": 0},
                                 "relationships": {"bars": relationships, "points": 0},
                                 "extraction-by-tag": {"bars": tags, "points": 0}})
    _heights_follow_values(figures["headline"])
    assert headline > 0 and tags > 0
