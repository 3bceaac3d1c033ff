"""Opening the DuckDB file: one writing process at a time, so wait with backoff, then fail clearly."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import duckdb_extensions

from mnemoflow.errors import StoreBusyError

# Extensions come from the duckdb-extension-* wheels; DuckDB must never try to fetch one.
_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def _is_lock_conflict(exc: duckdb.Error) -> bool:
    return "lock" in str(exc).lower()


def connect(path: Path, lock_timeout_s: float) -> duckdb.DuckDBPyConnection:
    """Open `path` read-write with the FTS extension loaded.

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
    duckdb_extensions.import_extension("fts", con=con)  # installs from the wheel's own copy
    con.execute("LOAD fts")
    return con
