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
    config = report["config"]
    budgets = report["budgets"]
    categories = sorted({c for b in budgets.values() for c in b["by_category"]})
    sessions = any("session_recall" in b for b in budgets.values())
    table = Table(title=f"{SUITE_NAMES.get(config['suite'], config['suite'])} evidence recall - "
                        f"{config['questions']} questions, {len(config['conversations'])} conversations")
    for name, justify in (("run", "left"), ("budget", "right"), ("overall", "right"),
                          *((("sessions", "right"),) if sessions else ()),
                          *((c, "right") for c in categories), ("p50 ms", "right"), ("p95 ms", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for name, run in runs(report).items():
        for budget, row in run["budgets"].items():
            cells = [f"{row['by_category'][c]['evidence_recall']:.3f}" if c in row["by_category"] else "-"
                     for c in categories]
            table.add_row(name, budget, f"{row['evidence_recall']:.3f}",
                          *((f"{row['session_recall']:.3f}",) if sessions else ()), *cells,
                          f"{row['latency_ms']['p50']:.1f}", f"{row['latency_ms']['p95']:.1f}")
    console.print(table)
    if sessions:
        console.print("sessions: answer-session recall (the share of answer sessions with a credited turn)")
    for name, run in runs(report).items():
        ingest = run["config"]["ingest"]
        tokens = f", {ingest['tokens']} tokens ({ingest['tokens'] / max(ingest['seconds'], 0.1):.0f}/s)" \
            if "tokens" in ingest else ""
        console.print(f"ingest ({name}): {ingest['turns']} turns, {ingest['chunks']} chunks{tokens} "
                      f"in {ingest['seconds']}s")
