"""A memory's life after it is written: pinned or shared by a person, used by recall (accesses),
scored by decay and archived when its retention runs out or it expires.

Pinning, sharing and archiving are commits (history shows who and when); the counters recall
bumps and the retention score decay writes are lifecycle state like `reinforcement`, outside
the row digest, so they change without one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from mnemoflow.models import MemoryItem
from mnemoflow.storage import batch
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.graph import HOTNESS_HALF_LIFE_DAYS
from mnemoflow.storage.lance_index import MEMORY_INDEX, sql_in
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import MEMORY_COLUMNS, active_memory_sql, active_until, epoch, memory_item
from mnemoflow.storage.scope import Scope, owned, tenant, visible
from mnemoflow.timeutil import utcnow

LANCE_ID_BATCH = 1000  # ids per LanceDB filter: a longer IN list costs more to parse than a second call


@dataclass(frozen=True)
class DecayInput:
    """What decay scores one active memory on: its salience, when the store learnt it and last
    used it, how often it was recalled or said again, and the heat of the hottest entity it names
    (decayed to now; 0 when it names none)."""

    memory_id: str
    salience: float
    created_at: datetime
    last_accessed_at: datetime | None
    access_count: int
    reinforcement: int
    pinned: bool
    heat: float


@dataclass(frozen=True)
class DecayOutcome:
    archived: int
    expired: int
    commit_id: str | None


class Lifecycle(Room):
    def set_memory_flags(
        self, scope: Scope, memory_id: str, *, actor: str, pinned: bool | None = None, shared: bool | None = None,
    ) -> MemoryItem | None:
        """Pin (decay never archives it; an archived memory comes back) or share (every user of the
        tenant sees it) one of the user's own memories, in one commit; None when the scope holds no
        such memory (deleted ones included). Setting a flag to what it already is writes nothing."""
        mine, params = owned(scope)
        now = utcnow()
        with self._db.tx(scope.tenant_id) as con:
            row = con.execute(f"SELECT {MEMORY_COLUMNS}, shared FROM memories WHERE {mine} AND memory_id = ? "
                              "AND deleted_at IS NULL", [*params, memory_id]).fetchone()
            if row is None:
                return None
            memory, was_shared = memory_item(row[:-1]), row[-1]
            revive = pinned is True and memory.archived_at is not None
            changes = {name: value for name, value, held in (("pinned", pinned, memory.pinned),
                                                             ("shared", shared, was_shared))
                       if value is not None and value != held}
            if not changes and not revive:
                return memory
            words = [("pin" if v else "unpin") if k == "pinned" else ("share" if v else "unshare")
                     for k, v in changes.items()]
            pending = PendingCommit(scope.tenant_id, actor, sha256_json({"memory": memory_id, **changes}),
                                    f"{' and '.join(words) or 'pin'} memory")
            assignments = ", ".join(f"{name} = ?" for name in changes)
            con.execute(
                f"UPDATE memories SET {assignments}{', ' if assignments else ''}archived_at = ?, updated_at = ?, "
                "commit_id = ? WHERE memory_id = ?",
                [*changes.values(), None if revive else memory.archived_at, now, pending.commit_id, memory_id])
            pending.record("memories", "update", [memory_id])
            write_commit(con, pending, now)
            row = con.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE memory_id = ?", [memory_id]).fetchone()
        updated = memory_item(row)
        values: dict[str, object] = {k: v for k, v in changes.items() if k == "shared"}
        if revive:
            values["active_until"] = active_until(updated.valid_to, updated.expires_at)
        if values:
            self._index.update(MEMORY_INDEX, sql_in("memory_id", [memory_id]), values)
        return updated

    def record_accesses(self, scope: Scope, memory_ids: list[str]) -> None:
        """Recall returned these memories: count the access and stamp the time. Accesses wait in memory
        and are written together, one statement per scope in one transaction, once
        `access_flush_s` has passed since the first of them (0: at once), before decay reads them, and
        when the store closes. A commit costs ~8 ms (its WAL flush), a tenth of a recall: written on
        every recall it would slow recall by as much (bench/README.md)."""
        if not memory_ids:
            return
        now = utcnow()
        with self._access_lock:
            for memory_id in memory_ids:
                times, _ = self._accesses.get((scope, memory_id), (0, now))
                self._accesses[(scope, memory_id)] = (times + 1, now)
            if self._accesses_since is None:
                self._accesses_since = time.monotonic()
            due = time.monotonic() - self._accesses_since >= self._access_flush_s
        if due:
            self.flush_accesses()

    def flush_accesses(self) -> None:
        """Write the accesses waiting in memory: per scope, one UPDATE adding the counts and stamping
        the latest time, all in one transaction."""
        with self._access_lock:
            waiting, self._accesses, self._accesses_since = self._accesses, {}, None
        by_scope: dict[Scope, list[list[object]]] = {}
        for (scope, memory_id), (times, at) in waiting.items():
            by_scope.setdefault(scope, []).append([memory_id, times, at])
        if not by_scope:
            return
        with self._db.tx() as con:
            for scope, rows in by_scope.items():
                where, params = visible(scope, "memories")
                with batch.registered(con, ["memory_id", "times", "at"], rows) as b:
                    con.execute(f"UPDATE memories SET access_count = access_count + b.times, last_accessed_at = "
                                f"greatest(coalesce(memories.last_accessed_at, b.at), b.at) FROM {b} b "
                                f"WHERE {where} AND memories.memory_id = b.memory_id", params)

    def decay_inputs(self, tenant_id: str) -> list[DecayInput]:
        """The tenant's active memories (deleted, superseded, archived and expired ones aside) with what
        decay scores them on; the heat of an entity is its hotness decayed to now, as `entities` reads it."""
        self.flush_accesses()
        now = utcnow()
        within, params = tenant(tenant_id, "m")
        with self._db.read() as con:
            rows = con.execute(
                f"""
                SELECT m.memory_id, m.salience, m.created_at, m.last_accessed_at, m.access_count,
                       coalesce(m.reinforcement, 0), coalesce(m.pinned, false),
                       coalesce(max(e.hotness * pow(0.5, greatest(date_diff('millisecond', e.last_seen, ?), 0)
                                    / 86400000.0 / ?)), 0)
                FROM memories m
                LEFT JOIN memory_entities me ON me.tenant_id = m.tenant_id AND me.memory_id = m.memory_id
                LEFT JOIN entities e ON e.tenant_id = me.tenant_id AND e.entity_id = me.entity_id
                WHERE {within} AND {active_memory_sql("m")}
                GROUP BY ALL ORDER BY m.memory_id
                """, [now, HOTNESS_HALF_LIFE_DAYS, *params, now, now]).fetchall()
        return [DecayInput(r[0], float(r[1]), r[2], r[3], int(r[4]), int(r[5]), bool(r[6]), float(r[7]))
                for r in rows]

    def apply_decay(
        self, tenant_id: str, scores: dict[str, float], archive: list[str], *, actor: str,
    ) -> DecayOutcome:
        """Record each scored memory's retention, archive `archive` (those still active and not
        pinned), and sweep the expired: a memory past its expires_at is archived as of then. One
        transaction; one commit when anything was archived."""
        now = utcnow()
        within, params = tenant(tenant_id)
        pending = PendingCommit(tenant_id, actor, sha256_json({"decay": sorted(archive), "at": now.isoformat()}), "")
        with self._db.tx(pending.tenant_id) as con:
            if scores:
                batch.update(con, "memories", "memory_id", ["retention"], [[m, s] for m, s in scores.items()])
            archived: list[str] = []
            if archive:
                with batch.id_set(con, archive) as ids:
                    archived = batch.update_returning(
                        con, "memories", "memory_id", "archived_at = ?, updated_at = ?, commit_id = ?",
                        f"{within} AND memory_id IN {ids} AND NOT coalesce(pinned, false) AND {active_memory_sql()}",
                        [now, now, pending.commit_id], [*params, now, now])
            expired = batch.update_returning(
                con, "memories", "memory_id", "archived_at = expires_at, updated_at = ?, commit_id = ?",
                f"{within} AND expires_at <= ? AND archived_at IS NULL AND deleted_at IS NULL",
                [now, pending.commit_id], [*params, now])
            pending.record("memories", "archive", archived)
            pending.record("memories", "expire", expired)
            if not pending.empty:
                pending.message = f"decay: archive {len(archived)} memories, {len(expired)} expired"
                write_commit(con, pending, now)
        for start in range(0, len(archived), LANCE_ID_BATCH):
            self._index.update(MEMORY_INDEX, sql_in("memory_id", archived[start:start + LANCE_ID_BATCH]),
                               {"active_until": epoch(now)})
        return DecayOutcome(len(archived), len(expired), None if pending.empty else pending.commit_id)
