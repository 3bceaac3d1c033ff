"""One-screen summary of a benchmark report (LoCoMo, LongMemEval) and the baselines run beside it."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

SUITE_NAMES = {"locomo": "LoCoMo", "longmemeval": "LongMemEval"}


def runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's runs by name: the product's preset first, then each baseline run beside it."""
    named = {report["config"]["preset"]["name"]: report}
    named.update({f"baseline-{name}": run for name, run in report.get("baselines", {}).items()})
    return named


def print_summary(report: dict[str, Any], console: Console) -> None:
    """One column per run and budget (narrow enough for a terminal however many categories there are):
    evidence recall overall, answer-session recall where the suite has it, each category, latency."""
    config = report["config"]
    named = runs(report)
    columns = [(name, budget, row) for name, run in named.items() for budget, row in run["budgets"].items()]
    categories = sorted({c for _, _, row in columns for c in row["by_category"]})
    table = Table(title=f"{SUITE_NAMES.get(config['suite'], config['suite'])} evidence recall - "
                        f"{config['questions']} questions, {len(config['conversations'])} conversations")
    table.add_column("", no_wrap=True)
    for name, budget, _ in columns:
        table.add_column(f"{name.removeprefix('baseline-')} @{budget}", justify="right")
    table.add_row("evidence recall", *(f"{row['evidence_recall']:.3f}" for _, _, row in columns))
    if all("session_recall" in row for _, _, row in columns):
        table.add_row("session recall", *(f"{row['session_recall']:.3f}" for _, _, row in columns))
    for category in categories:
        table.add_row(f"  {category}", *(f"{row['by_category'][category]['evidence_recall']:.3f}"
                                         if category in row["by_category"] else "-" for _, _, row in columns))
    for p in ("p50", "p95"):
        table.add_row(f"latency {p} ms", *(f"{row['latency_ms'][p]:.1f}" for _, _, row in columns))
    console.print(table)
    baselines = ", ".join(report.get("baselines", {}))
    console.print(("baselines: " + baselines + " (single turns); " if baselines else "")
                  + ("session recall: the share of answer sessions with a credited turn" if any(
                      "session_recall" in row for _, _, row in columns) else ""))
    for name, run in runs(report).items():
        ingest = run["config"]["ingest"]
        tokens = f", {ingest['tokens']} tokens ({ingest['tokens'] / max(ingest['seconds'], 0.1):.0f}/s)" \
            if "tokens" in ingest else ""
        console.print(f"ingest ({name}): {ingest['turns']} turns, {ingest['chunks']} chunks{tokens} "
                      f"in {ingest['seconds']}s")
