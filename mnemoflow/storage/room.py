"""`Room`: what every part of the store shares (the one DuckDB connection, the LanceDB tables and
how the store was configured). `Store` is the rooms together; callers only ever see `Store`."""

from __future__ import annotations

from typing import Literal

from mnemoflow.storage.connection import Database
from mnemoflow.storage.lance_index import LanceIndex

Target = Literal["chunks", "memories", "summaries"]
Bm25Engine = Literal["lancedb", "duckdb"]


class Room:
    _db: Database
    _index: LanceIndex
    _bm25_engine: Bm25Engine
    _max_attempts: int
    _lease_s: float
