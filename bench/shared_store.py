"""The shared store (PostgreSQL + LanceDB on S3), each figure a ratio against a baseline in the same run:

- writes through DuckDB's postgres extension: single-row inserts per second, 1 writer against 3 at
  once (and, with `--ducklake`, the same on DuckLake with a PostgreSQL catalog, plus its conflicts
  when 3 writers claim 200 jobs);
- the outbox drained by 1, 2 and 4 `mnemoflow worker` processes (jobs/s; with the vectors cached, so the
  store's own work is what is timed, and with the model embedding);
- recall under 20 concurrent HTTP clients through 1 server against 2 (p50/p95 ms, recalls/s).

PostgreSQL and an S3 server (moto) are started on loopback for the run, as `mnemoflow cluster up` does.

    .venv/bin/python bench/shared_store.py --turns 2000 --clients 20 --requests 15
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from pathlib import Path

from common import RESULTS, percentile, synthetic_queries, synthetic_turns, write_jsonl

from mnemoflow.cluster import services
from mnemoflow.cluster.processes import stop

PY = sys.executable


def _store_env(pg: services.PostgresServer, s3: services.S3Server) -> dict[str, str]:
    name = f"b_{uuid.uuid4().hex[:12]}"
    services.create_database(pg.url(), name)
    return {"MNEMOFLOW_STORE_URL": pg.url(name), "MNEMOFLOW_VECTORS_URL": f"s3://bench/{name}",
            **services.s3_environment(s3.endpoint)}


def _run(code: str, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([PY, "-c", textwrap.dedent(code), *args], env={**os.environ, **env},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


INSERTER = """
import sys, time, duckdb, duckdb_extensions
url, seconds, table = sys.argv[1], float(sys.argv[2]), sys.argv[3]
con = duckdb.connect()
duckdb_extensions.import_extension("postgres", con=con); con.execute("LOAD postgres")
con.execute(f"ATTACH '{url}' AS pg (TYPE postgres, ISOLATION_LEVEL 'READ COMMITTED')"); con.execute("USE pg")
n, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    con.execute(f"INSERT INTO {table} VALUES (?, ?)", [f"{sys.argv[4]}-{n}", "x" * 200]); n += 1
print(n / seconds)
"""


def inserts(pg: services.PostgresServer, seconds: float) -> dict:
    name = f"i_{uuid.uuid4().hex[:8]}"
    services.create_database(pg.url(), name)
    import psycopg

    with psycopg.connect(pg.url(name), autocommit=True) as c:
        c.execute("CREATE TABLE rows (id text PRIMARY KEY, body text)")
    alone = float(_run(INSERTER, {}, pg.url(name), str(seconds), "rows", "solo").communicate()[0].split()[-1])
    three = [_run(INSERTER, {}, pg.url(name), str(seconds), "rows", f"w{n}") for n in range(3)]
    each = [float(p.communicate()[0].split()[-1]) for p in three]
    with psycopg.connect(pg.url(name), autocommit=True) as c:
        try:
            c.execute("INSERT INTO rows VALUES ('solo-0', 'again')")
            duplicate = "accepted"
        except psycopg.errors.UniqueViolation:
            duplicate = "refused"
    return {"one_writer_rows_s": round(alone), "three_writers_rows_s_each": [round(x) for x in each],
            "three_writers_total_ratio": round(sum(each) / alone, 2), "duplicate_key": duplicate}


DRAINER = """
import sys, time
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
with MemoryService(load_settings(sys.argv[1], outbox_batch_size=64)) as service:
    service.store  # opened before the clock: what is timed is draining
    print("ready", flush=True)
    sys.stdin.readline()
    report = service.drain()
    print(report.embedded + report.reused)
