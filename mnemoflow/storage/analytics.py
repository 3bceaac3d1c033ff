"""What analysts and operators read: any read-only SQL over the tables. The operator's view spans
every tenant (this is not a tenant API: the HTTP and MCP routes never reach it)."""

from __future__ import annotations

from typing import Any

import duckdb

from mnemoflow.errors import BadInputError
from mnemoflow.storage.room import Room

_READS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


class Analytics(Room):
    def sql(self, statement: str, params: list[Any] | None = None) -> tuple[list[str], list[tuple]]:
        """(column names, rows) of one read-only statement (SELECT, WITH, FROM, SHOW, DESCRIBE,
        EXPLAIN). It runs in a transaction that is rolled back, so nothing it might do stays."""
        with self._db.read() as con:
            try:
                statements = con.extract_statements(statement)
            except duckdb.Error as exc:
                raise BadInputError(f"not valid SQL: {str(exc).splitlines()[0]}") from None
            if len(statements) != 1:
                raise BadInputError(f"one statement at a time; got {len(statements)}")
            if statements[0].type not in _READS:
                raise BadInputError(f"read-only: {statements[0].type.name} statements are refused")
            con.execute("BEGIN TRANSACTION")
            try:
                cursor = con.execute(statement, params or [])
                names = [d[0] for d in cursor.description or []]
                return names, cursor.fetchall()
            except duckdb.Error as exc:
                raise BadInputError(str(exc).splitlines()[0]) from None
            finally:
                con.execute("ROLLBACK")
