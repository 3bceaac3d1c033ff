"""`mnemoflow cluster up|status|down --dir DIR`: the whole distributed mode on 127.0.0.1, started by one
command the way `dask`'s LocalCluster or `ray start --head` start theirs.

Under DIR: PostgreSQL (the system of record), an S3 server (the vectors), a Dask scheduler and workers
(bulk work), a Prefect server with a process worker on the `mnemoflow` pool (the schedules and flows),
N `mnemoflow serve` processes (stateless: any of them answers any tenant) and N `mnemoflow worker`
processes draining the outbox. `cluster.json` records every part's pid and port; ports stay the same
when a part is started again, so the URLs a client holds keep working. Each part runs in a session of
its own and is stopped by its pid.
"""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from mnemoflow.cluster import services
from mnemoflow.cluster.processes import alive, free_port, http_ok, port_open, spawn, stop, wait_for
from mnemoflow.config import OFFLINE_ENVIRONMENT, load_settings, prefect_server_environment
from mnemoflow.errors import ConfigError

STATE_FILE = "cluster.json"
DATABASE = "mnemoflow"
BUCKET = "mnemoflow"
START_TIMEOUT_S = 180.0
# the order parts start in; they stop in reverse
ROLES = ("postgres", "s3", "dask-scheduler", "dask-worker", "prefect", "server", "worker")


def _state_path(directory: Path) -> Path:
    return directory / STATE_FILE


def load_state(directory: Path) -> dict[str, Any]:
    try:
        return json.loads(_state_path(directory).read_text())
    except (OSError, ValueError):
        return {}


def _save(directory: Path, state: dict[str, Any]) -> None:
    path = _state_path(directory)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(state, indent=2))
    temporary.chmod(0o600)  # it holds the operator token
    temporary.replace(path)


def client_environment(state: dict[str, Any]) -> dict[str, str]:
    """What points the CLI and the Python client at the cluster (`server` lists every server: a client
    uses the first that answers)."""
    return {
        "MNEMOFLOW_STORE_URL": state["postgres"]["url"],
        "MNEMOFLOW_VECTORS_URL": f"s3://{BUCKET}/vectors",
        **services.s3_environment(state["s3"]["endpoint"]),
        "MNEMOFLOW_SERVER": ",".join(s["url"] for s in state.get("servers", [])),
        "MNEMOFLOW_SERVER_TOKEN": state["token"],
        "MNEMOFLOW_DASK_ADDRESS": state["dask-scheduler"]["address"],
        "MNEMOFLOW_PREFECT_API_URL": state["prefect"]["api_url"],
    }


def _part_environment(state: dict[str, Any]) -> dict[str, str]:
    """The environment of the cluster's own processes: the client's, but no server to send work to (they
    are the servers and workers), no schedules in a server (the Prefect worker runs them)."""
    import os

    env = {**os.environ, **OFFLINE_ENVIRONMENT, **client_environment(state), "MNEMOFLOW_SCHEDULES_ENABLED": "false",
           "MNEMOFLOW_QUACK_ENABLED": "false", "PREFECT_API_URL": state["prefect"]["api_url"]}
    env.pop("MNEMOFLOW_SERVER")
    return env


def up(directory: Path, servers: int = 2, workers: int = 2, dask_workers: int = 2) -> dict[str, Any]:
    """Start what is not running; returns `summary` once every part answers."""
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    logs = directory / "logs"
    state = load_state(directory)
    state.setdefault("token", secrets.token_urlsafe(32))
    _postgres(state, directory, logs)
    _save(directory, state)
    _s3(state, logs)
    _save(directory, state)
    _dask(state, logs, dask_workers)
    _save(directory, state)
    _prefect(state, directory, logs)
    _save(directory, state)
    _servers(state, directory, logs, servers)
    _save(directory, state)
    _workers(state, directory, logs, workers)
    _save(directory, state)
    return summary(state)


def summary(state: dict[str, Any]) -> dict[str, Any]:
    return {
        "servers": [s["url"] for s in state.get("servers", [])],
        "env": client_environment(state),
        "postgres": state["postgres"]["url"],
        "s3": {"endpoint": state["s3"]["endpoint"], "bucket": BUCKET},
        "dask": state["dask-scheduler"]["address"],
        "prefect": state["prefect"]["api_url"],
    }


