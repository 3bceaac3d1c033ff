"""What a command costs from start to answer, in wall and CPU seconds: `mnemoflow recall` through a
running `mnemoflow serve` (plain and `--json`), and cold with no server (the command opens the store
and loads the model itself), each beside `python -c pass` run in the same loop (the interpreter's own
start, the floor no command goes under) and the same recall inside a warm process; plus where a cold
start spends its time and how long `serve` (every part: HTTP, MCP, the outbox worker, Quack and the
Prefect schedules) takes to exit after SIGTERM, idle and with requests in flight.

    .venv/bin/python bench/startup.py --runs 5

CPU seconds are user + system time of the command's process (resource.RUSAGE_CHILDREN): on a shared,
loaded machine they move far less than wall time. Medians of --runs runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import REPO, RESULTS, percentile

from mnemoflow.config import load_settings
from mnemoflow.remote import read_server_info
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("bench", "alex")
QUERY = "when does Alex like to meet?"
NOTES = ["Alex prefers morning meetings", "Alex's team standup is at 9:30 in room Atlas",
         "Alex is allergic to peanuts", "Alex flies to Lisbon on May 3", "Alex's manager is Priya"]
SERVE_START_TIMEOUT_S = 300


def _mnemoflow() -> list[str]:
    """The installed `mnemoflow` command beside this interpreter (what people type), else `-m`."""
    script = Path(sys.executable).parent / "mnemoflow"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mnemoflow.cli"]


def _command(home: Path, *args: str) -> list[str]:
    return [*_mnemoflow(), *args, "--home", str(home)]


def _timed(argv: list[str], runtime: str = "onnx", expect: str | None = "Alex") -> tuple[float, float]:
    """(wall s, CPU s) of one run of `argv`."""
    env = {**os.environ, "MNEMOFLOW_EMBEDDING_RUNTIME": runtime}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or (expect is not None and expect not in done.stdout):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _runs(argv: list[str], runs: int, runtime: str = "onnx") -> dict[str, dict[str, float]]:
    """`argv` and `python -c pass` in turn, `runs` times each: medians of wall and CPU seconds."""
    command, floor = [], []
    for _ in range(runs):
        floor.append(_timed([sys.executable, "-c", "pass"], expect=None))
        command.append(_timed(argv, runtime))

    def medians(pairs: list[tuple[float, float]]) -> dict[str, float]:
        return {"wall_p50": round(statistics.median(w for w, _ in pairs), 3),
                "cpu_p50": round(statistics.median(c for _, c in pairs), 3),
                "wall_max": round(max(w for w, _ in pairs), 3)}

    return {"command": medians(command), "python -c pass": medians(floor)}


def _cold_parts(home: Path, runtime: str) -> dict[str, float]:
    """CPU seconds of each step of a cold recall in a fresh interpreter, in the order the command takes
    them (whatever each step imports is counted in it)."""
    script = f"""
import json, time
t = time.process_time(); marks = {{}}
def mark(name):
    global t
    marks[name] = time.process_time() - t; t = time.process_time()
import mnemoflow.cli; mark("import the CLI")
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
service = MemoryService(load_settings({str(home)!r})); mark("import the service")
service.store; mark("open the store")
service.embedder.embed_query("warm"); mark("import and load the embedding model")
service.recall(Scope({SCOPE.tenant_id!r}, {SCOPE.user_id!r}), {QUERY!r}); mark("recall")
service.close(); mark("close the store")
print(json.dumps(marks))
"""
    env = {**os.environ, "MNEMOFLOW_EMBEDDING_RUNTIME": runtime}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
    return {k: round(v, 2) for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def _serve(home: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(_command(home, "serve", "--port", "0", *args), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=REPO, env=os.environ)


def _wait_for(home: Path, server: subprocess.Popen[bytes], ready: str = "url") -> float:
    """Seconds until the server's file names `ready` (its URL; `prefect_api_url` once the schedules
    are served)."""
    t0 = time.perf_counter()
    while (info := read_server_info(home)) is None or getattr(info, ready) is None:
        if server.poll() is not None or time.perf_counter() - t0 > SERVE_START_TIMEOUT_S:
            raise SystemExit(f"mnemoflow serve did not get ready ({ready})")
        time.sleep(0.1)
    return time.perf_counter() - t0


def _stop_time(server: subprocess.Popen[bytes]) -> float:
    """Seconds from SIGTERM to the process's exit."""
    t0 = time.perf_counter()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=120)
    return time.perf_counter() - t0


def _shutdown(home: Path, recall: list[str]) -> dict[str, float]:
    """SIGTERM to exit of a full `serve` (schedules with their Prefect server, Quack, the worker):
    idle once everything is up, and with recalls in flight (four clients calling in a loop)."""
    from mnemoflow.errors import MnemoflowError
    from mnemoflow.remote import connect

    figures: dict[str, float] = {}
    for busy in (False, True):
        server = _serve(home)
        try:
            started = _wait_for(home, server, "prefect_api_url")
            _timed(recall)
            answered, refused, going = [], [], True

            def client() -> None:
                with connect(load_settings(home)) as service:
                    while going:
                        try:
                            service.recall(SCOPE, QUERY)
                            answered.append(1)
                        except MnemoflowError as exc:
                            refused.append(type(exc).__name__)
                            return

            with ThreadPoolExecutor(4) as pool:
                for _ in range(4 if busy else 0):
                    pool.submit(client)
                time.sleep(2 if busy else 0)
                stopped = _stop_time(server)
                going = False
        finally:
            if server.poll() is None:
                server.kill()
        if busy:
            figures["SIGTERM to exit, 4 clients recalling s"] = round(stopped, 2)
            figures["recalls answered / refused at the stop"] = f"{len(answered)} / {len(refused)}"
        else:
            figures["serve with schedules: start to schedules served s"] = round(started, 1)
            figures["SIGTERM to exit, idle s"] = round(stopped, 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="Timed runs of each kind of command.")
    parser.add_argument("--runtimes", default="onnx,torch", help="Local model runtimes the cold command runs with.")
    parser.add_argument("--no-shutdown", action="store_true", help="Skip the SIGTERM measurement (it starts "
                        "a Prefect server twice).")
    args = parser.parse_args()
    runtimes = [r for r in args.runtimes.split(",") if r]
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
        cold = {runtime: _runs(recall, args.runs, runtime) for runtime in runtimes}
        server = _serve(home, "--no-schedules", "--no-sql")
        try:
            serve_start_s = _wait_for(home, server)
            _timed(recall)  # the server's first recall warms what it lazily loads
            served = _runs(recall, args.runs)
            served_json = _runs([*recall, "--json"], args.runs)
        finally:
            server.terminate()
            server.wait(timeout=60)
        shutdown = {} if args.no_shutdown else _shutdown(home, recall)
        parts = {f"cold recall, CPU s by step ({runtime})": _cold_parts(home, runtime) for runtime in runtimes}
    base = percentile(warm, 50)
    report = {
        "store": f"{len(NOTES)} memories", "runs": args.runs,
        "in-process recall ms": {"p50": round(base * 1000, 1), "p95": round(percentile(warm, 95) * 1000, 1)},
        "`mnemoflow recall` through the server": served,
        "`mnemoflow recall --json` through the server": served_json,
        **{f"`mnemoflow recall` cold, no server ({runtime})": figures for runtime, figures in cold.items()},
        "serve start to ready s": round(serve_start_s, 1),
        **shutdown,
        **parts,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "startup.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
