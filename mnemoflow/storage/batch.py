"""Set-based writes: register rows as an Arrow table and INSERT/UPDATE from it in one statement.

DuckDB's `executemany` runs one statement per row; a registered Arrow batch is
one statement per batch, which is what keeps ingest close to embedding speed.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pyarrow as pa

LITERAL_IDS = 64  # up to this many ids go into a statement as literals
_PLAIN_ID = re.compile(r"[A-Za-z0-9_.:@+|/=-]{1,256}")  # nothing a SQL string literal must escape


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Iterator[str]:
    """Expose `rows` as a temporary relation; yields its name."""
    with arrow(con, pa.table({name: [row[i] for row in rows] for i, name in enumerate(columns)})) as name:
        yield name


@contextmanager
def arrow(con: duckdb.DuckDBPyConnection, table: pa.Table) -> Iterator[str]:
    """Expose an Arrow table as a temporary relation; yields its name."""
    name = f"_batch_{uuid.uuid4().hex[:12]}"
    con.register(name, table)
    try:
        yield name
    finally:
        con.unregister(name)


def insert(
    con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]],
    *, on_conflict_ignore: bool = False, returning: str | None = None,
) -> list[Any]:
    """INSERT the rows; with `returning`, that column of the rows actually inserted (a row skipped
    by `on_conflict_ignore` is not among them)."""
    if not rows:
        return []
    cols = ", ".join(columns)
    conflict = " ON CONFLICT DO NOTHING" if on_conflict_ignore else ""
    with registered(con, columns, rows) as batch:
        if returning is None:
            con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {batch}{conflict}")
            return []
        return [r[0] for r in con.execute(
            f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {batch}{conflict} RETURNING {returning}").fetchall()]


def update(
    con: duckdb.DuckDBPyConnection, table: str, key: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """UPDATE `table` SET columns from rows whose first value is `key`."""
    if not rows:
        return
    assignments = ", ".join(f"{c} = b.{c}" for c in columns)
    with registered(con, [key, *columns], rows) as batch:
        con.execute(f"UPDATE {table} SET {assignments} FROM {batch} b WHERE {table}.{key} = b.{key}")


@contextmanager
def id_set(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> Iterator[str]:
    """`... IN <ids>` (or `FROM <ids>`) for a list of ids. A few plain ids (the usual case: a memory's
    neighbours, the entities of one add) are written into the statement as literals, ~1 ms; more, or
    any with other characters, go as a registered Arrow column, ~2-4 ms whatever the count (binding a
    Python list as a parameter costs ~30 ms per 400 ids)."""
    if len(ids) <= LITERAL_IDS and all(isinstance(i, str) and _PLAIN_ID.fullmatch(i) for i in ids):
        literals = ", ".join(f"'{i}'" for i in ids)
        yield f"(SELECT unnest([{literals}]::VARCHAR[]) AS id)"
        return
    with registered(con, ["id"], [[i] for i in ids]) as name:
        yield f"(SELECT id FROM {name})"
