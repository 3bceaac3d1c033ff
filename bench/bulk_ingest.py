"""Bulk ingest on Dask (Prefect's Dask task runner) against the in-process ingest, documents per second,
in the same run on the same corpus (markdown notes recombined from LoCoMo sentences): the baseline
`MemoryService.ingest`, then `mnemoflow ingest --dask` with a LocalCluster of 1 and of 2 workers (the
Prefect flow's own start-up, a temporary Prefect server, is timed apart and left out of the rate).

    .venv/bin/python bench/bulk_ingest.py --documents 400 --workers 1,2
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from common import RESULTS, synthetic_turns

from mnemoflow.config import load_settings
from mnemoflow.storage import Scope

SCOPE = Scope("bench", "bulk")


def corpus(root: Path, documents: int) -> Path:
    folder = root / "share"
    folder.mkdir(parents=True)
    turns = synthetic_turns(documents * 12, seed=21)
    for n in range(documents):
        body = "\n\n".join(t["text"] for t in turns[n * 12:(n + 1) * 12])
        (folder / f"note-{n:05d}.md").write_text(f"# Field note {n}\n\n{body}\n")
    return folder


def in_process(folder: Path, home: Path) -> dict:
    from mnemoflow.service import MemoryService

    with MemoryService(load_settings(home, generate_memories=False)) as service:
        service.embedder.embed_query("warm up")  # the model loaded before the clock, as a worker's is
        started = time.perf_counter()
        outcome = service.ingest(SCOPE, [folder])
        seconds = time.perf_counter() - started
    return {"documents": outcome.report.documents_changed, "chunks": outcome.report.chunks_added,
            "seconds": round(seconds, 1), "documents_per_s": round(outcome.report.documents_changed / seconds, 2)}


def on_dask(folder: Path, home: Path, workers: int) -> dict:
    from mnemoflow.flows.bulk import bulk_ingest_flow, run_bulk

    settings = load_settings(home, generate_memories=False)
    empty = folder.parent / "empty"
    empty.mkdir(exist_ok=True)
    started = time.perf_counter()
    run_bulk(bulk_ingest_flow, settings, workers, paths=[str(empty)], tenant_id="warm", user_id="up")
    overhead = time.perf_counter() - started  # Prefect's server, the cluster's start, each worker's model
    started = time.perf_counter()
    outcome = run_bulk(bulk_ingest_flow, settings, workers, paths=[str(folder)], tenant_id=SCOPE.tenant_id,
                       user_id=SCOPE.user_id)
    seconds = time.perf_counter() - started
    return {"documents": outcome.report.documents_changed, "chunks": outcome.report.chunks_added,
            "seconds": round(seconds, 1), "documents_per_s": round(outcome.report.documents_changed / seconds, 2),
            "start_up_s": round(overhead, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=400)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-bulk-"))
    folder = corpus(root, args.documents)
    report = {"in process": in_process(folder, root / "baseline")}
    print(json.dumps(report), flush=True)
    for workers in (int(w) for w in args.workers.split(",")):
        report[f"dask {workers}"] = on_dask(folder, root / f"dask-{workers}", workers)
        print(json.dumps(report[f"dask {workers}"]), flush=True)
    base = report["in process"]["documents_per_s"]
    for row in report.values():
        row["ratio"] = round(row["documents_per_s"] / base, 2)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bulk_ingest.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
