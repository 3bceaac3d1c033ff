"""The outbox: derived work (embeddings, memory generation) queued in the same transaction as the
rows it derives from.

At least once, idempotent: job keys are unique, so enqueueing twice is a no-op; a claimed job is
leased, and a lease that runs out makes it claimable again. A lease names the process that holds it
(`worker_id`): DuckDB lets one process at a time write the file, so a lease held by another process
than the one claiming was left by a process that died (or ended without letting go), and its jobs
are claimable at once rather than when the lease runs out. A job that fails waits before its
next attempt, twice as long each time (`fail`), and after its last attempt it is a dead
letter (status `dead`, with its last error) until someone replays it.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import duckdb

from mnemoflow.storage import batch
from mnemoflow.storage.scope import SCOPE_COLUMNS, Scope, row_scope

_WORKER_IDS: dict[int, str] = {}


def worker_id() -> str:
    """This process's name on the leases it holds: its pid and a random part (a pid is reused)."""
    pid = os.getpid()
    return _WORKER_IDS.setdefault(pid, f"{pid}-{uuid.uuid4().hex[:12]}")


@dataclass(frozen=True)
class Job:
    job_key: str
    scope: Scope  # the scope the job's rows belong to (the scope that queued it)
    kind: str
    payload: dict[str, Any]
    attempts: int


def enqueue(con: duckdb.DuckDBPyConnection, jobs: list[Job], now: datetime | list[datetime]) -> None:
    """Queue `jobs` at `now`, or each at its own time (jobs are claimed oldest first)."""
    times = now if isinstance(now, list) else [now] * len(jobs)
    batch.insert(
        con, "outbox",
        ["job_key", *SCOPE_COLUMNS, "kind", "payload", "attempts", "status", "created_at", "updated_at"],
        [[j.job_key, *j.scope.stamp().values(), j.kind, json.dumps(j.payload), 0, "pending", t, t]
         for j, t in zip(jobs, times)],
        on_conflict_ignore=True,
    )


def requeue(con: duckdb.DuckDBPyConnection, jobs: list[Job], now: datetime) -> None:
    """Queue jobs again even where the same key already ran (a rebuild under an unchanged model)."""
    if jobs:
        with batch.id_set(con, [j.job_key for j in jobs]) as keys:
            con.execute(f"DELETE FROM outbox WHERE job_key IN {keys}")
    enqueue(con, jobs, now)


def claim(
    con: duckdb.DuckDBPyConnection, kind: str, limit: int, lease_s: float, now: datetime
) -> list[Job]:
    """Lease up to `limit` pending jobs of `kind` whose backoff has ended and whose lease is free, ran
    out, or was left by a process that is gone, oldest first. A job taken over from a dead process
    keeps the attempt that process used (a retried generation job clears what that try left)."""
    me = worker_id()
    rows = con.execute(
        f"""
        UPDATE outbox SET attempts = attempts + 1, lease_until = ?, leased_by = ?, updated_at = ?
        WHERE job_key IN (
            SELECT job_key FROM outbox
            WHERE status = 'pending' AND kind = ?
              AND (lease_until IS NULL OR lease_until < ? OR leased_by IS DISTINCT FROM ?)
              AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
            ORDER BY created_at, job_key LIMIT ?)
        RETURNING job_key, kind, payload, attempts, {", ".join(SCOPE_COLUMNS)}
        """,
        [now + timedelta(seconds=lease_s), me, now, kind, now, me, now, limit],
    ).fetchall()
    return [job_of(r) for r in rows]


def job_of(row: tuple) -> Job:
    """A job from a (job_key, kind, payload, attempts, *scope columns) row."""
    return Job(row[0], row_scope(row[4:]), row[1], json.loads(row[2]), row[3])


def complete(con: duckdb.DuckDBPyConnection, keys: list[str], now: datetime) -> None:
    if keys:
        with batch.id_set(con, keys) as ids:
            con.execute(
                "UPDATE outbox SET status = 'done', lease_until = NULL, leased_by = NULL, next_attempt_at = NULL, "
                "last_error = NULL, updated_at = ? "
                f"WHERE job_key IN {ids}",
                [now],
            )


def fail(
    con: duckdb.DuckDBPyConnection, keys: list[str], error: str, max_attempts: int, now: datetime,
    *, base_s: float, max_s: float,
) -> None:
    """A job-specific failure: counts against the job, which is not claimable again before its
    backoff ends (`base_s` after the first attempt, doubling with each one, at most `max_s`); after
    `max_attempts` it is a dead letter."""
    if keys:
        with batch.id_set(con, keys) as ids:
            con.execute(
                "UPDATE outbox SET lease_until = NULL, leased_by = NULL, last_error = ?, updated_at = ?, "
                "next_attempt_at = ? + to_microseconds(CAST(1000000 * least(?, ? * pow(2, greatest(attempts - 1, 0))) "
                "AS BIGINT)), "
                f"status = CASE WHEN attempts >= ? THEN 'dead' ELSE 'pending' END WHERE job_key IN {ids}",
                [error[:2000], now, now, max_s, base_s, max_attempts],
            )


def release(con: duckdb.DuckDBPyConnection, keys: list[str], error: str, now: datetime) -> None:
    """The service, not the job, failed (embedder down): give the attempt back and free the lease."""
    if keys:
        with batch.id_set(con, keys) as ids:
            con.execute(
                "UPDATE outbox SET attempts = attempts - 1, lease_until = NULL, leased_by = NULL, last_error = ?, "
                "updated_at = ? "
                f"WHERE job_key IN {ids}",
                [error[:2000], now],
            )


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return dict(con.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())


def replay(con: duckdb.DuckDBPyConnection, keys: list[str], now: datetime) -> list[str]:
    """Queue these jobs again as new: attempts reset, no lease, no backoff (the last error stays until
    an attempt succeeds). Returns the keys found."""
    if not keys:
        return []
    with batch.id_set(con, keys) as ids:
        return batch.update_returning(
            con, "outbox", "job_key", "status = 'pending', attempts = 0, lease_until = NULL, leased_by = NULL, "
            "next_attempt_at = NULL, updated_at = ?", f"job_key IN {ids}", [now])