def _postgres(state: dict[str, Any], directory: Path, logs: Path) -> None:
    part = state.get("postgres", {})
    if alive(part.get("pid")):
        return
    data_dir = services.postgres_data_dir(directory / "postgres")
    server = services.start_postgres(data_dir, logs / "postgres.log", port=part.get("port"))
    services.create_database(server.url(), DATABASE)
    state["postgres"] = {"pid": server.pid, "port": server.port, "data_dir": str(data_dir),
                         "url": server.url(DATABASE)}


def _s3(state: dict[str, Any], logs: Path) -> None:
    part = state.get("s3", {})
    if not alive(part.get("pid")):
        server = services.start_s3(logs / "s3.log", port=part.get("port"))
        part = {"pid": server.pid, "port": server.port, "endpoint": server.endpoint}
        state["s3"] = part
    services.create_bucket(part["endpoint"], BUCKET)


def _python(*args: str) -> list[str]:
    return [sys.executable, *args]


def _dask(state: dict[str, Any], logs: Path, count: int) -> None:
    scheduler = state.get("dask-scheduler", {})
    if not alive(scheduler.get("pid")):
        port = scheduler.get("port") or free_port()
        pid = spawn(_python("-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                            "--no-dashboard"), logs / "dask-scheduler.log")
        wait_for("the Dask scheduler", lambda: port_open("127.0.0.1", port), pid, logs / "dask-scheduler.log",
                 START_TIMEOUT_S)
        scheduler = {"pid": pid, "port": port, "address": f"tcp://127.0.0.1:{port}"}
        state["dask-scheduler"] = scheduler
    kept = [w for w in state.get("dask-worker", []) if alive(w["pid"])]
    for n in range(len(kept), count):
        log = logs / f"dask-worker-{n}.log"
        pid = spawn(_python("-m", "distributed.cli.dask_worker", scheduler["address"], "--nthreads", "1",
                            "--nworkers", "1", "--memory-limit", "0", "--no-dashboard", "--host", "127.0.0.1"), log,
                    env=_worker_env())
        kept.append({"pid": pid, "log": str(log)})
    state["dask-worker"] = kept


def _worker_env() -> dict[str, str]:
    import os

    return {**os.environ, **OFFLINE_ENVIRONMENT}


def _prefect(state: dict[str, Any], directory: Path, logs: Path) -> None:
    part = state.get("prefect", {})
    if not alive(part.get("pid")):
        port = part.get("port") or free_port()
        home = directory / "prefect"
        home.mkdir(parents=True, exist_ok=True)
        pid = spawn(_python("-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)),
                    logs / "prefect.log", env=prefect_server_environment(home))
        api = f"http://127.0.0.1:{port}/api"
        wait_for("the Prefect server", lambda: http_ok(f"{api}/health"), pid, logs / "prefect.log", START_TIMEOUT_S)
        part = {"pid": pid, "port": port, "api_url": api}
        state["prefect"] = part
    if not alive(state.get("prefect-worker", {}).get("pid")):
        _deploy(state, directory, logs)
        pid = spawn(_python("-m", "prefect", "worker", "start", "--pool", "mnemoflow", "--type", "process"),
                    logs / "prefect-worker.log", env=_part_environment(state), cwd=directory)
        state["prefect-worker"] = {"pid": pid}


def _deploy(state: dict[str, Any], directory: Path, logs: Path) -> None:
    """The work pool and the deployments (each maintenance job on its schedule, ingest on demand): they live
    in the Prefect server's database, so no server process holds a schedule."""
    from mnemoflow.flows.deployments import PROJECT_ROOT, WORK_POOL, prefect_yaml

    env = _part_environment(state)
    flows_home = directory / "flows"
    settings = load_settings(flows_home, store_url=state["postgres"]["url"])
    (directory / "prefect.yaml").write_text(prefect_yaml(settings))
    with open(logs / "prefect-deploy.log", "ab") as log:
        subprocess.run(_python("-m", "prefect", "work-pool", "create", WORK_POOL, "--type", "process"),
                       env=env, stdout=log, stderr=subprocess.STDOUT, cwd=PROJECT_ROOT)
        done = subprocess.run(_python("-m", "prefect", "--no-prompt", "deploy", "--all", "--prefect-file",
                                      str(directory / "prefect.yaml")),
                              env=env, stdout=log, stderr=subprocess.STDOUT, cwd=PROJECT_ROOT)
    if done.returncode != 0:
        raise ConfigError(f"prefect deploy failed (see {logs / 'prefect-deploy.log'})")


def _servers(state: dict[str, Any], directory: Path, logs: Path, count: int) -> None:
    servers = state.get("servers", [])
    for n in range(max(count, len(servers))):
        part = servers[n] if n < len(servers) else {}
        if alive(part.get("pid")):
            continue
        port = part.get("port") or free_port()
        log = logs / f"server-{n}.log"
        pid = spawn(_python("-m", "mnemoflow.cli", "serve", "--home", str(directory / "servers" / str(n)),
                            "--port", str(port), "--no-schedules", "--no-sql"), log, env=_part_environment(state))
        url = f"http://127.0.0.1:{port}"
        part = {"pid": pid, "port": port, "url": url}
        if n < len(servers):
            servers[n] = part
        else:
            servers.append(part)
    state["servers"] = servers
    for n, part in enumerate(servers):
        wait_for(f"server {n}", lambda u=part["url"]: _server_answers(u, state["token"]), part["pid"],
                 logs / f"server-{n}.log", START_TIMEOUT_S)


def _server_answers(url: str, token: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{url}/v1/local/health", headers={"Authorization": f"Bearer {token}"},
                         timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def _workers(state: dict[str, Any], directory: Path, logs: Path, count: int) -> None:
    workers = state.get("workers", [])
    for n in range(max(count, len(workers))):
        if n < len(workers) and alive(workers[n].get("pid")):
            continue
        pid = spawn(_python("-m", "mnemoflow.cli", "worker", "--forever", "--home",
                            str(directory / "workers" / str(n))), logs / f"worker-{n}.log", env=_part_environment(state))
        part = {"pid": pid}
        if n < len(workers):
            workers[n] = part
        else:
            workers.append(part)
    state["workers"] = workers


def processes(directory: Path) -> list[dict[str, Any]]:
    """Every process the cluster started: role, name, pid, whether it runs, and where it answers."""
    state = load_state(directory.resolve())
    found: list[dict[str, Any]] = []

    def add(role: str, name: str, part: dict[str, Any], endpoint: str | None = None) -> None:
        found.append({"role": role, "name": name, "pid": part.get("pid"), "running": alive(part.get("pid")),
                      "endpoint": endpoint})

    if "postgres" in state:
        add("postgres", "postgres", state["postgres"], state["postgres"]["url"])
    if "s3" in state:
        add("s3", "s3", state["s3"], state["s3"]["endpoint"])
    if "dask-scheduler" in state:
        add("dask-scheduler", "dask-scheduler", state["dask-scheduler"], state["dask-scheduler"]["address"])
    for n, part in enumerate(state.get("dask-worker", [])):
        add("dask-worker", f"dask-worker-{n}", part)
    if "prefect" in state:
        add("prefect", "prefect-server", state["prefect"], state["prefect"]["api_url"])
    if "prefect-worker" in state:
        add("prefect", "prefect-worker", state["prefect-worker"])
    for n, part in enumerate(state.get("servers", [])):
        add("server", f"server-{n}", part, part["url"])
    for n, part in enumerate(state.get("workers", [])):
        add("worker", f"worker-{n}", part)
    return found


def down(directory: Path) -> list[dict[str, Any]]:
    """Stop every process the cluster started, servers and workers first (they finish what they hold),
    PostgreSQL last; returns what was stopped. The data stays under DIR for the next `up`."""
    directory = directory.resolve()
    state = load_state(directory)
    stopped = []
    order = sorted(processes(directory), key=lambda p: -ROLES.index(p["role"]))
    for part in order:
        if not part["running"]:
            continue
        if part["role"] == "postgres":
            services.stop_postgres(part["pid"])
        else:
            _stop_group(part["pid"])
        stopped.append(part)
    for key in ("postgres", "s3", "dask-scheduler", "prefect", "prefect-worker"):
        if key in state:
            state[key]["pid"] = None
    for key in ("dask-worker", "servers", "workers"):
        for part in state.get(key, []):
            part["pid"] = None
    if state:
        _save(directory, state)
    return stopped


def _stop_group(pid: int) -> None:
    """SIGTERM the part's whole process group (a Dask nanny's worker, a Prefect worker's flow runs), then
    SIGKILL what is left after the wait."""
    import os

    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    if stop(pid, signal.SIGTERM, timeout_s=20.0):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
