"""What a command costs from start to answer: `mnemoflow recall` as a whole command through a running
`mnemoflow serve`, and cold with no server (the command opens the store and loads the model itself),
each as a ratio against the same recall inside a warm process (the baseline), all on one small store
in the same run; plus where a cold start spends its time (imports, model load, store open). The cold
command runs with each local runtime of the model: ONNX Runtime (the default) and torch.

    .venv/bin/python bench/startup.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, RESULTS, percentile

from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("bench", "alex")
QUERY = "when does Alex like to meet?"
NOTES = ["Alex prefers morning meetings", "Alex's team standup is at 9:30 in room Atlas",
         "Alex is allergic to peanuts", "Alex flies to Lisbon on May 3", "Alex's manager is Priya"]


def _command(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "mnemoflow.cli", *args, "--home", str(home)]


def _timed(argv: list[str], runtime: str = "onnx") -> float:
    t0 = time.perf_counter()
    env = {**os.environ, "MNEMOFLOW_EMBEDDING_RUNTIME": runtime}
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0 or "Alex" not in done.stdout:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def _cold_parts(runtime: str) -> dict[str, float]:
    """Each step of a cold start in a fresh interpreter, in the order a command takes them."""
    script = """
import json, time
t = time.perf_counter(); marks = {}
import mnemoflow.cli; marks["import the CLI"] = time.perf_counter() - t; t = time.perf_counter()
import lancedb, duckdb; marks["import lancedb and duckdb"] = time.perf_counter() - t; t = time.perf_counter()
from mnemoflow.embedding import create_embedder
from mnemoflow.config import load_settings
embedder = create_embedder(load_settings(None)); embedder.embed_query("warm")
marks["import and load the embedding model"] = time.perf_counter() - t
print(json.dumps(marks))
"""
    env = {**os.environ, "MNEMOFLOW_EMBEDDING_RUNTIME": runtime}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
    return {k: round(v, 2) for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="Timed runs of each kind of command.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnemoflow-bench-") as scratch:
        home = Path(scratch) / "home"
        with MemoryService(load_settings(home)) as service:
            for note in NOTES:
                service.add(SCOPE, note)
            for _ in range(5):
                service.recall(SCOPE, QUERY)
            warm = []
            for _ in range(50):
                t0 = time.perf_counter()
                service.recall(SCOPE, QUERY)
                warm.append(time.perf_counter() - t0)
        recall = [*_command(home, "recall", QUERY), "--tenant", SCOPE.tenant_id, "--user", SCOPE.user_id]
        cold = [_timed(recall) for _ in range(args.runs)]
        cold_torch = [_timed(recall, "torch") for _ in range(args.runs)]
        server = subprocess.Popen(_command(home, "serve", "--port", "0", "--no-schedules", "--no-sql"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO, env=os.environ)
        try:
            t0 = time.perf_counter()
            while not (home / "server.json").exists():
                if server.poll() is not None or time.perf_counter() - t0 > 180:
                    raise SystemExit("mnemoflow serve did not start")
                time.sleep(0.1)
            serve_start_s = time.perf_counter() - t0
            _timed(recall)  # the server's first recall warms what it lazily loads
            served = [_timed(recall) for _ in range(args.runs)]
        finally:
            server.terminate()
            server.wait(timeout=60)
    base = percentile(warm, 50)
    report = {
        "store": f"{len(NOTES)} memories", "runs": args.runs,
        "in-process recall ms (baseline)": {"p50": round(base * 1000, 1), "p95": round(percentile(warm, 95) * 1000, 1)},
        "command through the server s": {"p50": round(percentile(served, 50), 2), "max": round(max(served), 2),
                                         "ratio_p50": round(percentile(served, 50) / base, 1)},
        "cold command, no server s": {"p50": round(percentile(cold, 50), 2), "max": round(max(cold), 2),
                                      "ratio_p50": round(percentile(cold, 50) / base, 1)},
        "cold command, no server, torch runtime s": {
            "p50": round(percentile(cold_torch, 50), 2), "max": round(max(cold_torch), 2),
            "ratio_p50": round(percentile(cold_torch, 50) / base, 1)},
        "serve start to ready s": round(serve_start_s, 1),
        "cold start, by step s (onnx)": _cold_parts("onnx"),
        "cold start, by step s (torch)": _cold_parts("torch"),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "startup.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
