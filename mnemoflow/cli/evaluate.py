"""Evaluation commands: LoCoMo and the memory-quality scenario suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, eval_app, out, progress_bar, writable
from mnemoflow.config import load_settings


@eval_app.command("locomo")
def eval_locomo(
    data: Annotated[Path, typer.Option("--data", help="Directory with conversations.jsonl and questions.jsonl.")],
    out_path: Annotated[Path, typer.Option("--out", help="Where to write report.json.")] = Path("report.json"),
    budgets: Annotated[str, typer.Option("--budgets", help="Comma-separated token budgets.")] = "512,2048",
    preset: Annotated[str, typer.Option(help="Recall preset to evaluate.")] = "default",
    home: Annotated[Path | None, typer.Option("--home", help="Store to build (default: a fresh temporary one).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations.")] = None,
    maintain: Annotated[str, typer.Option(
        "--maintain", help="Maintenance jobs to run after the ingest, in order, e.g. cluster,seal,profiles "
        "(the memory tree recall may use).")] = "",
) -> None:
    """LoCoMo evidence recall per token budget (DESIGN.md, evaluation protocol)."""
    from mnemoflow.eval.locomo import parse_budgets, run_locomo
    from mnemoflow.eval.report import print_summary
    from mnemoflow.recall import PRESETS

    try:
        budget_list = parse_budgets(budgets)
    except ValueError as exc:
        raise ArgumentError(str(exc)) from None
    if preset not in PRESETS:
        raise ArgumentError(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    for name in ("conversations.jsonl", "questions.jsonl"):
        if not (data / name).is_file():
            raise ArgumentError(f"--data {data}: {name} not found")
    from mnemoflow.maintenance import jobs

    jobs_asked = tuple(j.strip() for j in maintain.split(",") if j.strip())
    if unknown := [j for j in jobs_asked if j not in jobs()]:
        raise ArgumentError(f"--maintain: no maintenance job {unknown[0]!r}; one of: {', '.join(jobs())}")
    writable(out_path, "--out")
    with progress_bar() as progress:
        report = run_locomo(data, budgets=budget_list, preset=preset, home=home, limit=limit, progress=progress,
                            maintain=jobs_asked)
    out_path.write_text(json.dumps(report, ensure_ascii=False))
    print_summary(report, out)
    out.print(f"report: {out_path}")


@eval_app.command("scenarios")
def eval_scenarios(
    data: Annotated[Path, typer.Option("--data", help="Directory of scenario files.")] = Path("eval/scenarios"),
    out_path: Annotated[Path, typer.Option("--out", help="Where to write the report (JSON).")] = Path(
        "scenarios-report.json"),
    home: Annotated[Path | None, typer.Option("--home", help="Store to build (default: a fresh temporary one).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N scenarios (of the half chosen).", min=1)] = None,
    half: Annotated[str, typer.Option("--half", help="Which half of the suite: tune, check or all (see "
                                      "eval/scenarios/README.md).")] = "all",
) -> None:
    """Memory quality on the scenario suite: extraction precision/recall, relationships per class,
    recall checks and stale memories, for the rule-based engine; overall and per half (tune / check)."""
    import tempfile

    from mnemoflow.eval.scenario_report import summary_table
    from mnemoflow.eval.scenario_run import run_scenarios
    from mnemoflow.eval.scenarios import load_scenarios, select_half
    from mnemoflow.memory.rules import RuleEngine
    from mnemoflow.service import MemoryService

    if half not in ("tune", "check", "all"):
        raise ArgumentError(f"--half must be one of tune, check, all; got {half!r}")
    if not data.is_dir():
        raise ArgumentError(f"--data {data}: not a directory of scenario files")
    writable(out_path, "--out")
    scenarios = select_half(load_scenarios(data), half)[:limit]
    with tempfile.TemporaryDirectory(prefix="mnemoflow-scenarios-") as scratch:
        with MemoryService(load_settings(home or Path(scratch))) as service, progress_bar() as progress:
            task = progress.add_task("scenarios", total=len(scenarios))
            report = run_scenarios(service, scenarios, RuleEngine(), on_done=lambda _: progress.advance(task),
                                   config={"half": half, "limit": limit})
    out_path.write_text(report.model_dump_json(indent=1))
    out.print(summary_table(report))
    out.print(f"report: {out_path}")

