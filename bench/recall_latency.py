"""Recall latency p50/p95 at 10k and 100k chunks in one tenant, query embedding included, and peak memory.

The store is built through the real ingest path (synthetic conversations recombined from
LoCoMo sentences, plus two small neighbouring tenants), then queried from a fresh process
so its peak RSS is what serving costs. Both online BM25 engines are timed, as is a rebuild
of DuckDB's FTS index (the analysts' index) at that size.

    .venv/bin/python bench/recall_latency.py --sizes 10000,100000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from common import RESULTS, peak_rss_mb, percentile, recall_latencies_ms, synthetic_queries, synthetic_turns, write_jsonl

from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("bench", "big")
NEIGHBOURS = [Scope("other", "a"), Scope("third", "b")]


def build(home: Path, size: int) -> dict:
    scratch = home.parent
    turns = synthetic_turns(size)
    t0 = time.perf_counter()
    # chunk recall at scale; what memories and graph expansion add is bench/memory_generation.py
    with MemoryService(load_settings(home, generate_memories=False)) as service:
        service.ingest(SCOPE, [write_jsonl(scratch / f"big-{size}.jsonl", turns)])
        for n, scope in enumerate(NEIGHBOURS):
            service.ingest(scope, [write_jsonl(scratch / f"small-{n}.jsonl", synthetic_turns(500, seed=100 + n))])
        counts = service.store.counts(SCOPE)
    (home / "bench-built").write_text(str(size))
    return {"chunks_in_tenant": counts["chunks"], "build_s": round(time.perf_counter() - t0, 1)}


def query(home: Path, engine: str, n_queries: int) -> dict:
    queries = synthetic_queries(n_queries)
    with MemoryService(load_settings(home, bm25_engine=engine)) as service:
        latencies = recall_latencies_ms(service, SCOPE, queries)
        rebuild = None
        if engine == "duckdb":
            t0 = time.perf_counter()
            service.store.rebuild_fts_index("chunks")
            rebuild = round(time.perf_counter() - t0, 2)
    return {"engine": engine, "p50_ms": round(percentile(latencies, 50), 1),
            "p95_ms": round(percentile(latencies, 95), 1), "max_ms": round(max(latencies), 1),
            "peak_rss_mb": round(peak_rss_mb()), "duckdb_fts_rebuild_s": rebuild}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--engines", default="lancedb,duckdb")
    parser.add_argument("--workdir", type=Path, default=RESULTS / "recall-stores")
    parser.add_argument("--query-only", nargs=2, metavar=("HOME", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.query_only:
        print(json.dumps(query(Path(args.query_only[0]), args.query_only[1], args.queries)))
        return

    report = {}
    for size in (int(s) for s in args.sizes.split(",")):
        home = args.workdir / f"n{size}" / "home"
        home.parent.mkdir(parents=True, exist_ok=True)
        built = (home / "bench-built").is_file() and (home / "bench-built").read_text() == str(size)
        entry = {"size": size, "reused_store": built}
        if not built:
            entry.update(build(home, size))
        for engine in args.engines.split(","):
            out = subprocess.run(
                [sys.executable, __file__, "--query-only", str(home), engine, "--queries", str(args.queries)],
                capture_output=True, text=True, check=True,
            ).stdout.strip().splitlines()[-1]
            entry[engine] = json.loads(out)
        report[str(size)] = entry
        print(json.dumps(entry, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "recall_latency.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
