"""One real run: `mnemoflow serve` with its schedules (a local Prefect server it starts, the
deployments served by a Prefect runner), a sync and every maintenance deployment run through Prefect
while clients write and read over HTTP and the CLI, then the tables each run wrote."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from mnemoflow.config import load_settings
from mnemoflow.maintenance import jobs
from mnemoflow.remote import ServerInfo, connect, read_server_info
from tests.maintenance.conftest import SESSIONS, transcript
from tests.serving import start_server, stop_server, wait_until_serving

READY_TIMEOUT_S = 240.0


def _deployments_served(home: Path, process: subprocess.Popen[str]) -> ServerInfo:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        info = read_server_info(home)
        if info is not None and info.deployments:
            return info
        assert process.poll() is None, (home.parent / "serve.log").read_text()[-4000:]
        time.sleep(0.5)
    raise AssertionError(f"no deployments served: {(home.parent / 'serve.log').read_text()[-4000:]}")


def _run_deployments(api_url: str, names: list[str]) -> dict[str, str]:
    """Each deployment run through Prefect, one after another (as their schedules would); final states."""
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    async def run_all() -> dict[str, str]:
        states = {}
        for name in names:
            flow = "sync" if name.startswith("sync-") else "maintain"
            run = await run_deployment(f"{flow}/{name}", timeout=600, poll_interval=2)
            states[name] = run.state.type.value if run.state else "none"
        return states

    with temporary_settings(updates={PREFECT_API_URL: api_url}):  # this test's server, not the suite's
        return asyncio.run(run_all())


@pytest.mark.slow
def test_sync_and_every_maintenance_job_run_through_prefect_while_clients_work(tmp_path: Path) -> None:
    home, notes = tmp_path / "home", tmp_path / "notes"
    notes.mkdir()
    for n in range(6):
        (notes / f"note{n}.md").write_text(f"# Trip {n}\n\nAlex's trip {n} to Porto is on May {n + 3}; "
                                           f"the hotel is the Casa {n}.\n")
    (chats := tmp_path / "chats").mkdir()
    transcript(chats / "ana-and-ben.jsonl", SESSIONS)  # four sessions of 2023: sources and days to seal
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources.notes]\nkind = "filesystem"\nlocation = "{notes}"\nglobs = ["**/*.md"]\n'
        'tenant_id = "acme"\nuser_id = "alex"\nschedule = "0 4 * * *"\n'
        f'[sources.chats]\nkind = "conversations"\nlocation = "{chats}"\n'
        'tenant_id = "acme"\nuser_id = "alex"\nschedule = "15 4 * * *"\n')
    # the scenario suite runs for minutes; this run checks the job, not the suite
    process = start_server(home, "--no-sql", log=tmp_path / "serve.log",
                           env={"MNEMOFLOW_EVAL_SCENARIOS_DIR": str(tmp_path / "no-scenarios"),
                                "MNEMOFLOW_CLUSTER_MIN_SIZE": "3"})  # a small store's topics
    try:
        wait_until_serving(home, process)
        info = _deployments_served(home, process)
        expected = {f"maintain-{name}" for name in jobs()} | {"sync-notes", "sync-chats"}
        assert set(info.deployments or []) == expected
        with connect(load_settings(home)) as service:
            key = service.create_api_key("acme")[1]
        http = httpx.Client(base_url=info.url, headers={"Authorization": f"Bearer {key}"}, timeout=300)

        def client_work() -> list[int]:
            codes = []
            for n in range(10):
                codes.append(http.post("/v1/memories", json={"user_id": "alex",
                                                             "text": f"Alex's locker {n} code is 40{n}{n}"}).status_code)
                codes.append(http.post("/v1/recall", json={"user_id": "alex", "query": "Porto hotel"}).status_code)
            cli = subprocess.run([sys.executable, "-m", "mnemoflow.cli", "recall", "Porto trip", "--home", str(home),
                                  "--tenant", "acme", "--user", "alex", "--json"], capture_output=True, text=True)
            codes.append(200 if cli.returncode == 0 and json.loads(cli.stdout)["items"] else cli.returncode)
            return codes

        order = ["sync-notes", "sync-chats", *(f"maintain-{name}" for name in jobs())]
        with ThreadPoolExecutor(max_workers=2) as pool:
            clients = pool.submit(client_work)
            states = _run_deployments(info.prefect_api_url or "", order)
            codes = clients.result()
        assert states == dict.fromkeys(order, "COMPLETED"), states
        assert set(codes) == {200}, codes

        with connect(load_settings(home)) as service:
            def count(sql: str) -> int:
                return service.sql(sql).rows[0][0]

            assert count("SELECT count(*) FROM source_documents WHERE connector = 'filesystem' "
                         "AND deleted_at IS NULL") == 6
            assert count("SELECT count(DISTINCT content) FROM memories WHERE content LIKE 'Alex''s locker %'") == 10
            assert count("SELECT count(*) FROM memories WHERE content LIKE 'Alex''s locker %' "
                         "AND deleted_at IS NULL") == 10  # nothing lost, nothing duplicated
            assert count("SELECT count(*) FROM quality_runs") > 0
            assert count("SELECT count(*) FROM quality_runs WHERE NOT success") == 0
            assert count("SELECT count(*) FROM eval_runs WHERE suite = 'isolation'") == 1
            assert count("SELECT count(*) FROM profiles WHERE tenant_id = 'acme' AND user_id = 'alex'") == 1
            assert count("SELECT count(*) FROM turns WHERE tenant_id = 'acme'") == 21
            assert count("SELECT count(*) FROM summaries WHERE tenant_id = 'acme' AND level = 'L1'") > 0
            assert count("SELECT count(*) FROM topics WHERE tenant_id = 'acme'") > 0
            assert count("SELECT count(*) FROM outbox WHERE status <> 'done'") == 0
    finally:
        if process.poll() is None:
            stop_server(process)
    assert not (home / "server.json").exists()
