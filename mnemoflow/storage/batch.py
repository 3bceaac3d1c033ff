"""Set-based writes: register rows as an Arrow table and INSERT/UPDATE from it in one statement.

DuckDB's `executemany` runs one statement per row; a registered Arrow batch is
one statement per batch, which is what keeps ingest close to embedding speed.

On a PostgreSQL store (`postgres.attached(con)`) DuckDB runs the same statements through its
postgres extension, which pushes a column's comparison with literals down to PostgreSQL (and its
indexes) but scans the whole table for a join with a registered batch, and which cannot return an
UPDATE's, DELETE's or INSERT ... ON CONFLICT's rows. So there ids go into statements as literal
lists, and `RETURNING` and `ON CONFLICT` are the two statements they stand for; both are exact
because a tenant's writers take turns (`Database.tx(tenant_id)`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pyarrow as pa

from mnemoflow.storage.postgres import attached

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
    by `on_conflict_ignore` is not among them). On PostgreSQL the key `on_conflict_ignore` looks up is
    `returning`, else the first column."""
    if not rows:
        return []
    cols = ", ".join(columns)
    if attached(con) and (on_conflict_ignore or returning is not None):
        at = list(columns).index(returning) if returning is not None else 0
        if on_conflict_ignore:
            with id_set(con, list({str(r[at]) for r in rows})) as keys:
                taken = {r[0] for r in con.execute(
                    f"SELECT CAST({columns[at]} AS VARCHAR) FROM {table} WHERE {columns[at]} IN {keys}").fetchall()}
            fresh: dict[str, Sequence[Any]] = {}
            for row in rows:
                if str(row[at]) not in taken:
                    fresh.setdefault(str(row[at]), row)
            rows = list(fresh.values())
        if rows:
            with registered(con, columns, rows) as batch:
                con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {batch}")
        return [row[at] for row in rows] if returning is not None else []
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
    with registered(con, [key, *columns], rows) as batch, id_set(con, [str(r[0]) for r in rows]) as keys:
        narrowed = f" AND {table}.{key} IN {keys}" if attached(con) else ""
        con.execute(f"UPDATE {table} SET {assignments} FROM {batch} b WHERE {table}.{key} = b.{key}{narrowed}")


def update_returning(
    con: duckdb.DuckDBPyConnection, table: str, id_column: str, assignments: str, where: str,
    params: Sequence[Any] = (), where_params: Sequence[Any] = (), *, source: str = "",
) -> list[Any]:
    """`UPDATE table SET assignments [FROM source] WHERE where RETURNING table.id_column`: the ids of
    the rows updated. `params` fill `assignments`, `where_params` fill `where`."""
    join = f" FROM {source}" if source else ""
    if not attached(con):
        return [r[0] for r in con.execute(
            f"UPDATE {table} SET {assignments}{join} WHERE {where} RETURNING {table}.{id_column}",
            [*params, *where_params]).fetchall()]
    also = f", {source}" if source else ""
    found = [r[0] for r in con.execute(f"SELECT DISTINCT {table}.{id_column} FROM {table}{also} WHERE {where}",
                                       list(where_params)).fetchall()]
    if found:
        with id_set(con, [str(i) for i in found]) as ids:
            con.execute(f"UPDATE {table} SET {assignments}{join} WHERE {where} AND {table}.{id_column} IN {ids}",
                        [*params, *where_params])
    return found


def delete_returning(con: duckdb.DuckDBPyConnection, table: str, where: str, params: Sequence[Any],
                     returning: str) -> list[Any]:
    """`DELETE FROM table WHERE where RETURNING returning` (an expression over the row)."""
    if not attached(con):
        return [r[0] for r in con.execute(f"DELETE FROM {table} WHERE {where} RETURNING {returning}",
                                          list(params)).fetchall()]
    found = [r[0] for r in con.execute(f"SELECT {returning} FROM {table} WHERE {where}", list(params)).fetchall()]
    if found:
        con.execute(f"DELETE FROM {table} WHERE {where}", list(params))
    return found


def upsert(con: duckdb.DuckDBPyConnection, table: str, key: str, values: dict[str, Any]) -> None:
    """Insert one row, or set its other columns where its `key` exists. On PostgreSQL the statement runs
    there as written (one row: its literals are quoted by psycopg), in the same transaction."""
    columns = list(values)
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != key)
    if not attached(con):
        con.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)}) "
                    f"ON CONFLICT ({key}) DO UPDATE SET {updates}", list(values.values()))
        return
    from psycopg import sql

    from mnemoflow.storage.postgres import CATALOG

    literals = ", ".join(sql.quote(v.isoformat() if hasattr(v, "isoformat") else v) for v in values.values())
    statement = (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({literals}) "
                 f"ON CONFLICT ({key}) DO UPDATE SET {updates}")
    con.execute(f"CALL postgres_execute('{CATALOG}', {_string(statement)})")


@contextmanager
def id_set(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> Iterator[str]:
    """`... IN <ids>` for a list of ids. A few plain ids (the usual case: a memory's neighbours, the
    entities of one add) are written into the statement as literals, ~1 ms; more, or any with other
    characters, go as a registered Arrow column, ~2-4 ms whatever the count (binding a Python list as
    a parameter costs ~30 ms per 400 ids). On PostgreSQL they are always a literal list, which the
    scan pushes down (5,000 ids: 47 ms against 128 ms for a join at 200k rows)."""
    if attached(con):
        yield "(" + (", ".join(_string(str(i)) for i in ids) or "NULL") + ")"
        return
    with id_rows(con, ids) as rows:
        yield rows


KEY_LOOKUP_IDS = 2048  # DuckDB's index_scan_max_count: up to this many keys, its primary-key index finds rows


@contextmanager
def key_rows(con: duckdb.DuckDBPyConnection, table: str, key: str, ids: Sequence[str]) -> Iterator[str]:
    """The rows of `table` whose `key` is one of `ids`, as a relation for a `MATERIALIZED` CTE, so that
    the scope and lifecycle predicates apply to those rows only. Plain ids go as a literal `IN` list on
    the key alone, which DuckDB answers from the primary-key index; a predicate beside it, or ids
    joined from a column, make it scan the table (400 ids at 1M chunks: 19 ms against 72-79)."""
    plain = len(ids) <= KEY_LOOKUP_IDS and all(isinstance(i, str) and _PLAIN_ID.fullmatch(i) for i in ids)
    if plain or attached(con):
        yield f"(SELECT * FROM {table} WHERE {key} IN ({', '.join(_string(str(i)) for i in ids) or 'NULL'}))"
        return
    with registered(con, ["id"], [[i] for i in ids]) as name:
        yield f"(SELECT * FROM {table} WHERE {key} IN (SELECT id FROM {name}))"


@contextmanager
def id_rows(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> Iterator[str]:
    """A relation of one column `id` holding `ids` (for `FROM`)."""
    if len(ids) <= LITERAL_IDS and all(isinstance(i, str) and _PLAIN_ID.fullmatch(i) for i in ids):
        literals = ", ".join(f"'{i}'" for i in ids)
        yield f"(SELECT unnest([{literals}]::VARCHAR[]) AS id)"
        return
    with registered(con, ["id"], [[i] for i in ids]) as name:
        yield f"(SELECT id FROM {name})"


def _string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
