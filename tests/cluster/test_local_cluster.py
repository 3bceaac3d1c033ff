"""`mnemoflow cluster`: two servers and two workers on one store. A write through one server is recalled
through the other; two ingests through different servers run at once while a server and a worker are
killed with SIGKILL; `cluster up` brings them back, the failed ingest is run again, and the store holds
every document once, each codeword is recalled, the chain verifies, and `cluster down` leaves nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemoflow.cluster.processes import alive

pytestmark = [pytest.mark.slow, pytest.mark.shared_only]
TENANT, USER = "harbour", "quinn"


def _cli(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mnemoflow.cli", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


def _corpus(root: Path, name: str, count: int) -> Path:
    folder = root / name
    folder.mkdir()
    for n in range(count):
        (folder / f"{name}-{n:03d}.md").write_text(
            f"# Berth log {name} {n}\n\nVessel {n} of the {name} fleet moored at berth {n % 17}. The harbour "
            f"master's codeword for it is {name.upper()}{n:03d}KEY.\n")
    return folder


def _status(directory: Path, env: dict[str, str]) -> list[dict]:
    done = _cli("cluster", "status", "--dir", str(directory), "--json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_two_servers_and_two_workers_survive_a_killed_server_and_worker(tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    base = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOFLOW_")}
    base["MNEMOFLOW_HOME"] = str(tmp_path / "client")
    up = _cli("cluster", "up", "--dir", str(directory), "--servers", "2", "--workers", "2", "--dask-workers", "1",
              env=base, timeout=900)
    assert up.returncode == 0, up.stderr[-3000:]
    summary = json.loads(up.stdout)
    env = {**base, **summary["env"]}
    first, second = summary["servers"]
    try:
        added = _cli("add", "Quinn keeps the spare mooring lines in shed nine", "--tenant", TENANT, "--user", USER,
                     env={**env, "MNEMOFLOW_SERVER": first})
        assert added.returncode == 0, added.stderr
        recalled = _cli("recall", "where are the spare mooring lines?", "--tenant", TENANT, "--user", USER,
                        env={**env, "MNEMOFLOW_SERVER": second})
        assert recalled.returncode == 0 and "shed nine" in recalled.stdout, recalled.stderr

        corpora = {"north": _corpus(tmp_path, "north", 100), "south": _corpus(tmp_path, "south", 100)}
        ingests = {name: subprocess.Popen(
            [sys.executable, "-m", "mnemoflow.cli", "ingest", str(folder), "--tenant", TENANT, "--user", USER],
            env={**env, "MNEMOFLOW_SERVER": server}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for (name, folder), server in zip(corpora.items(), (first, second))}
        time.sleep(3)
        parts = {p["name"]: p for p in _status(directory, env)}
        os.kill(parts["server-1"]["pid"], signal.SIGKILL)
        os.kill(parts["worker-0"]["pid"], signal.SIGKILL)
        codes = {name: process.wait(timeout=600) for name, process in ingests.items()}

        again = _cli("cluster", "up", "--dir", str(directory), "--servers", "2", "--workers", "2",
                     "--dask-workers", "1", env=base, timeout=900)
        assert again.returncode == 0, again.stderr[-3000:]
        assert json.loads(again.stdout)["servers"] == [first, second]  # the same addresses
        assert all(p["running"] for p in _status(directory, env))
        for name, code in codes.items():
            if code != 0:  # the ingest whose server died: run it again, through the same address
                rerun = _cli("ingest", str(corpora[name]), "--tenant", TENANT, "--user", USER,
                             env={**env, "MNEMOFLOW_SERVER": second})
                assert rerun.returncode == 0, rerun.stderr[-2000:]

        deadline = time.monotonic() + 300
        while True:  # the workers (and the servers) drain what the dead ones held
            pending = json.loads(_cli("outbox", "--json", env=env).stdout)["counts"]
            if not any(states.get("pending") for states in pending.values()) or time.monotonic() > deadline:
                break
            time.sleep(3)
        rows = _cli("sql", "SELECT count(*) AS docs, count(DISTINCT uri) AS uris FROM source_documents "
                    "WHERE deleted_at IS NULL AND uri LIKE 'file:%'", "--json", env=env)
        assert json.loads(rows.stdout) == {"docs": 200, "uris": 200}, rows.stderr
        twice = _cli("sql", "SELECT count(*) AS n FROM (SELECT document_id, ordinal FROM chunks WHERE deleted_at "
                     "IS NULL GROUP BY ALL HAVING count(*) > 1)", "--json", env=env)
        assert json.loads(twice.stdout) == {"n": 0}
        for codeword in ("NORTH007KEY", "SOUTH042KEY", "SOUTH099KEY"):
            found = _cli("recall", f"which vessel has codeword {codeword}?", "--tenant", TENANT, "--user", USER,
                         env={**env, "MNEMOFLOW_SERVER": first})
            assert codeword in found.stdout, found.stdout + found.stderr
        verified = _cli("verify", env=env)
        assert verified.returncode == 0, verified.stdout + verified.stderr
    finally:
        down = _cli("cluster", "down", "--dir", str(directory), env=base)
    assert down.returncode == 0, down.stderr
    left = [p for p in _status(directory, env) if p["running"] or (p["pid"] and alive(p["pid"]))]
    assert left == []
    state = json.loads((directory / "cluster.json").read_text())
    assert not alive(state["postgres"]["pid"]) if state["postgres"]["pid"] else True
