"""Evaluation commands: LoCoMo, LongMemEval and the memory-quality scenario suite; each writes a JSON
report and, with --html, a self-contained page of figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer

from mnemoflow.cli.app import ArgumentError, eval_app, out, progress_bar, writable
from mnemoflow.config import load_settings

if TYPE_CHECKING:
    from mnemoflow.eval.harness import Benchmark

Budgets = Annotated[str, typer.Option("--budgets", help="Comma-separated token budgets.")]
Preset = Annotated[str, typer.Option(help="Recall preset to evaluate.")]
Home = Annotated[Path | None, typer.Option("--home", help="Store to build (default: a fresh temporary one).")]
Maintain = Annotated[str, typer.Option(
    "--maintain", help="Maintenance jobs to run after the ingest, in order, e.g. cluster,seal,profiles "
    "(the memory tree recall may use).")]
Baselines = Annotated[str, typer.Option(
    "--baselines", help="Baselines run beside it on their own single-turn stores: rrf, bm25 (comma-separated), "
    "or none.")]
Html = Annotated[Path | None, typer.Option("--html", help="Also write the report as a self-contained HTML page "
                                                          "with figures.")]


class BenchmarkOptions(NamedTuple):
    budgets: list[int]
    maintain: tuple[str, ...]
    baselines: list[str]


def _benchmark_options(budgets: str, preset: str, maintain: str, baselines: str, out_path: Path,
                       html: Path | None) -> BenchmarkOptions:
    """The options LoCoMo and LongMemEval share, checked before any work is done."""
    from mnemoflow.eval.baselines import parse_baselines
    from mnemoflow.eval.harness import parse_budgets
    from mnemoflow.maintenance import jobs
    from mnemoflow.recall import PRESETS

    try:
        budget_list, baseline_list = parse_budgets(budgets), parse_baselines(baselines)
    except ValueError as exc:
        raise ArgumentError(str(exc)) from None
    if preset not in PRESETS:
        raise ArgumentError(f"--preset must be one of {', '.join(PRESETS)}; got {preset!r}")
    jobs_asked = tuple(j.strip() for j in maintain.split(",") if j.strip())
    if unknown := [j for j in jobs_asked if j not in jobs()]:
        raise ArgumentError(f"--maintain: no maintenance job {unknown[0]!r}; one of: {', '.join(jobs())}")
    writable(out_path, "--out")
    if html is not None:
        writable(html, "--html")
    return BenchmarkOptions(budget_list, jobs_asked, baseline_list)


def _run_benchmark(benchmark: Benchmark, options: BenchmarkOptions, preset: str, out_path: Path, html: Path | None,
                   home: Path | None) -> None:
    from mnemoflow.eval.harness import run_with_baselines
    from mnemoflow.eval.html_report import benchmark_html
    from mnemoflow.eval.report import print_summary

    with progress_bar() as progress:
        report = run_with_baselines(benchmark, budgets=options.budgets, preset=preset, baselines=options.baselines,
                                    home=home, progress=progress, maintain=options.maintain)
    out_path.write_text(json.dumps(report, ensure_ascii=False))
    _write_html(html, benchmark_html(report))
    print_summary(report, out)
    out.print(f"report: {out_path}")


def _write_html(html: Path | None, page: str) -> None:
    if html is not None:
        html.write_text(page)
        out.print(f"html: {html}")


@eval_app.command("locomo")
def eval_locomo(
    data: Annotated[Path, typer.Option("--data", help="Directory with conversations.jsonl and questions.jsonl.")],
    out_path: Annotated[Path, typer.Option("--out", help="Where to write report.json.")] = Path("report.json"),
    budgets: Budgets = "512,2048",
    preset: Preset = "default",
    home: Home = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations.", min=1)] = None,
    maintain: Maintain = "",
    baselines: Baselines = "rrf",
    html: Html = None,
) -> None:
    """LoCoMo evidence recall per token budget and category, beside the baselines (DESIGN.md,
    evaluation protocol)."""
    from mnemoflow.eval.locomo import locomo_benchmark

    options = _benchmark_options(budgets, preset, maintain, baselines, out_path, html)
    for name in ("conversations.jsonl", "questions.jsonl"):
        if not (data / name).is_file():
            raise ArgumentError(f"--data {data}: {name} not found")
    _run_benchmark(locomo_benchmark(data, limit), options, preset, out_path, html, home)


@eval_app.command("longmemeval")
def eval_longmemeval(
    data: Annotated[Path, typer.Option("--data", help="A LongMemEval file in the official JSON format "
                                                      "(longmemeval_s.json, longmemeval_m.json or a sample).")],
    out_path: Annotated[Path, typer.Option("--out", help="Where to write report.json.")] = Path("report.json"),
    budgets: Budgets = "512,2048",
    preset: Preset = "default",
    home: Home = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions (abstention ones are skipped).",
                                              min=1)] = None,
    maintain: Maintain = "",
    baselines: Baselines = "rrf",
    html: Html = None,
) -> None:
    """LongMemEval evidence-turn and answer-session recall per token budget and question type, each
    question's haystack in its own scope, beside the baselines; abstention questions are skipped."""
    from mnemoflow.errors import BadInputError
    from mnemoflow.eval.longmemeval import longmemeval_benchmark

    options = _benchmark_options(budgets, preset, maintain, baselines, out_path, html)
    if not data.is_file():
        raise ArgumentError(f"--data {data}: not a file")
    try:
        benchmark = longmemeval_benchmark(data, limit)
    except BadInputError as exc:
        raise ArgumentError(f"--data {exc}") from None
    _run_benchmark(benchmark, options, preset, out_path, html, home)


