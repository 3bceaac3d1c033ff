"""`Room`: what every part of the store shares (the one DuckDB connection, the LanceDB tables and
how the store was configured). `Store` is the rooms together; callers only ever see `Store`."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from mnemoflow.storage.connection import Database
from mnemoflow.storage.lance_index import LanceIndex
from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:
    from mnemoflow.storage.heartbeat import Heartbeat
    from mnemoflow.storage.vectors import RecentVectors

Target = Literal["chunks", "memories", "summaries"]
Bm25Engine = Literal["lancedb", "duckdb"]


class Room:
    _db: Database
    _index: LanceIndex
    _recent: RecentVectors  # the vectors this process used last (storage/vectors.py)
    _bm25_engine: Bm25Engine
    _max_attempts: int
    _lease_s: float
    _landing: threading.RLock
    _backoff_s: float
    _backoff_max_s: float
    _access_flush_s: float
    _access_lock: threading.Lock
    _accesses: dict[tuple[Scope, str], tuple[int, datetime]]  # recall accesses not written yet: times, last
    _accesses_since: float | None  # monotonic time of the oldest of them
    _heartbeat: Heartbeat | None  # on a shared store: this process saying it is alive while it holds leases
