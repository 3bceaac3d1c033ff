"""Ingest throughput of the full path (turns/s) beside the embedder alone on the same texts, same run.

Full path: transcript file -> dlt landing -> turns and chunks (DuckDB, one commit per batch) ->
outbox -> embeddings -> LanceDB -> index refresh. Embedder alone: the same turn texts through
the same model and batch size. The ratio is what the pipeline keeps of the model's speed.

    .venv/bin/python bench/ingest_throughput.py --turns 5000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from common import RESULTS, peak_rss_mb, synthetic_turns, write_jsonl

from mnemoflow.chunking import chunk_session
from mnemoflow.config import load_settings
from mnemoflow.ingest.conversations import session_document_id, turn_key
from mnemoflow.models import TurnRecord
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import parse_timestamp

SCOPE = Scope("bench", "ingest")


def embedded_texts(turns: list[dict]) -> list[str]:
    """Exactly the texts the pipeline embeds: each turn's chunk text."""
    records = [TurnRecord(turn_key(SCOPE, t["session_id"], t["turn_id"]), session_document_id(SCOPE, t["session_id"]),
                          t["session_id"], t["turn_id"], n, None, t["speaker"], parse_timestamp(t["ts"]), t["text"],
                          None, "bench") for n, t in enumerate(turns)]
    texts = []
    for session in sorted({r.session_id for r in records}):
        texts += [c.text for c in chunk_session("d", [r for r in records if r.session_id == session], 256)]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    turns = synthetic_turns(args.turns)
    texts = embedded_texts(turns)
    scratch = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-ingest-"))
    source = write_jsonl(scratch / "transcript.jsonl", turns)
    warmup = write_jsonl(scratch / "warmup.jsonl", synthetic_turns(40, seed=99))

    embedder_s, pipeline_s = [], []
    for repeat in range(args.repeats):
        # the chunk path issue 3 set its aim on; memory generation has its own bench (memory_generation.py)
        with MemoryService(load_settings(scratch / f"home-{repeat}", generate_memories=False)) as service:
            service.ingest(Scope("bench", "warmup"), [warmup])  # imports, model load, first dlt run
            t0 = time.perf_counter()
            service.embedder.embed(texts)
            embedder_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            outcome = service.ingest(SCOPE, [source])
            pipeline_s.append(time.perf_counter() - t0)
            assert outcome.report.turns_added == len(turns) and outcome.pending_embeddings == 0
            assert outcome.drain is not None and outcome.drain.embedded == len(set(texts))
        print(f"repeat {repeat + 1}: embedder {len(texts) / embedder_s[-1]:.0f} turns/s, "
              f"full path {len(turns) / pipeline_s[-1]:.0f} turns/s")

    embedder_rate = len(texts) / statistics.median(embedder_s)
    pipeline_rate = len(turns) / statistics.median(pipeline_s)
    result = {
        "turns": len(turns), "repeats": args.repeats,
        "embedder_alone_turns_per_s": round(embedder_rate, 1),
        "full_path_turns_per_s": round(pipeline_rate, 1),
        "ratio": round(pipeline_rate / embedder_rate, 3),
        "peak_rss_mb": round(peak_rss_mb()),
    }
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ingest_throughput.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