@eval_app.command("scenarios")
def eval_scenarios(
    data: Annotated[Path, typer.Option("--data", help="Directory of scenario files.")] = Path("eval/scenarios"),
    out_path: Annotated[Path, typer.Option("--out", help="Where to write the report (JSON).")] = Path(
        "scenarios-report.json"),
    home: Annotated[Path | None, typer.Option("--home", help="Store to build (default: a fresh temporary one).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N scenarios (of the half chosen).", min=1)] = None,
    half: Annotated[str, typer.Option("--half", help="Which half of the suite: tune, check or all (see "
                                      "eval/scenarios/README.md).")] = "all",
    html: Html = None,
) -> None:
    """Memory quality on the scenario suite: extraction precision/recall, relationships per class,
    recall checks and stale memories, for the rule-based engine; overall and per half (tune / check)."""
    import tempfile

    from mnemoflow.eval.html_report import scenarios_html
    from mnemoflow.eval.scenario_report import summary_table
    from mnemoflow.eval.scenario_run import run_scenarios
    from mnemoflow.eval.scenarios import load_scenarios, select_half
    from mnemoflow.memory.generate.rules import RuleEngine
    from mnemoflow.service import MemoryService

    if half not in ("tune", "check", "all"):
        raise ArgumentError(f"--half must be one of tune, check, all; got {half!r}")
    if not data.is_dir():
        raise ArgumentError(f"--data {data}: not a directory of scenario files")
    writable(out_path, "--out")
    if html is not None:
        writable(html, "--html")
    scenarios = select_half(load_scenarios(data), half)[:limit]
    with (tempfile.TemporaryDirectory(prefix="mnemoflow-scenarios-") as scratch,
          MemoryService(load_settings(home or Path(scratch))) as service, progress_bar() as progress):
        task = progress.add_task("scenarios", total=len(scenarios))
        report = run_scenarios(service, scenarios, RuleEngine(), on_done=lambda _: progress.advance(task),
                               config={"half": half, "limit": limit})
    out_path.write_text(report.model_dump_json(indent=1))
    _write_html(html, scenarios_html(report))
    out.print(summary_table(report))
    out.print(f"report: {out_path}")



@eval_app.command("documents")
def eval_documents(
    data: Annotated[Path, typer.Option("--data", help="Directory with docs/ and questions.jsonl (e.g. eval/cjk).")
                    ] = Path("eval/cjk"),
    out_path: Annotated[Path, typer.Option("--out", help="Where to write report.json.")] = Path(
        "documents-report.json"),
    budgets: Budgets = "256,512",
    baselines: Annotated[str, typer.Option(
        "--baselines", help="Run beside the default recall on the same store: bm25, rrf, vector (the embedder "
        "alone), comma-separated, or none.")] = "bm25,rrf,vector",
    home: Home = None,
) -> None:
    """Answer-in-context over a folder of documents per token budget and language, beside BM25-only, RRF
    and vector-only recall (the Chinese, Japanese and Korean set in eval/cjk)."""
    from mnemoflow.eval.documents import run_documents
    from mnemoflow.eval.harness import parse_budgets

    try:
        budget_list = parse_budgets(budgets)
    except ValueError as exc:
        raise ArgumentError(str(exc)) from None
    names = [n.strip() for n in baselines.split(",") if n.strip() and n.strip() != "none"]
    if unknown := [n for n in names if n not in ("bm25", "rrf", "vector")]:
        raise ArgumentError(f"--baselines: no baseline {unknown[0]!r}; one of: bm25, rrf, vector, or none")
    if not (data / "questions.jsonl").is_file() or not (data / "docs").is_dir():
        raise ArgumentError(f"--data {data}: needs docs/ and questions.jsonl")
    writable(out_path, "--out")
    report = run_documents(data, budget_list, baselines=names, home=home)
    out_path.write_text(json.dumps(report, ensure_ascii=False))
    for name, run in report["runs"].items():
        figures = "; ".join(
            f"@{b}: {s['answered']}/{s['questions']} (" + ", ".join(f"{k} {v}" for k, v in s["by_language"].items()) + ")"
            for b, s in run["budgets"].items())
        out.print(f"{name}: {figures}")
    out.print(f"report: {out_path}")
