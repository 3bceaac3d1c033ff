"""LoCoMo evidence recall per budget and category: mnemoflow's default beside the two baselines, one run.

Baselines, as the foundation issue states them: BM25 over single turns, and a plain RRF (k=60)
of BM25 and MiniLM over single turns, each turn packed as `[session time] speaker: text`.
They run through the same harness with single-turn chunks (no neighbour context, no captions).

    .venv/bin/python bench/locomo.py [--data ../shared/eval/locomo] [--limit N]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import LOCOMO, RESULTS
from rich.console import Console

from mnemoflow.eval.locomo import run_locomo
from mnemoflow.eval.report import print_summary

SINGLE_TURNS = {"chat_context": "none", "chat_captions": False}
RUNS = {
    "baseline-bm25": ("bm25", SINGLE_TURNS),
    "baseline-rrf": ("rrf", SINGLE_TURNS),
    "mnemoflow-default": ("default", {}),
    "mnemoflow-default-duckdb-bm25": ("default", {"bm25_engine": "duckdb"}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LOCOMO)
    parser.add_argument("--budgets", default="512,2048")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--runs", default=",".join(RUNS))
    args = parser.parse_args()
    console = Console()
    budgets = [int(b) for b in args.budgets.split(",")]
    summary = {}
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in args.runs.split(","):
        preset, overrides = RUNS[name]
        report = run_locomo(args.data, budgets=budgets, preset=preset, limit=args.limit, settings_overrides=overrides)
        (RESULTS / f"locomo-{name}.json").write_text(json.dumps(report))
        console.print(f"[bold]{name}[/]")
        print_summary(report, console)
        summary[name] = report["budgets"]
    table = {name: {b: round(v[b]["evidence_recall"], 3) for b in v} for name, v in summary.items()}
    console.print_json(json.dumps(table))
    (RESULTS / "locomo_summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
