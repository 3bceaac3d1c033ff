"""What operators see of the outbox and do to it: counts, the oldest waiting job, dead letters and
their errors, jobs that nobody works on, and replaying jobs. The operator's view spans every
tenant, like `sql`; a tenant narrows it."""

from __future__ import annotations



from mnemoflow.reports import OutboxJob, OutboxStatus
from mnemoflow.storage import batch, outbox
from mnemoflow.storage.room import Room
from mnemoflow.storage.scope import tenant
from mnemoflow.timeutil import utcnow


_JOB_COLUMNS = ("job_key, tenant_id, user_id, kind, status, attempts, last_error, created_at, updated_at, "
                "next_attempt_at")


def _job(row: tuple) -> OutboxJob:
    return OutboxJob(**dict(zip([c.strip() for c in _JOB_COLUMNS.split(",")], row)))


class Queue(Room):
    def outbox_status(self, tenant_id: str | None = None, *, dead_limit: int = 50) -> OutboxStatus:
        where, params = tenant(tenant_id) if tenant_id is not None else ("true", [])
        now = utcnow()
        with self._db.read() as con:
            status = OutboxStatus()
            for kind, state, n in con.execute(
                    f"SELECT kind, status, count(*) FROM outbox WHERE {where} GROUP BY ALL ORDER BY ALL",
                    params).fetchall():
                status.counts.setdefault(kind, {})[state] = n
            oldest, backing_off = con.execute(
                f"SELECT min(created_at), count(*) FILTER (WHERE next_attempt_at > ?) FROM outbox "
                f"WHERE {where} AND status = 'pending'", [now, *params]).fetchone()
            status.oldest_pending_age_s = None if oldest is None else (now - oldest).total_seconds()
            status.backing_off = backing_off
            status.dead = [_job(r) for r in con.execute(
                f"SELECT {_JOB_COLUMNS} FROM outbox WHERE {where} AND status = 'dead' "
                "ORDER BY updated_at DESC, job_key LIMIT ?", [*params, dead_limit]).fetchall()]
        return status

    def stuck_jobs(self, stuck_after_s: float, tenant_id: str | None = None, *, limit: int = 50) -> list[OutboxJob]:
        """Pending jobs nobody has touched for `stuck_after_s` (no worker runs, or one dies on them)
        and whose backoff is not what holds them."""
        where, params = tenant(tenant_id) if tenant_id is not None else ("true", [])
        now = utcnow()
        with self._db.read() as con:
            return [_job(r) for r in con.execute(
                f"SELECT {_JOB_COLUMNS} FROM outbox WHERE {where} AND status = 'pending' "
                "AND updated_at < ? - to_microseconds(CAST(? * 1000000 AS BIGINT)) "
                "AND (next_attempt_at IS NULL OR next_attempt_at <= ?) ORDER BY created_at, job_key LIMIT ?",
                [*params, now, stuck_after_s, now, limit]).fetchall()]

    def dead_job_keys(self, tenant_id: str | None = None) -> list[str]:
        where, params = tenant(tenant_id) if tenant_id is not None else ("true", [])
        with self._db.read() as con:
            return [r[0] for r in con.execute(f"SELECT job_key FROM outbox WHERE {where} AND status = 'dead' "
                                              "ORDER BY job_key", params).fetchall()]

    def known_job_keys(self, job_keys: list[str]) -> list[str]:
        with self._db.read() as con, batch.id_set(con, job_keys) as keys:
            return [r[0] for r in con.execute(f"SELECT job_key FROM outbox WHERE job_key IN {keys}").fetchall()]

    def replay_jobs(self, job_keys: list[str]) -> list[str]:
        """Queue these jobs again with their attempts reset; returns the keys the outbox holds."""
        with self._db.tx() as con:
            return outbox.replay(con, list(dict.fromkeys(job_keys)), utcnow())

    def leased_elsewhere(self) -> int:
        """Pending jobs another process holds a lease on (on a shared store: a worker at work, or one that
        died and whose jobs are taken over once it has been silent long enough)."""
        with self._db.read() as con:
            return con.execute("SELECT count(*) FROM outbox WHERE status = 'pending' AND lease_until IS NOT NULL "
                               "AND leased_by IS DISTINCT FROM ?", [outbox.worker_id()]).fetchone()[0]
