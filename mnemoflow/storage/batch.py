"""Set-based writes: register rows as an Arrow table and INSERT/UPDATE from it in one statement.

DuckDB's `executemany` runs one statement per row; a registered Arrow batch is
one statement per batch, which is what keeps ingest close to embedding speed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pyarrow as pa


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
    """`... IN (SELECT id FROM <name>)` for a list of ids. Binding a Python list as a parameter
    costs ~30 ms per 400 ids; a registered Arrow column costs ~1 ms."""
    with registered(con, ["id"], [[i] for i in ids]) as name:
        yield f"(SELECT id FROM {name})"
