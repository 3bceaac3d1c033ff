"""Opening the DuckDB file: one writing process at a time, so wait with backoff, then fail clearly."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from mnemoflow.errors import StoreBusyError, StoreUnavailableError
from mnemoflow.storage import postgres as pg

# Extensions come from the duckdb-extension-* wheels (`fts.load`); DuckDB must never try to fetch one.
_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def _is_lock_conflict(exc: duckdb.Error) -> bool:
    return "lock" in str(exc).lower()


def connect(path: Path, lock_timeout_s: float) -> duckdb.DuckDBPyConnection:
    """Open `path` read-write (the FTS extension is loaded by its first user: `fts.load`).

    While another process holds the file, retry with exponential backoff for up to
    `lock_timeout_s` seconds, then raise `StoreBusyError` naming the holder.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + lock_timeout_s
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(path), config=_CONFIG)
            break
        except duckdb.IOException as exc:
            if not _is_lock_conflict(exc):
                raise
            if time.monotonic() >= deadline:
                holder = str(exc).split("Conflicting lock is held in", 1)[-1].split(". See")[0].strip()
                raise StoreBusyError(
                    f"{path} is in use by another process ({holder}); waited {lock_timeout_s:.0f}s. "
                    "One process at a time opens a store: let it finish or stop it, then retry "
                    "(MNEMOFLOW_STORE_LOCK_TIMEOUT_S sets the wait)."
                ) from exc
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 2.0)
    return con


class Database:
    """The store's one DuckDB connection, used by one thread at a time: every room of the store
    reads and writes through `read` and `tx`, so a long-lived server's threads take turns.

    On a shared store (`postgres` set) the connection's tables live in PostgreSQL, which other
    processes write too: a transaction that names its tenant holds that tenant's write lock from its
    first statement (`pg.lock_tenant`), and a failure of PostgreSQL itself is raised as
    `StoreUnavailableError` (retryable) rather than as a bug."""

    def __init__(self, con: duckdb.DuckDBPyConnection, postgres: pg.Postgres | None = None,
                 applied: list[str] | None = None) -> None:
        self.con = con
        self.postgres = postgres
        self.applied = applied or []  # the migrations this open applied
        self.lock = threading.RLock()

    @contextmanager
    def tx(self, tenant_id: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction: committed when the block ends, rolled back when it raises. `tenant_id`: the
        tenant whose commit chain it appends to (on a shared store, its writes wait for that tenant's
        other writers)."""
        with self.lock, self._translated():
            self.con.execute("BEGIN TRANSACTION")
            try:
                if tenant_id is not None and self.postgres is not None:
                    pg.lock_tenant(self.con, tenant_id)
                yield self.con
            except BaseException:
                self._rollback()
                raise
            self.con.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock, self._translated():
            yield self.con

    def _rollback(self) -> None:
        try:
            self.con.execute("ROLLBACK")
        except duckdb.Error:
            if self.postgres is None:  # PostgreSQL gone mid-transaction: nothing is left to roll back
                raise

    @contextmanager
    def _translated(self) -> Iterator[None]:
        if self.postgres is None:
            yield
            return
        try:
            yield
        except duckdb.Error as exc:
            if pg.unavailable(exc):
                raise StoreUnavailableError(f"the store is unavailable: {str(exc).splitlines()[0][:300]}") from exc
            raise

    def rewrite_file(self, lock_timeout_s: float) -> bool:
        """Copy the database into a fresh file and put it in place of this one, then reopen it: DuckDB
        keeps a deleted row's bytes in the free blocks of its file until they are reused, and a purge
        means gone from the file too. Nothing else runs meanwhile (the lock); False for a database that
        is no local file."""
        with self.lock:
            name, where = self.con.execute("SELECT database_name, path FROM duckdb_databases() "
                                           "WHERE database_name = current_database()").fetchone()
            path = Path(where) if where else None
            if path is None or not path.is_file():
                return False
            fresh = path.with_name(f".{path.name}.rewrite")
            for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):  # of a run that died half-way
                leftover.unlink(missing_ok=True)
            self.con.execute("CHECKPOINT")
            quoted = str(fresh).replace("'", "''")
            self.con.execute(f"ATTACH '{quoted}' AS mnemoflow_rewrite")  # ATTACH takes no parameters
            try:
                self.con.execute(f'COPY FROM DATABASE "{name}" TO mnemoflow_rewrite')
            finally:
                self.con.execute("DETACH mnemoflow_rewrite")
            self.con.close()
            os.replace(fresh, path)  # atomic: a crash leaves the old file or the new, whole
            self.con = connect(path, lock_timeout_s)
            return True

    def close(self) -> None:
        with self.lock:
            self.con.close()
            if self.postgres is not None:
                pg.detach(self.con)
                self.postgres.close()


def table_exists(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        [schema, table]).fetchone()[0])
