"""Memory generation throughput (turns/s) and the recall latency memories and graph expansion add.

On real conversations (LoCoMo's, one user each): the turns are ingested without waiting, then the
generation worker is timed alone (engine, neighbour search, classification, writes), beside the
rule engine alone on the same turns and contexts (the ratio says what storage and relationships
cost on top of reading), in wall and in CPU seconds (on a shared machine, other work slows the
first only). Then, on the same store, every question of those conversations is asked three ways,
interleaved so that load affects all three alike: chunks only, chunks + memories, chunks +
memories + graph expansion (the default).

    .venv/bin/python bench/memory_generation.py --conversations 3 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from common import LOCOMO, RESULTS, locomo_rows, peak_rss_mb, percentile, write_jsonl

from mnemoflow.config import load_settings
from mnemoflow.eval.harness import to_transcript
from mnemoflow.memory.generate.candidates import TurnView
from mnemoflow.memory.turns import turn_context
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.memory.worker import drain_generation
from mnemoflow.recall import RecallFilters, preset
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import parse_timestamp

TENANT = "bench"


def conversations(n: int) -> dict[str, list[dict]]:
    rows = locomo_rows(LOCOMO)
    by_id: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_id[row["conversation_id"]].append(row)
    return {cid: to_transcript(by_id[cid]) for cid in list(by_id)[:n]}


def engine_alone(turns: list[dict]) -> float:
    """Seconds the rule engine takes over the same turns, with the same context (no storage)."""
    views = [TurnView(t["turn_id"], t["session_id"], t["speaker"], t["text"], parse_timestamp(t["ts"])) for t in turns]
    contexts = [turn_context(views, i) for i in range(len(views))]
    engine = RuleEngine()
    t0 = time.perf_counter()
    for context in contexts:
        engine.generate(context)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--budget", type=int, default=512)
    args = parser.parse_args()

    chats = conversations(args.conversations)
    n_turns = sum(len(t) for t in chats.values())
    questions = [json.loads(line) for line in (LOCOMO / "questions.jsonl").read_text().splitlines() if line.strip()]
    questions = [q for q in questions if q["conversation_id"] in chats]
    scratch = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-memory-"))
    generation_s, generation_cpu_s, engine_s, created = [], [], [], 0
    try:
        for repeat in range(args.repeats):
            home = scratch / f"home-{repeat}"
            with MemoryService(load_settings(home)) as service:
                warm = write_jsonl(scratch / "warmup.jsonl", next(iter(chats.values()))[:20])
                service.ingest(Scope(TENANT, "warmup"), [warm])  # imports, model load, first dlt run
                for cid, turns in chats.items():
                    service.ingest(Scope(TENANT, cid), [write_jsonl(scratch / f"{cid}.jsonl", turns)], wait=False)
                t0, cpu0 = time.perf_counter(), time.process_time()
                report = drain_generation(service.store, service.embedder, service.engine)
                generation_s.append(time.perf_counter() - t0)
                generation_cpu_s.append(time.process_time() - cpu0)
                assert report.turns == n_turns and not report.failed, report
                created = report.created
                engine_s.append(sum(engine_alone(turns) for turns in chats.values()))
                service.drain()
                print(f"repeat {repeat + 1}: generation {n_turns / generation_s[-1]:.1f} turns/s "
                      f"({n_turns / generation_cpu_s[-1]:.1f} per CPU second) "
                      f"({report.created} memories, links {report.linked}), "
                      f"engine alone {n_turns / engine_s[-1]:.0f} turns/s")
                if repeat == args.repeats - 1:
                    latency = recall_latency(service, questions, args.budget)
    finally:
        shutil.rmtree(scratch)

    generation_rate = n_turns / statistics.median(generation_s)
    engine_rate = n_turns / statistics.median(engine_s)
    result = {
        "conversations": list(chats), "turns": n_turns, "memories": created, "repeats": args.repeats,
        "generation_turns_per_s": round(generation_rate, 1),
        "generation_turns_per_cpu_s": round(n_turns / statistics.median(generation_cpu_s), 1),
        "engine_alone_turns_per_s": round(engine_rate, 1),
        "generation_vs_engine_alone": round(generation_rate / engine_rate, 3),
        "recall": latency, "peak_rss_mb": round(peak_rss_mb()),
    }
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "memory_generation.json").write_text(json.dumps(result, indent=2))


def recall_latency(service: MemoryService, questions: list[dict], budget: int) -> dict:
    """p50/p95 per way of recalling, and how many memories each packs on average."""
    default = preset("default")
    ways = {
        "chunks_only": (default, RecallFilters(kinds=["chunk"])),
        "with_memories": (default.model_copy(update={"name": "no-graph", "graph": False}), None),
        "with_memories_and_graph": (default, None),
    }
    for config, filters in ways.values():  # warm every path once
        service.recall(Scope(TENANT, questions[0]["conversation_id"]), "warm-up", token_budget=budget,
                       config=config, filters=filters)
    times: dict[str, list[float]] = defaultdict(list)
    packed: dict[str, list[int]] = defaultdict(list)
    for q in questions:
        scope = Scope(TENANT, q["conversation_id"])
        for name, (config, filters) in ways.items():
            t0 = time.perf_counter()
            result = service.recall(scope, q["question"], token_budget=budget, config=config, filters=filters)
            times[name].append((time.perf_counter() - t0) * 1000)
            packed[name].append(sum(item.kind == "memory" for item in result.items))
    base = times["chunks_only"]
    out = {"questions": len(questions), "budget": budget}
    for name, values in times.items():
        out[name] = {"p50_ms": round(percentile(values, 50), 1), "p95_ms": round(percentile(values, 95), 1),
                     "memories_packed_mean": round(statistics.mean(packed[name]), 2),
                     "p50_added_ms": round(percentile(values, 50) - percentile(base, 50), 1),
                     "p95_added_ms": round(percentile(values, 95) - percentile(base, 95), 1)}
    return out


if __name__ == "__main__":
    main()
