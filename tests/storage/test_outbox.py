"""The outbox: a failed job backs off (not claimable before its wait ends, the wait doubling), becomes a
dead letter after its last attempt with its last error, and replay queues it again as new."""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.errors import NotFoundError
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import utcnow
from tests.conftest import plant
from tests.test_cli import run

SCOPE = Scope("acme", "alex")


def _job(service: MemoryService) -> tuple:
    return service.store.sql("SELECT job_key, status, attempts, next_attempt_at, last_error FROM outbox")[1][0]


def _backdate(service: MemoryService) -> None:
    """As if the job's backoff had ended."""
    plant(service, "UPDATE outbox SET next_attempt_at = next_attempt_at - INTERVAL 1 DAY")


def test_a_failed_job_backs_off_doubling_then_is_a_dead_letter_until_replayed(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "home", outbox_max_attempts=3, outbox_backoff_s=60, outbox_backoff_max_s=100)
    with MemoryService(settings) as service:
        service.add(SCOPE, "Alex prefers the window seat on morning trains", wait=False)
        waits = []
        for attempt in (1, 2, 3):
            [job] = service.store.claim_embedding_jobs(10)
            assert job.attempts == attempt
            before = utcnow()
            service.store.fail_jobs([job.job_key], f"embedder said no ({attempt})")
            key, status, attempts, next_attempt_at, error = _job(service)
            assert error == f"embedder said no ({attempt})"
            waits.append((next_attempt_at - before).total_seconds())
            if attempt < 3:
                assert status == "pending" and service.store.claim_embedding_jobs(10) == []  # backing off
                _backdate(service)
        assert waits[0] == pytest.approx(60, abs=2) and waits[1] == pytest.approx(100, abs=2)  # 120 capped at 100
        assert status == "dead" and attempts == 3
        _backdate(service)
        assert service.store.claim_embedding_jobs(10) == []  # a dead letter is never claimed

        status_now = service.outbox_status()
        assert status_now.counts == {"embed": {"dead": 1}}
        assert [(j.job_key, j.last_error) for j in status_now.dead] == [(key, "embedder said no (3)")]

        assert service.replay(dead=True) == [key]
        _, status, attempts, next_attempt_at, error = _job(service)
        assert (status, attempts, next_attempt_at) == ("pending", 0, None) and error == "embedder said no (3)"
        assert service.drain().embedded == 1
        assert _job(service)[1:] == ("done", 1, None, None)


def test_replay_refuses_a_key_the_outbox_does_not_hold(service: MemoryService) -> None:
    with pytest.raises(NotFoundError, match="no outbox job nope"):
        service.replay(["nope"])
    assert service.replay(dead=True) == []


def test_the_migration_turns_failed_jobs_into_dead_letters(tmp_path: Path) -> None:
    import duckdb

    from mnemoflow.storage.migrations import MIGRATIONS, apply_migrations

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    before = [m for m in MIGRATIONS if m[0] < "0006"]
    for name, fn in before:
        fn(con)
    con.execute("INSERT INTO outbox VALUES ('k', 't', 'u', 'embed', '{}', 5, NULL, 'failed', 'boom', now(), now())")
    con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                "applied_at TIMESTAMP NOT NULL)")
    for version, (name, _) in enumerate(before, start=1):
        con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
    assert "0006_lifecycle_quality" in apply_migrations(con)
    assert con.execute("SELECT status, last_error, next_attempt_at FROM outbox").fetchall() == [("dead", "boom", None)]
    with pytest.raises(duckdb.ConstraintException):
        con.execute("UPDATE outbox SET status = 'failed'")
    con.close()


def test_outbox_and_replay_commands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    with MemoryService(load_settings(home, outbox_max_attempts=1)) as service:
        service.add(SCOPE, "Alex prefers the window seat on morning trains", wait=False)
        [job] = service.store.claim_embedding_jobs(1)
        service.store.fail_jobs([job.job_key], "model file missing")
        plant(service, "UPDATE outbox SET created_at = ? ", [utcnow() - timedelta(hours=2)])
    code, out, _ = run(capsys, "outbox", "--home", str(home))
    assert code == 0 and "embed: 1 dead" in out and f"dead {job.job_key}" in out and "model file missing" in out
    assert run(capsys, "replay", "--home", str(home))[0] == 2
    code, _, err = run(capsys, "replay", "nope", "--home", str(home))
    assert code == 2 and "no outbox job nope" in err
    code, out, _ = run(capsys, "replay", job.job_key, "--home", str(home))
    assert code == 0 and "replayed 1 jobs" in out
    code, out, _ = run(capsys, "outbox", "--home", str(home))
    assert "embed: 1 pending" in out and "oldest pending job: waiting 2h" in out


CLAIM_AND_DIE = """
import os, signal, sys
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
service = MemoryService(load_settings(sys.argv[1]))
assert len(service.store.claim_embedding_jobs(10)) == 1
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.embedded_only("one writer per file: on a shared store a lease is taken over after its holder falls "
                            "silent (tests/storage/test_shared_store.py)")
def test_a_lease_left_by_a_killed_process_is_claimable_at_once(tmp_path: Path) -> None:
    """Found by the crash harness (tests/crash_harness.py): a worker killed in the middle of its jobs
    left them leased for outbox_lease_s (300 s), and the next `mnemoflow worker` ended at once,
    exit 0, with every memory of those sessions missing. DuckDB lets one process write the file,
    so a lease of another process is one that died; this process's own leases still hold."""
    home = tmp_path / "home"
    with MemoryService(load_settings(home)) as service:
        service.add(SCOPE, "Alex prefers the window seat on morning trains", wait=False)
    child = subprocess.run([sys.executable, "-c", CLAIM_AND_DIE, str(home)], capture_output=True, text=True,
                           timeout=120, check=False)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]

    with MemoryService(load_settings(home)) as service:
        assert service.drain().embedded == 1  # at once, not when the dead process's lease runs out
        assert _job(service)[1:3] == ("done", 2)  # its attempt counts
        service.add(SCOPE, "Alex takes the 7:40 train on Mondays", wait=False)
        assert len(service.store.claim_embedding_jobs(10)) == 1
        with MemoryService(load_settings(home)) as same_process:
            assert same_process.store.claim_embedding_jobs(10) == []
