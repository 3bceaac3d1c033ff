"""Faults of the shared store: PostgreSQL restarted under load (retryable 503s with Retry-After, nothing
acknowledged lost, the server recovers by itself), and the S3 server down (writes go on, recall answers
from the system of record and says so)."""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

from mnemoflow.cluster import services
from mnemoflow.cluster.processes import stop
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.serving import served

pytestmark = [pytest.mark.shared_only, pytest.mark.slow]
SCOPE = Scope("acme", "rosa")


def _key(home: Path, settings_env: dict[str, str]) -> str:
    with MemoryService(load_settings(home)) as service:
        return service.create_api_key(SCOPE.tenant_id)[1]


def test_a_postgresql_restart_under_load_loses_nothing_acknowledged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = Path(tempfile.mkdtemp(prefix="mnemoflow-restart-pg-"))
    pg = services.start_postgres(data, tmp_path / "pg.log", durable=True)
    services.create_database(pg.url(), "restart")
    monkeypatch.setenv("MNEMOFLOW_STORE_URL", pg.url("restart"))
    monkeypatch.delenv("MNEMOFLOW_VECTORS_URL")  # the server's own folder: this test is about PostgreSQL
    home = tmp_path / "home"
    acknowledged: list[str] = []
    refusals: list[httpx.Response] = []
    try:
        with served(home, "--no-schedules", "--no-sql") as info:
            key = _key(home, {})
            stop_adding = threading.Event()

            def add_until_told() -> None:
                with httpx.Client(base_url=info.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
                    n = 0
                    while not stop_adding.is_set():
                        text = f"Rosa logged tide reading {n} at the north pier"
                        answer = http.post("/v1/memories", json={"user_id": SCOPE.user_id, "text": text,
                                                                 "infer": False})
                        if answer.status_code == 200:
                            acknowledged.append(text)
                        else:
                            refusals.append(answer)
                        n += 1
                        time.sleep(0.05)

            adder = threading.Thread(target=add_until_told)
            adder.start()
            time.sleep(3)
            services.stop_postgres(pg.pid)
            time.sleep(2)
            pg = services.start_postgres(data, tmp_path / "pg.log", port=pg.port, durable=True)
            time.sleep(4)
            stop_adding.set()
            adder.join(timeout=120)
            with httpx.Client(base_url=info.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
                after = http.post("/v1/memories", json={"user_id": SCOPE.user_id, "infer": False,
                                                         "text": "Rosa moved the buoy charts to locker four"})
                assert after.status_code == 200, after.text  # the same server, no restart
                listed = http.get("/v1/memories", params={"user_id": SCOPE.user_id, "limit": 1000}).json()
                stored = {m.get("memory") or m["content"] for m in (listed["results"] if isinstance(listed, dict) else listed)}
        assert refusals, "the restart was not noticed"
        assert all(r.status_code == 503 and r.headers.get("Retry-After") for r in refusals), \
            [(r.status_code, r.text[:200]) for r in refusals]
        assert set(acknowledged) <= stored  # nothing acknowledged is lost
        with MemoryService(load_settings(home)) as service:
            [report] = service.verify(SCOPE.tenant_id)
            assert report.ok, report.problems
    finally:
        services.stop_postgres(pg.pid)


def test_with_the_bucket_down_writes_go_on_and_recall_answers_from_the_store(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    s3 = services.start_s3(tmp_path / "s3.log")
    services.create_bucket(s3.endpoint, "down-test")
    monkeypatch.setenv("MNEMOFLOW_VECTORS_URL", "s3://down-test/vectors")
    for key, value in services.s3_environment(s3.endpoint).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MNEMOFLOW_STORE_CONNECT_TIMEOUT_S", "2")
    settings = load_settings(tmp_path / "home")
    try:
        with MemoryService(settings) as service:
            service.add(SCOPE, "Rosa's kayak is stored at the Penarth boat club")
            stop(s3.pid)
            memory, created = service.add(SCOPE, "Rosa's sailing dinghy is moored in Cardiff Bay", wait=False)
            assert created  # acknowledged while the bucket is down
            drained = service.drain()
            assert drained.unavailable and drained.embedded == 0  # the vector waits, its attempt given back
            result = service.recall(SCOPE, "where is Rosa's dinghy moored?")
            assert any("Cardiff Bay" in item.text for item in result.items)
            assert any("system of record" in w for w in result.warnings), result.warnings
            assert service.outbox_counts().get("pending", 0) >= 1
    finally:
        stop(s3.pid)
