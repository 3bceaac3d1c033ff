"""One-screen summary of an evaluation report."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def print_summary(report: dict[str, Any], console: Console) -> None:
    budgets = report["budgets"]
    categories = sorted({c for b in budgets.values() for c in b["by_category"]})
    config = report["config"]
    table = Table(title=f"LoCoMo evidence recall - preset {config['preset']['name']}, "
                        f"{config['questions']} questions, {len(config['conversations'])} conversations")
    table.add_column("budget", justify="right")
    table.add_column("overall", justify="right")
    for category in categories:
        table.add_column(category, justify="right")
    table.add_column("p50 ms", justify="right")
    table.add_column("p95 ms", justify="right")
    for budget, row in budgets.items():
        cells = [f"{row['by_category'][c]['evidence_recall']:.3f}" if c in row["by_category"] else "-"
                 for c in categories]
        table.add_row(budget, f"{row['evidence_recall']:.3f}", *cells,
                      f"{row['latency_ms']['p50']:.1f}", f"{row['latency_ms']['p95']:.1f}")
    console.print(table)
    ingest = config["ingest"]
    console.print(f"ingest: {ingest['turns']} turns, {ingest['chunks']} chunks in {ingest['seconds']}s")
