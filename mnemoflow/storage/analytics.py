"""What analysts and operators read: any read-only SQL over the tables, and the live store served to
SQL clients over DuckDB's Quack protocol. The operator's view spans every tenant (this is not a
tenant API: the HTTP and MCP routes never reach it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from mnemoflow.errors import BadInputError, ConfigError
from mnemoflow.storage import fts
from mnemoflow.storage.room import Room
from mnemoflow.timeutil import utcnow

SNAPSHOT_EXCLUDED = frozenset({"api_keys"})  # credentials never leave, not even hashed
QUACK_EXTENSIONS = ("httpfs", "quack")  # loaded from their duckdb-extension-* wheels, never downloaded

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
            if "match_bm25" in statement.lower():  # small writes leave the FTS indexes to the next reader
                for spec in fts.FTS_SPECS:
                    fts.ensure_current(con, spec, utcnow())
            con.execute("BEGIN TRANSACTION")
            try:
                cursor = con.execute(statement, params or [])
                names = [d[0] for d in cursor.description or []]
                return names, cursor.fetchall()
            except duckdb.Error as exc:
                raise BadInputError(str(exc).splitlines()[0]) from None
            finally:
                con.execute("ROLLBACK")

    def snapshot(self, out_dir: Path) -> dict[str, int]:
        """A consistent Parquet copy of every table and view of the store (API key hashes excepted): one
        transaction, so every file shows the same moment. Returns rows per table."""
        out_dir.mkdir(parents=True, exist_ok=True)
        written: dict[str, int] = {}
        with self._db.read() as con:
            names = [r[0] for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
                "ORDER BY table_name").fetchall() if r[0] not in SNAPSHOT_EXCLUDED]
            con.execute("BEGIN TRANSACTION")
            try:
                for name in names:
                    target = str(out_dir / f"{name}.parquet").replace("'", "''")
                    con.execute(f"COPY (SELECT * FROM main.\"{name}\") TO '{target}' (FORMAT parquet)")
                    written[name] = con.execute(f"SELECT count(*) FROM main.\"{name}\"").fetchone()[0]
            finally:
                con.execute("ROLLBACK")
        return written

    def serve_sql(self, uri: str, token: str) -> None:
        """Serve this database at `uri` (`quack:HOST:PORT`) to clients presenting `token`; they attach it
        read-only (`ATTACH 'quack:HOST:PORT' AS mf (READ_ONLY)` after `CREATE SECRET (TYPE quack, TOKEN ...)`).
        ConfigError when the extension cannot load or serve."""
        import duckdb_extensions

        with self._db.read() as con:
            try:
                for name in QUACK_EXTENSIONS:
                    duckdb_extensions.import_extension(name, con=con)
                    con.execute(f"LOAD {name}")
                con.execute("CALL quack_serve(?, token => ?)", [uri, token]).fetchall()
            except (duckdb.Error, ImportError, OSError) as exc:
                raise ConfigError(f"cannot serve SQL at {uri}: {str(exc).splitlines()[0]}") from None
        self._sql_served = (uri, token)

    def stop_sql(self, uri: str) -> None:
        with self._db.read() as con:
            con.execute("CALL quack_stop(?)", [uri]).fetchall()
        self._sql_served = None

    def rewrite_file(self) -> bool:
        """The DuckDB file copied afresh in place of itself (`Database.rewrite_file`: no purged row's bytes
        left in its free blocks), the SQL endpoint served again at its address when it was; False when
        the store is no local file."""
        served = self._sql_served
        with self._landing, self._db.lock:
            if served is not None:
                self.stop_sql(served[0])
            try:
                return self._db.rewrite_file(self._lock_timeout_s)
            finally:
                if served is not None:
                    self.serve_sql(*served)

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (a clean stop leaves no WAL behind)."""
        with self._db.read() as con:
            con.execute("CHECKPOINT")
