"""Shared pieces of the benchmarks: a realistic synthetic conversation corpus, timing, memory."""

from __future__ import annotations

import json
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LOCOMO = REPO.parent / "shared" / "eval" / "locomo"
LONGMEMEVAL = REPO.parent / "shared" / "eval" / "longmemeval"
RESULTS = REPO / "bench" / "results"

FIRST_NAMES = (
    "Aiko Amara Anders Bea Bilal Carmen Chidi Dana Dario Elif Emeka Farah Felix Gia Goran Hana Hugo Ines Ivan "
    "Jae Jonas Kavya Kofi Lara Leon Mai Marek Nadia Nico Oona Omar Paz Pedro Quinn Rafa Rosa Sami Sofia Tariq "
    "Tess Uma Viktor Wen Xavi Yara Yusuf Zane Zoe"
).split()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))]


def recall_latencies_ms(service: Any, scope: Any, queries: list[str], budget: int = 2048) -> list[float]:
    """Each query's in-process recall time, after five warm-up recalls; every answer must hold items."""
    for q in queries[:5]:
        service.recall(scope, q, token_budget=budget)
    latencies = []
    for q in queries:
        t0 = time.perf_counter()
        result = service.recall(scope, q, token_budget=budget)
        latencies.append((time.perf_counter() - t0) * 1000)
        assert result.items
    return latencies


def locomo_rows(locomo: Path) -> list[dict]:
    return [json.loads(line) for line in (locomo / "conversations.jsonl").read_text().splitlines() if line.strip()]


def _speakers(rows: list[dict]) -> set[str]:
    return {r["speaker"] for r in rows}


def synthetic_turns(n_turns: int, *, seed: int = 7, locomo: Path = LOCOMO, per_session: int = 20) -> list[dict]:
    """Transcript turns recombined from LoCoMo sentences, with new speakers: realistic length and vocabulary,
    every turn distinct. Deterministic for a seed."""
    rows = locomo_rows(locomo)
    old_names = _speakers(rows)
    name_pattern = re.compile(r"\b(" + "|".join(sorted(old_names)) + r")\b")
    sentences = [s.strip() for r in rows for s in re.split(r"(?<=[.!?])\s+", r["text"]) if len(s.split()) >= 3]
    rng = random.Random(seed)
    start = datetime(2023, 1, 2, 9, 0)
    turns = []
    for i in range(n_turns):
        session, position = divmod(i, per_session)
        pair = [FIRST_NAMES[(session * 7) % len(FIRST_NAMES)], FIRST_NAMES[(session * 7 + 3) % len(FIRST_NAMES)]]
        speaker = pair[position % 2]
        text = " ".join(rng.sample(sentences, rng.choice((1, 2, 2, 3))))
        text = name_pattern.sub(lambda _: pair[(position + 1) % 2], text) + f" (#{i})"
        ts = start + timedelta(days=session, minutes=position)
        turns.append({"session_id": f"s{session:05d}", "turn_id": f"t{i}", "speaker": speaker,
                      "ts": ts.isoformat(), "text": text})
    return turns


def synthetic_queries(n: int, *, seed: int = 11, locomo: Path = LOCOMO) -> list[str]:
    """LoCoMo questions with their names swapped for the synthetic corpus's speakers."""
    questions = [json.loads(line)["question"] for line in (locomo / "questions.jsonl").read_text().splitlines()]
    old_names = _speakers(locomo_rows(locomo))
    pattern = re.compile(r"\b(" + "|".join(sorted(old_names)) + r")\b")
    rng = random.Random(seed)
    chosen = rng.sample(questions, n)
    return [pattern.sub(lambda _: rng.choice(FIRST_NAMES), q) for q in chosen]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


Files = list[tuple[str, bytes]]  # (relative path, contents)


def median_pass_seconds(files: Files, work: Callable[[str, bytes], object], repeats: int) -> float:
    """Median seconds for one pass of `work` over every file."""
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for path, data in files:
            work(path, data)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def timed_ingest(files: Files, warmup: Files, prefix: str, texts: list[str]) -> tuple[Any, float, float]:
    """`MemoryService.ingest` of the files in a fresh home, after a warm-up ingest (imports, model
    load, first dlt run) so that only the steady state is timed; then the same service's embedder
    alone on `texts` (what the pipeline embeds), the baseline the full path is a ratio of.
    Returns the outcome, the ingest seconds and the embedder-alone seconds."""
    from mnemoflow.config import load_settings
    from mnemoflow.service import MemoryService
    from mnemoflow.storage import Scope

    scratch = Path(tempfile.mkdtemp(prefix=f"mnemoflow-bench-{prefix}-"))
    for folder, items in (("warmup", warmup), ("inputs", files)):
        for path, data in items:
            (scratch / folder / path).parent.mkdir(parents=True, exist_ok=True)
            (scratch / folder / path).write_bytes(data)
    try:
        with MemoryService(load_settings(scratch / "home")) as service:
            service.ingest(Scope("bench", "warmup"), [scratch / "warmup"])
            t0 = time.perf_counter()
            outcome = service.ingest(Scope("bench", prefix), [scratch / "inputs"])
            seconds = time.perf_counter() - t0
            t0 = time.perf_counter()
            service.embedder.embed(texts)
            embed_seconds = time.perf_counter() - t0
    finally:
        shutil.rmtree(scratch)
    assert not outcome.report.errors, outcome.report.errors[:3]
    assert outcome.pending_embeddings == 0
    return outcome, seconds, embed_seconds


@contextmanager
def serving(home: Path, log: Path) -> Iterator[Any]:
    """`mnemoflow serve` for `home` (no schedules, no SQL endpoint) while the block runs; its output in
    `log`. Yields the server's `ServerInfo` (url, operator token)."""
    from mnemoflow.config import load_settings
    from mnemoflow.remote import running_server

    with log.open("a") as sink:
        process = subprocess.Popen([sys.executable, "-m", "mnemoflow.cli", "serve", "--home", str(home), "--port", "0",
                                    "--no-schedules", "--no-sql"], stdout=sink, stderr=subprocess.STDOUT)
        try:
            settings, deadline = load_settings(home), time.monotonic() + 180
            while (info := running_server(settings)) is None:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"mnemoflow serve did not start; see {log}")
                time.sleep(0.2)
            yield info
        finally:
            process.terminate()
            process.wait(timeout=120)
