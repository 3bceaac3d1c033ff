"""The memory tree's cost: the maintenance jobs (cluster, seal, profiles) beside the ingest they follow,
their idle re-runs, and what the tree adds to recall latency, the two presets interleaved query by query.

    .venv/bin/python bench/memory_tree.py [--data ../shared/eval/locomo] [--limit 2] [--queries 200]

Narrow queries are LoCoMo questions (the default preset gives them exactly what it gives them without
the tree); overview queries are "What did we talk about in <month>?" for every month of the chosen
conversations (the default packs summaries first for them).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from common import LOCOMO, RESULTS
from rich.console import Console

from mnemoflow.config import load_settings
from mnemoflow.eval.harness import to_transcript
from mnemoflow.eval.locomo import TENANT, load_questions, overview_questions
from mnemoflow.eval.metrics import percentile
from mnemoflow.recall import preset
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

JOBS = ("cluster", "seal", "profiles")


def latencies(service: MemoryService, questions: list[dict], configs: dict, budget: int) -> dict[str, dict]:
    """p50/p95 per preset, the presets asked in turn for each question (so load hits them alike)."""
    times: dict[str, list[float]] = {name: [] for name in configs}
    for q in questions:
        scope = Scope(TENANT, q["conversation_id"])
        for name, config in configs.items():
            t0 = time.perf_counter()
            service.recall(scope, q["question"], token_budget=budget, config=config)
            times[name].append((time.perf_counter() - t0) * 1000)
    return {name: {"p50": round(percentile(v, 50), 1), "p95": round(percentile(v, 95), 1), "n": len(v)}
            for name, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LOCOMO)
    parser.add_argument("--limit", type=int, default=2, help="conversations")
    parser.add_argument("--queries", type=int, default=200, help="narrow questions asked")
    parser.add_argument("--budget", type=int, default=512)
    args = parser.parse_args()
    console = Console()
    conversations, questions = load_questions(args.data, args.limit)
    configs = {"tree-off": preset("default").model_copy(update={"name": "tree-off", "summaries": "off",
                                                               "profile": "off"}),
               "default": preset("default")}
    result: dict = {"conversations": list(conversations), "jobs": {}}
    with tempfile.TemporaryDirectory(prefix="mnemoflow-tree-") as scratch, \
            MemoryService(load_settings(Path(scratch) / "home")) as service:
        started = time.perf_counter()
        for conversation_id, rows in conversations.items():
            path = Path(scratch) / f"{conversation_id}.jsonl"
            path.write_text("".join(json.dumps(t) + "\n" for t in to_transcript(rows)))
            service.ingest(Scope(TENANT, conversation_id), [path])
        result["ingest_s"] = round(time.perf_counter() - started, 1)
        for run in ("first", "idle"):
            for job in JOBS:
                started = time.perf_counter()
                report = service.maintain(job, tenant_id=TENANT)
                seconds = time.perf_counter() - started
                result["jobs"][f"{job} ({run})"] = {"seconds": round(seconds, 1),
                                                    "vs_ingest": round(seconds / result["ingest_s"], 3),
                                                    "counts": report.counts}
        service.recall(Scope(TENANT, questions[0]["conversation_id"]), "warm-up", config=configs["default"])
        result["narrow"] = latencies(service, questions[:args.queries], configs, args.budget)
        result["overview"] = latencies(service, overview_questions(conversations), configs, args.budget)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "memory_tree.json").write_text(json.dumps(result, indent=2))
    console.print_json(json.dumps(result))


if __name__ == "__main__":
    main()
