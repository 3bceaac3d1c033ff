"""Speed on long sessions (LongMemEval's long assistant turns): ingest tokens/s beside the embedder
alone on the same texts, and recall p50/p95 beside LoCoMo's, all in one run and one process.

Ingest is the production path with the product's settings (memory generation on): each question's
haystack into its own scope (`mnemoflow.eval.harness.ingest`). The embedder is wrapped to record the
texts the pipeline embeds and the time it spends in them; afterwards the same texts go through the
embedder alone in one call. The ratio (aim >= 0.8) is what the pipeline keeps of the model's speed.
Recall asks each question (LongMemEval: one per scope; LoCoMo: the first conversations' questions)
at each budget `--repeats` times, query embedding included (aim: LongMemEval p95 <= 1.2 x LoCoMo's).

    .venv/bin/python bench/longmemeval_speed.py [--data ../shared/eval/longmemeval/longmemeval.json]
                                                [--limit 10] [--locomo ../shared/eval/locomo] [--locomo-limit 1]
                                                [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import (
    LOCOMO,
    LONGMEMEVAL,
    RESULTS,
    peak_rss_mb,
    percentile,
    synthetic_turns,
    write_jsonl,
)

from mnemoflow.config import load_settings
from mnemoflow.eval.harness import Benchmark, ask, ingest
from mnemoflow.eval.locomo import locomo_benchmark
from mnemoflow.eval.longmemeval import longmemeval_benchmark
from mnemoflow.recall import preset
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

BUDGETS = [512, 2048]


class RecordingEmbedder:
    """Wraps the service's embedder: the texts each batch call embedded and the seconds it took."""

    def __init__(self, embed: Callable[[list[str]], Any]) -> None:
        self.embed, self.texts, self.seconds = embed, [], 0.0

    def __call__(self, texts: list[str]) -> Any:
        t0 = time.perf_counter()
        vectors = self.embed(texts)
        self.seconds += time.perf_counter() - t0
        self.texts += texts
        return vectors


def ingest_speed(service: MemoryService, benchmark: Benchmark, scratch: Path) -> dict[str, Any]:
    embedder = service.embedder
    recorder = RecordingEmbedder(embedder.embed)
    embedder.embed = recorder  # type: ignore[method-assign]
    try:
        stats = ingest(service, benchmark, scratch)
    finally:
        del embedder.embed  # the class's own method again
    t0 = time.perf_counter()
    embedder.embed(recorder.texts)
    alone_s = time.perf_counter() - t0
    tokens = stats["tokens"]
    return {**stats, "texts_embedded": len(recorder.texts),
            "embedded_tokens": sum(math.ceil(len(t) / 4) for t in recorder.texts),
            "full_path_tokens_per_s": round(tokens / stats["seconds"], 1),
            "embedder_alone_tokens_per_s": round(tokens / alone_s, 1),
            "ratio": round(alone_s / stats["seconds"], 3),
            "embedding_share_of_ingest": round(recorder.seconds / stats["seconds"], 3)}


def recall_speed(service: MemoryService, benchmarks: dict[str, Benchmark], repeats: int) -> dict[str, Any]:
    """p50/p95 per benchmark and budget; the benchmarks take turns each round, so a busy spell on the
    machine falls on both alike."""
    latencies: dict[str, dict[int, list[float]]] = {name: {b: [] for b in BUDGETS} for name in benchmarks}
    for _ in range(repeats):
        for name, benchmark in benchmarks.items():
            results, _ = ask(service, benchmark.tenant, benchmark.questions, BUDGETS, preset("default"))
            for r in results:
                latencies[name][r["budget"]].append(r["latency_ms"])
    figures = {}
    for name, benchmark in benchmarks.items():
        chunks = [service.store.counts(Scope(benchmark.tenant, c))["chunks"] for c in benchmark.conversations]
        figures[name] = {"questions": len(benchmark.questions), "chunks_per_scope": round(sum(chunks) / len(chunks), 1),
                         **{f"@{b}": {"p50_ms": round(percentile(v, 50), 1), "p95_ms": round(percentile(v, 95), 1)}
                            for b, v in latencies[name].items()}}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LONGMEMEVAL / "longmemeval.json")
    parser.add_argument("--limit", type=int, default=10, help="LongMemEval questions (each its own haystack)")
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="LoCoMo directory (the recall baseline)")
    parser.add_argument("--locomo-limit", type=int, default=1, help="LoCoMo conversations for the recall baseline")
    parser.add_argument("--repeats", type=int, default=3, help="times each question is asked per budget")
    args = parser.parse_args()
    longmemeval = longmemeval_benchmark(args.data, args.limit)
    locomo = locomo_benchmark(args.locomo, args.locomo_limit)
    with (tempfile.TemporaryDirectory(prefix="mnemoflow-bench-lme-") as scratch,
          MemoryService(load_settings(Path(scratch) / "home")) as service):
        warmup = write_jsonl(Path(scratch) / "warmup.jsonl", synthetic_turns(40, seed=99, locomo=args.locomo))
        service.ingest(Scope("bench", "warmup"), [warmup])  # imports, model load, first dlt run
        ingested = {"longmemeval": ingest_speed(service, longmemeval, Path(scratch)),
                    "locomo": ingest_speed(service, locomo, Path(scratch))}
        recalled = recall_speed(service, {"longmemeval": longmemeval, "locomo": locomo}, args.repeats)
    result: dict[str, Any] = {"ingest": ingested, "recall": recalled, "recall_p95_ratio": {
        f"@{b}": round(recalled["longmemeval"][f"@{b}"]["p95_ms"] / recalled["locomo"][f"@{b}"]["p95_ms"], 2)
        for b in BUDGETS}}
    result["peak_rss_mb"] = round(peak_rss_mb())
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "longmemeval_speed.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
