"""LoCoMo evidence recall per budget and category: mnemoflow's default beside the two baselines, one run.

Baselines (`mnemoflow/eval/baselines.py`), as the foundation issue states them: BM25 over single
turns, and a plain RRF (k=60) of BM25 and MiniLM over single turns, each turn packed as
`[session time] speaker: text`; single-turn chunks, no neighbour context, no captions, no memories.
`mnemoflow-chunks-only` is the default without memory generation: what the memories add is the
difference between it and `mnemoflow-default` in the same run.

    .venv/bin/python bench/locomo.py [--data ../shared/eval/locomo] [--limit N]
    .venv/bin/python bench/locomo.py --runs ablations      # the default minus one thing at a time
    .venv/bin/python bench/locomo.py --runs tree           # the memory tree: one store, cluster + seal + profiles,
                                                           # its recall variants side by side, with overviews
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import LOCOMO, RESULTS
from rich.console import Console

from mnemoflow.eval.baselines import BASELINES
from mnemoflow.eval.locomo import run_locomo, run_locomo_presets
from mnemoflow.eval.report import print_summary
from mnemoflow.recall import preset

RUNS = {
    **{f"baseline-{name}": (b.recall, b.settings) for name, b in BASELINES.items()},
    "mnemoflow-default": ("default", {}),
    "mnemoflow-chunks-only": ("default", {"generate_memories": False}),
    "mnemoflow-default-duckdb-bm25": ("default", {"bm25_engine": "duckdb"}),
}
_DEFAULT = preset("default")
ABLATIONS = {
    "no-neighbour-context": ("default", {"chat_context": "none"}),
    "previous-turn-context-only": ("default", {"chat_context": "previous"}),
    "plain-rrf60-weights": (_DEFAULT.model_copy(update={"name": "rrf60", "rrf_k": 60,
                                                        "signals": {"vector": 1.0, "bm25": 1.0}}), {}),
    "memories-without-graph": (_DEFAULT.model_copy(update={"name": "no-graph", "graph": False}), {}),
    "graph-through-speakers": (_DEFAULT.model_copy(update={"name": "graph-speakers", "graph_skip_speakers": False}), {}),
    "drop-restated-memories": (_DEFAULT.model_copy(update={"name": "drop-restated", "drop_restated_memories": True}),
                               {}),
    "no-speaker-factor": (_DEFAULT.model_copy(update={"name": "no-speaker", "speaker_factor": 1.0}), {}),
    "no-session-headers": (_DEFAULT.model_copy(update={"name": "no-headers", "group_sessions": False}), {}),
    "captions-hidden": ("default", {"chat_captions": False}),
    "depth-200": (_DEFAULT.model_copy(update={"name": "depth-200", "depth": 200}), {}),
}
RUNS.update(ABLATIONS)
# The memory tree, asked on one store after the maintenance jobs: the default preset (summaries for
# broad queries, the profile for person queries) beside no tree at all and the tree on every query.
TREE_JOBS = ("cluster", "seal", "profiles")
TREE_VARIANTS = {
    "tree-off": {"summaries": "off", "profile": "off"},
    "tree-default": {},
    "summaries-ranked": {"summaries": "ranked", "profile": "off"},
    "profile-ranked": {"summaries": "off", "profile": "ranked"},
    "topic-boost-0.1": {"summaries": "off", "profile": "off", "topic_boost": 0.1},
    "topic-boost-0.3": {"summaries": "off", "profile": "off", "topic_boost": 0.3},
}


def run_tree(args: argparse.Namespace, budgets: list[int], console: Console) -> None:
    presets = [_DEFAULT.model_copy(update={"name": name, **update}) for name, update in TREE_VARIANTS.items()]
    reports = run_locomo_presets(args.data, budgets=budgets, presets=presets, limit=args.limit, maintain=TREE_JOBS,
                                 overviews=True)
    summary = {}
    for name, report in reports.items():
        (RESULTS / f"locomo-{name}.json").write_text(json.dumps(report))
        console.print(f"[bold]{name}[/] overviews: session coverage {report['overviews']['session_coverage']}")
        print_summary(report, console)
        summary[name] = {"budgets": report["budgets"], "overviews": report["overviews"]["session_coverage"]}
    console.print_json(json.dumps({"maintain": reports["tree-default"]["config"]["maintain"]}))
    (RESULTS / "locomo_summary_tree.json").write_text(json.dumps(summary, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LOCOMO)
    parser.add_argument("--budgets", default="512,2048")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--runs", default=",".join(n for n in RUNS if n not in ABLATIONS),
                        help="comma-separated run names, 'ablations', or 'tree'")
    args = parser.parse_args()
    console = Console()
    budgets = [int(b) for b in args.budgets.split(",")]
    summary = {}
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.runs == "tree":
        run_tree(args, budgets, console)
        return
    names = list(ABLATIONS) if args.runs == "ablations" else args.runs.split(",")
    for name in names:
        preset, overrides = RUNS[name]
        report = run_locomo(args.data, budgets=budgets, preset=preset, limit=args.limit, settings_overrides=overrides)
        (RESULTS / f"locomo-{name}.json").write_text(json.dumps(report))
        console.print(f"[bold]{name}[/]")
        print_summary(report, console)
        summary[name] = report["budgets"]
    table = {name: {b: round(v[b]["evidence_recall"], 3) for b in v} for name, v in summary.items()}
    console.print_json(json.dumps(table))
    (RESULTS / f"locomo_summary{'_ablations' if args.runs == 'ablations' else ''}.json").write_text(
        json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