"""


def drain_rates(pg: services.PostgresServer, s3: services.S3Server, workdir: Path, turns: int,
                counts: tuple[int, ...]) -> dict:
    from mnemoflow.config import load_settings
    from mnemoflow.service import MemoryService
    from mnemoflow.storage import Scope

    corpus = write_jsonl(workdir / "drain.jsonl", synthetic_turns(turns, seed=3))
    results: dict[str, dict] = {}
    for cached in (True, False):
        for workers in counts:
            env = _store_env(pg, s3)
            os.environ.update(env)
            settings = load_settings(workdir / f"writer-{uuid.uuid4().hex[:6]}", generate_memories=False)
            with MemoryService(settings) as service:
                if cached:  # a first ingest leaves every vector in the shared cache; the timed one reuses them
                    service.ingest(Scope("warm", "up"), [corpus], wait=True)
                service.ingest(Scope("bench", "drain"), [corpus], wait=False)
                jobs = service.outbox_counts().get("pending", 0)
            drainers = [_run(DRAINER, env, str(workdir / f"w{n}-{uuid.uuid4().hex[:6]}")) for n in range(workers)]
            for d in drainers:
                assert d.stdout.readline().strip() == "ready", d.stderr.read()
            started = time.perf_counter()
            for d in drainers:
                d.stdin.write("go\n")
                d.stdin.close()
            outs = [d.stdout.read() for d in drainers]
            for d in drainers:
                d.wait()
            seconds = time.perf_counter() - started
            done = sum(int(o.split()[-1]) for o in outs)
            results.setdefault("vectors cached" if cached else "embedding", {})[str(workers)] = {
                "jobs": jobs, "done": done, "seconds": round(seconds, 1), "jobs_per_s": round(done / seconds, 1)}
    for rows in results.values():
        base = rows[str(counts[0])]["jobs_per_s"]
        for row in rows.values():
            row["ratio"] = round(row["jobs_per_s"] / base, 2)
    return results


def _serve(home: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    from mnemoflow.cluster.processes import free_port, wait_for

    port = free_port()
    log = home.parent / f"serve-{port}.log"
    home.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        process = subprocess.Popen([PY, "-m", "mnemoflow.cli", "serve", "--home", str(home), "--port", str(port),
                                    "--no-schedules", "--no-sql"], env={**os.environ, **env}, stdout=out,
                                   stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        import httpx

        try:
            return httpx.get(f"{url}/v1/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for("serve", up, process.pid, log, 300)
    return process, url


def concurrent_recall(pg: services.PostgresServer, s3: services.S3Server, workdir: Path, turns: int, clients: int,
                      requests: int) -> dict:
    import httpx

    from mnemoflow.config import load_settings
    from mnemoflow.service import MemoryService
    from mnemoflow.storage import Scope

    env = _store_env(pg, s3)
    os.environ.update(env)
    scope = Scope("bench", "recall")
    with MemoryService(load_settings(workdir / "loader", generate_memories=False)) as service:
        service.ingest(scope, [write_jsonl(workdir / "recall.jsonl", synthetic_turns(turns, seed=5))])
        key = service.create_api_key("bench")[1]
    servers = [_serve(workdir / f"server-{n}" / "home", env) for n in range(2)]
    queries = synthetic_queries(clients * requests, seed=13)
    report = {}
    try:
        for using in (1, 2):
            urls = [url for _, url in servers[:using]]
            for url in urls:  # warm each server's model and caches
                httpx.post(f"{url}/v1/recall", json={"user_id": "recall", "query": "warm up"},
                           headers={"Authorization": f"Bearer {key}"}, timeout=300)
            latencies: list[float] = []
            lock = threading.Lock()

            def client(n: int, urls: list[str] = urls) -> None:
                with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=300) as http:
                    for r in range(requests):
                        url = urls[(n + r) % len(urls)]
                        t0 = time.perf_counter()
                        answer = http.post(f"{url}/v1/recall", json={"user_id": "recall",
                                                                     "query": queries[n * requests + r]})
                        elapsed = (time.perf_counter() - t0) * 1000
                        assert answer.status_code == 200, answer.text
                        with lock:
                            latencies.append(elapsed)

            started = time.perf_counter()
            threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            wall = time.perf_counter() - started
            report[f"{using} server{'s' if using > 1 else ''}"] = {
                "p50_ms": round(percentile(latencies, 50)), "p95_ms": round(percentile(latencies, 95)),
                "recalls_per_s": round(len(latencies) / wall, 2)}
    finally:
        for process, _ in servers:
            stop(process.pid)
    one, two = report["1 server"], report["2 servers"]
    report["ratio_2_to_1"] = {"p95": round(two["p95_ms"] / one["p95_ms"], 2),
                              "throughput": round(two["recalls_per_s"] / one["recalls_per_s"], 2)}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=15)
    parser.add_argument("--insert-seconds", type=float, default=10)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--only", default="inserts,drain,recall")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-shared-"))
    logs = workdir / "logs"
    pg = services.start_postgres(Path(tempfile.mkdtemp(prefix="mnemoflow-bench-pg-")), logs / "pg.log")
    s3 = services.start_s3(logs / "s3.log")
    services.create_bucket(s3.endpoint, "bench")
    report: dict = {"turns": args.turns}
    try:
        only = set(args.only.split(","))
        if "inserts" in only:
            report["inserts"] = inserts(pg, args.insert_seconds)
            print(json.dumps(report["inserts"]), flush=True)
        if "drain" in only:
            report["drain"] = drain_rates(pg, s3, workdir, args.turns, tuple(int(w) for w in args.workers.split(",")))
            print(json.dumps(report["drain"]), flush=True)
        if "recall" in only:
            report["recall"] = concurrent_recall(pg, s3, workdir, args.turns, args.clients, args.requests)
            print(json.dumps(report["recall"]), flush=True)
    finally:
        services.stop_postgres(pg.pid)
        stop(s3.pid)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "shared_store.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
