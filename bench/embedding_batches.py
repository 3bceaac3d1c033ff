"""Embedding batches: the same embedding calls an ingest makes, replayed with batches of a fixed count
(64 texts, each batch padded to its longest: the embedder before) and with batches cut by padded tokens.

The calls are recorded from a real ingest (the production path, memory generation on) of LongMemEval
haystacks (long assistant turns, chunks of ~240 tokens) and of a LoCoMo conversation (short turns).
Each setting replays every recorded call, in turn with the others, `--repeats` times; the figure is
the median seconds for all calls of one suite. The vectors must not change: the largest difference
from the fixed-count batches is printed beside each setting.

    .venv/bin/python bench/embedding_batches.py [--lme-limit 4] [--locomo-limit 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import LOCOMO, LONGMEMEVAL, RESULTS, synthetic_turns, write_jsonl

from mnemoflow.config import load_settings
from mnemoflow.embedding.onnx_runtime import OnnxEmbedder
from mnemoflow.eval.harness import Benchmark, ingest
from mnemoflow.eval.locomo import locomo_benchmark
from mnemoflow.eval.longmemeval import longmemeval_benchmark
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

FIXED_COUNT = 10**9  # a budget no batch reaches: batches of `batch_size` texts, as before
BUDGETS = [FIXED_COUNT, 4096, 2048, 1024, 512, 256]


def recorded_calls(service: MemoryService, benchmark: Benchmark, scratch: Path) -> list[list[str]]:
    """The text lists of every embedding call one ingest of `benchmark` makes."""
    embedder, calls = service.embedder, []

    def record(texts: list[str]) -> Any:
        calls.append(list(texts))
        return type(embedder).embed(embedder, texts)

    embedder.embed = record  # type: ignore[method-assign]
    try:
        ingest(service, benchmark, scratch)
    finally:
        del embedder.embed
    return calls


def replay(embedder: OnnxEmbedder, calls: list[list[str]], budget: int) -> tuple[float, list[np.ndarray]]:
    embedder.batch_tokens = budget
    t0 = time.perf_counter()
    vectors = [embedder.embed(texts) for texts in calls]
    return time.perf_counter() - t0, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lme-limit", type=int, default=4, help="LongMemEval questions (haystacks) to ingest")
    parser.add_argument("--locomo-limit", type=int, default=1, help="LoCoMo conversations to ingest")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    suites = {"longmemeval": longmemeval_benchmark(LONGMEMEVAL / "longmemeval.json", args.lme_limit),
              "locomo": locomo_benchmark(LOCOMO, args.locomo_limit)}
    with (tempfile.TemporaryDirectory(prefix="mnemoflow-bench-batches-") as scratch,
          MemoryService(load_settings(Path(scratch) / "home")) as service):
        warmup = write_jsonl(Path(scratch) / "warmup.jsonl", synthetic_turns(40, seed=99))
        service.ingest(Scope("bench", "warmup"), [warmup])
        embedder = service.embedder
        assert isinstance(embedder, OnnxEmbedder), "the onnx runtime (the default) is what this measures"
        calls = {name: recorded_calls(service, suite, Path(scratch)) for name, suite in suites.items()}
        seconds: dict[str, dict[int, list[float]]] = {name: {b: [] for b in BUDGETS} for name in calls}
        drift: dict[str, dict[int, float]] = {name: {} for name in calls}
        for _ in range(args.repeats):
            for name, texts in calls.items():
                _, reference = replay(embedder, texts, FIXED_COUNT)
                for budget in BUDGETS:
                    took, vectors = replay(embedder, texts, budget)
                    seconds[name][budget].append(took)
                    drift[name][budget] = max(float(np.abs(a - b).max(initial=0.0)) for a, b in zip(reference, vectors))
    result: dict[str, Any] = {}
    for name, texts in calls.items():
        base = statistics.median(seconds[name][FIXED_COUNT])
        result[name] = {
            "calls": len(texts), "texts": sum(map(len, texts)),
            "settings": {("64 texts (before)" if b == FIXED_COUNT else f"{b} tokens"): {
                "median_s": round(statistics.median(seconds[name][b]), 2),
                "speedup": round(base / statistics.median(seconds[name][b]), 2),
                "max_vector_difference": drift[name][b]} for b in BUDGETS}}
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "embedding_batches.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
