"""What counting accesses costs recall: p50/p95 with counting off (the baseline), buffered (the default:
written together every `recall_access_flush_s`) and written with every recall, in the same process
on the same store, the three taking turns on each query; what one write of the waiting accesses
costs; and what a decay run costs at that size.

    .venv/bin/python bench/recall_access.py --turns 1000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from common import LOCOMO, RESULTS, percentile, synthetic_queries, synthetic_turns, write_jsonl

from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("bench", "big")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="LoCoMo data the corpus is recombined from.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnemoflow-bench-") as scratch:
        home = Path(scratch) / "home"
        settings = load_settings(home)
        with MemoryService(settings) as service:
            t0 = time.perf_counter()
            turns = synthetic_turns(args.turns, locomo=args.locomo)
            service.ingest(SCOPE, [write_jsonl(Path(scratch) / "chat.jsonl", turns)])
            build_s = time.perf_counter() - t0
            counts = service.store.counts(SCOPE)
            queries = synthetic_queries(args.queries, locomo=args.locomo)
            modes = {"off": settings.model_copy(update={"recall_track_access": False}),
                     "buffered": settings,  # the default: written together every recall_access_flush_s
                     "every recall": settings}  # as recall_access_flush_s = 0: the write follows each recall
            for q in queries[:10]:
                service.recall(SCOPE, q)
            latencies: dict[str, list[float]] = {mode: [] for mode in modes}
            returned = 0
            order = list(modes)
            for n, q in enumerate(queries):
                for mode in order[n % 3:] + order[:n % 3]:  # rotated, so drift and caching hit each alike
                    service.settings = modes[mode]
                    t0 = time.perf_counter()
                    result = service.recall(SCOPE, q)
                    if mode == "every recall":
                        service.store.flush_accesses()
                    latencies[mode].append((time.perf_counter() - t0) * 1000)
                    returned += mode == "off" and sum(i.kind == "memory" for i in result.items)
            service.settings = settings
            service.store.flush_accesses()
            ids = [m.id for m in service.get_all(SCOPE, limit=20)]
            flushes, records = [], []
            for _ in range(100):
                t0 = time.perf_counter()
                service.store.record_accesses(SCOPE, ids)  # what a recall pays while accesses wait
                records.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                service.store.flush_accesses()
                flushes.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            decay = service.maintain("decay")
            decay_s = time.perf_counter() - t0
    base = latencies["off"]
    report = {
        "turns": args.turns, "chunks": counts["chunks"], "memories": counts["memories"], "build_s": round(build_s, 1),
        "queries": len(queries), "memories_returned_per_recall": round(returned / len(queries), 1),
        **{f"{mode} ms": {"p50": round(percentile(v, 50), 1), "p95": round(percentile(v, 95), 1),
                          "ratio_p50": round(percentile(v, 50) / percentile(base, 50), 3),
                          "ratio_p95": round(percentile(v, 95) / percentile(base, 95), 3)}
           for mode, v in latencies.items()},
        "recording 20 accesses ms": {"p50": round(percentile(records, 50), 3),
                                     "p95": round(percentile(records, 95), 3)},
        "one flush of 20 accesses ms": {"p50": round(percentile(flushes, 50), 2),
                                        "p95": round(percentile(flushes, 95), 2)},
        "decay_run_s": round(decay_s, 2), "decay_counts": decay.counts,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "recall_access.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
