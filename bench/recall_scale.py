"""Recall latency in process at a million chunks (one tenant, the embedded store), query embedding
included, against the same queries at 100k in the same run.

Building a million chunks through the ingest path would embed a million texts (about 30 minutes of
model time here) for a latency figure, so the store is laid down directly, as ingest leaves it: the
`source_documents` and `chunks` rows in DuckDB, the `chunk_vectors` rows in LanceDB with their
indexes built by the store's own refresh (BM25, bitmaps, IVF-HNSW-SQ). Chunk texts are recombined
LoCoMo sentences; each vector is drawn around the real MiniLM vector of one of 4,000 real texts
(cosine ~0.9 to it), so the vector index sees a realistic spread. A latency bench only: no quality
figure comes from these vectors.

    .venv/bin/python bench/recall_scale.py --sizes 100000,1000000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
from common import RESULTS, peak_rss_mb, percentile, recall_latencies_ms, synthetic_queries, synthetic_turns

from mnemoflow.chunking import chunk_id, sha256_text
from mnemoflow.config import load_settings
from mnemoflow.storage import Scope

SCOPE = Scope("bench", "big")
PER_DOCUMENT = 50
BATCH = 50_000


def _vectors(texts: list[str], count: int, seed: int) -> np.ndarray:
    """`count` unit vectors, each near the MiniLM vector of one of `texts`."""
    from mnemoflow.embedding import create_embedder

    base = np.asarray(create_embedder(load_settings()).embed(texts), dtype=np.float32)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(base), count)
    noise = rng.normal(0, 0.022, size=(count, base.shape[1])).astype(np.float32)
    vectors = base[picks] + noise
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def build(home: Path, size: int) -> dict:
    import duckdb

    from mnemoflow.storage import open_store
    from mnemoflow.storage.lance_index import CHUNK_INDEX
    from mnemoflow.storage.rows import chunk_index_row, columns

    t0 = time.perf_counter()
    texts = [t["text"] for t in synthetic_turns(size, seed=17)]
    vectors = _vectors(random.Random(3).sample(texts, 4000), size, seed=5)
    now = datetime(2026, 11, 1)
    settings = load_settings(home, generate_memories=False)
    open_store(settings).close()  # the schema
    docs, chunks = [], []
    for n, text in enumerate(texts):
        document_id = f"doc_{n // PER_DOCUMENT:08d}"
        if n % PER_DOCUMENT == 0:
            docs.append((document_id, f"file:///share/note-{n // PER_DOCUMENT}.md"))
        digest = sha256_text(text)
        chunks.append((chunk_id(document_id, n % PER_DOCUMENT, digest), document_id, n % PER_DOCUMENT, text, digest))
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.register("d", pa.table({"document_id": [d[0] for d in docs], "uri": [d[1] for d in docs]}))
        con.execute("INSERT INTO source_documents (document_id, tenant_id, user_id, shared, connector, uri, mime, title, "
                    "content_hash, created_at, commit_id) SELECT document_id, ?, ?, false, 'files', uri, "
                    "'text/markdown', uri, document_id, ?, 'bench' FROM d", [SCOPE.tenant_id, SCOPE.user_id, now])
        con.register("c", pa.table({"chunk_id": [c[0] for c in chunks], "document_id": [c[1] for c in chunks],
                                    "ordinal": [c[2] for c in chunks], "text": [c[3] for c in chunks],
                                    "content_hash": [c[4] for c in chunks]}))
        con.execute("INSERT INTO chunks (chunk_id, tenant_id, user_id, shared, document_id, ordinal, text, content_hash, "
                    "token_count, locator, embedding_status, embedding_model, created_at, commit_id) "
                    "SELECT chunk_id, ?, ?, false, document_id, ordinal, text, content_hash, "
                    "ceil(length(text) / 4), '{}', 'done', 'all-MiniLM-L6-v2', ?, 'bench' FROM c",
                    [SCOPE.tenant_id, SCOPE.user_id, now])
    store = open_store(settings)
    try:
        for start in range(0, size, BATCH):
            part = chunks[start:start + BATCH]
            rows = [chunk_index_row(SCOPE, c[0], c[3], None, c[4], "{}", False, c[1], f"note {c[1]}",
                                    f"file:///share/{c[1]}.md", "files") for c in part]
            store._index.append(CHUNK_INDEX, columns(rows), vectors[start:start + BATCH])
        rows_s = time.perf_counter() - t0
        store._index.refresh(CHUNK_INDEX)
    finally:
        store.close()
    (home / "bench-built").write_text(str(size))
    return {"chunks": size, "rows_written_s": round(rows_s, 1), "build_s": round(time.perf_counter() - t0, 1)}


def query(home: Path, n_queries: int) -> dict:
    from mnemoflow.service import MemoryService

    queries = synthetic_queries(n_queries)
    with MemoryService(load_settings(home, recall_track_access=False)) as service:
        latencies = recall_latencies_ms(service, SCOPE, queries)
    return {"p50_ms": round(percentile(latencies, 50), 1), "p95_ms": round(percentile(latencies, 95), 1),
            "max_ms": round(max(latencies), 1), "peak_rss_mb": round(peak_rss_mb())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--workdir", type=Path, default=RESULTS / "recall-scale")
    parser.add_argument("--query-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.query_only:
        print(json.dumps(query(args.query_only, args.queries)))
        return
    report = {}
    for size in (int(s) for s in args.sizes.split(",")):
        home = args.workdir / f"n{size}" / "home"
        built = None
        if not (home / "bench-built").exists():
            home.parent.mkdir(parents=True, exist_ok=True)
            built = build(home, size)
        measured = subprocess.run([sys.executable, __file__, "--query-only", str(home), "--queries", str(args.queries)],
                                  capture_output=True, text=True, check=True)  # a fresh process: serving's RSS
        report[str(size)] = {**(built or {}), **json.loads(measured.stdout.strip().splitlines()[-1])}
        print(json.dumps({size: report[str(size)]}), flush=True)
    sizes = sorted(report, key=int)
    if len(sizes) > 1:
        report["p95_ratio_largest_to_smallest"] = round(report[sizes[-1]]["p95_ms"] / report[sizes[0]]["p95_ms"], 2)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "recall_scale.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
