"""What counting accesses costs recall: p50/p95 with `recall_track_access` on against off, in the same
process on the same store, queries interleaved (on, off, off, on, ...) so drift hits both alike;
and the batched UPDATE alone. Then what a decay run costs at that size.

    .venv/bin/python bench/recall_access.py --turns 2000 --queries 200
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
    parser.add_argument("--turns", type=int, default=4000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="LoCoMo data the corpus is recombined from.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnemoflow-bench-") as scratch:
        home = Path(scratch) / "home"
        settings = load_settings(home)
        with MemoryService(settings) as service:
            t0 = time.perf_counter()
            service.ingest(SCOPE, [write_jsonl(Path(scratch) / "chat.jsonl", synthetic_turns(args.turns, locomo=args.locomo))])
            build_s = time.perf_counter() - t0
            counts = service.store.counts(SCOPE)
            queries = synthetic_queries(args.queries, locomo=args.locomo)
            modes = {True: settings.model_copy(update={"recall_track_access": True}),
                     False: settings.model_copy(update={"recall_track_access": False})}
            for q in queries[:10]:
                service.recall(SCOPE, q)
            latencies: dict[bool, list[float]] = {True: [], False: []}
            returned = 0
            for n, q in enumerate(queries):
                for track in ((True, False) if n % 2 == 0 else (False, True)):
                    service.settings = modes[track]
                    t0 = time.perf_counter()
                    result = service.recall(SCOPE, q)
                    latencies[track].append((time.perf_counter() - t0) * 1000)
                    returned += track and sum(i.kind == "memory" for i in result.items)
            ids = [m.id for m in service.get_all(SCOPE, limit=20)]
            updates = []
            for _ in range(200):
                t0 = time.perf_counter()
                service.store.record_accesses(SCOPE, ids)
                updates.append((time.perf_counter() - t0) * 1000)
            service.settings = settings
            t0 = time.perf_counter()
            decay = service.maintain("decay")
            decay_s = time.perf_counter() - t0
    on, off = latencies[True], latencies[False]
    report = {
        "turns": args.turns, "chunks": counts["chunks"], "memories": counts["memories"], "build_s": round(build_s, 1),
        "queries": len(queries), "memories_returned_per_recall": round(returned / len(queries), 1),
        "tracking_off_ms": {"p50": round(percentile(off, 50), 1), "p95": round(percentile(off, 95), 1)},
        "tracking_on_ms": {"p50": round(percentile(on, 50), 1), "p95": round(percentile(on, 95), 1)},
        "ratio_p50": round(percentile(on, 50) / percentile(off, 50), 3),
        "ratio_p95": round(percentile(on, 95) / percentile(off, 95), 3),
        "update_20_ids_ms": {"p50": round(percentile(updates, 50), 2), "p95": round(percentile(updates, 95), 2)},
        "decay_run_s": round(decay_s, 2), "decay_counts": decay.counts,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "recall_access.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
