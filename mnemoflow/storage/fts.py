"""BM25 over chunks and memories with DuckDB's FTS extension.

The FTS index is rebuilt, never updated in place, so writes only mark a table
dirty; the index is rebuilt once at the end of an ingest batch or, lazily, by the
next search. Searches therefore always see every committed write.

The extension is loaded into a connection by its first user (`load`): loading it costs ~0.06 CPU s,
which a command that never reads BM25 from DuckDB (a recall on LanceDB's index, `keys list`)
does not pay.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from datetime import datetime

import duckdb

from mnemoflow.storage import batch
from mnemoflow.storage.postgres import attached

_LOADED: weakref.WeakSet[duckdb.DuckDBPyConnection] = weakref.WeakSet()


@dataclass(frozen=True)
class FtsSpec:
    table: str
    id_column: str
    text_columns: tuple[str, ...]


CHUNKS_FTS = FtsSpec("chunks", "chunk_id", ("text", "context"))
MEMORIES_FTS = FtsSpec("memories", "memory_id", ("content",))
SUMMARIES_FTS = FtsSpec("summaries", "summary_id", ("content",))
FTS_SPECS = (CHUNKS_FTS, MEMORIES_FTS, SUMMARIES_FTS)
FTS_OF = {spec.table: spec for spec in FTS_SPECS}  # by target


def load(con: duckdb.DuckDBPyConnection) -> None:
    """DuckDB's FTS extension in `con`, installed from its wheel's own copy (never fetched)."""
    if con not in _LOADED:
        import duckdb_extensions

        duckdb_extensions.import_extension("fts", con=con)
        con.execute("LOAD fts")
        _LOADED.add(con)


def mark_dirty(con: duckdb.DuckDBPyConnection, spec: FtsSpec) -> None:
    if attached(con):
        return  # a PostgreSQL store has no DuckDB FTS index to rebuild (LanceDB's serves BM25)
    batch.upsert(con, "store_state", "key", {"key": f"fts:{spec.table}", "value": "dirty"})


def is_dirty(con: duckdb.DuckDBPyConnection, spec: FtsSpec) -> bool:
    row = con.execute("SELECT value FROM store_state WHERE key = ?", [f"fts:{spec.table}"]).fetchone()
    return row is not None and row[0] == "dirty"


def rebuild(con: duckdb.DuckDBPyConnection, spec: FtsSpec, now: datetime) -> None:
    if attached(con):
        return
    load(con)
    columns = ", ".join(f"'{c}'" for c in spec.text_columns)
    con.execute(
        f"PRAGMA create_fts_index('{spec.table}', '{spec.id_column}', {columns}, "
        "stemmer = 'porter', stopwords = 'english', strip_accents = 1, lower = 1, overwrite = 1)"
    )
    batch.upsert(con, "store_state", "key", {"key": f"fts:{spec.table}", "value": f"built {now.isoformat()}"})


def ensure_current(con: duckdb.DuckDBPyConnection, spec: FtsSpec, now: datetime) -> None:
    if is_dirty(con, spec):
        rebuild(con, spec, now)


def search(
    con: duckdb.DuckDBPyConnection, spec: FtsSpec, query: str, where: str, params: list, k: int
) -> list[tuple[str, float]]:
    """Top-k (id, bm25) inside `where`, the caller's scope and lifecycle predicates."""
    load(con)
    sql = (
        f"SELECT id, score FROM (SELECT {spec.id_column} AS id, "
        f"fts_main_{spec.table}.match_bm25({spec.id_column}, ?) AS score FROM {spec.table} WHERE {where}) "
        "WHERE score IS NOT NULL ORDER BY score DESC, id LIMIT ?"
    )
    return [(r[0], float(r[1])) for r in con.execute(sql, [query, *params, k]).fetchall()]
