"""What analysts and operators read: any read-only SQL over the tables, and the live store served to
SQL clients over DuckDB's Quack protocol. The operator's view spans every tenant (this is not a
tenant API: the HTTP and MCP routes never reach it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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
        EXPLAIN). It runs in a transaction that is rolled back, so nothing it might do stays. On a shared
        store it runs on a connection of its own that attaches PostgreSQL read-only (an analyst's long
        query never holds the store's connection)."""
        with self._analyst_connection() as con:
            try:
                statements = con.extract_statements(statement)
            except duckdb.Error as exc:
                raise BadInputError(f"not valid SQL: {str(exc).splitlines()[0]}") from None
            if len(statements) != 1:
                raise BadInputError(f"one statement at a time; got {len(statements)}")
            if statements[0].type not in _READS:
                raise BadInputError(f"read-only: {statements[0].type.name} statements are refused")
            fts.load(con)  # a statement may call its functions (match_bm25, stem)
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

    def snapshot(self, out_dir: Path | str, s3: dict[str, str] | None = None) -> dict[str, int]:
        """A consistent Parquet copy of every table and view of the store (API key hashes excepted): one
        transaction, so every file shows the same moment. `out_dir` is a folder, or an `s3://` URL that
        `s3` (endpoint, region, keys: the vectors' bucket settings) reaches. Returns rows per table."""
        remote = isinstance(out_dir, str) and out_dir.startswith("s3://")
        if not remote:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
        written: dict[str, int] = {}
        with self._analyst_connection() as con:
            if remote:
                _reach_bucket(con, s3 or {})
            names = [r[0] for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema IN ('main', 'public') "
                "AND table_catalog NOT IN ('system', 'memory') ORDER BY table_name").fetchall()
                if r[0] not in SNAPSHOT_EXCLUDED]
            con.execute("BEGIN TRANSACTION")
            try:
                for name in names:
                    place = f"{str(out_dir).rstrip('/')}/{name}.parquet" if remote else str(Path(out_dir) / f"{name}.parquet")
                    con.execute(f"COPY (SELECT * FROM \"{name}\") TO '{place.replace(chr(39), chr(39) * 2)}' "
                                "(FORMAT parquet)")
                    written[name] = con.execute(f"SELECT count(*) FROM \"{name}\"").fetchone()[0]
            finally:
                con.execute("ROLLBACK")
        return written

    @contextmanager
    def _analyst_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The store's own connection (one machine), or a new one attaching its PostgreSQL database
        read-only, with the analyst views, for one statement or snapshot (a shared store)."""
        if self._db.postgres is None:
            with self._db.read() as con:
                yield con
            return
        from mnemoflow.storage.postgres import attach_read_only

        con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
        try:
            attach_read_only(con, self._db.postgres.url)
            yield con
        finally:
            con.close()

    def serve_sql(self, uri: str, token: str) -> None:
        """Serve this database at `uri` (`quack:HOST:PORT`) to clients presenting `token`; they attach it
        read-only (`ATTACH 'quack:HOST:PORT' AS mf (READ_ONLY)` after `CREATE SECRET (TYPE quack, TOKEN ...)`).
        ConfigError when the extension cannot load or serve."""
        import duckdb_extensions

        with self._db.read() as con:
            fts.load(con)  # what analysts' statements may call (match_bm25, stem)
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
        """Fold the write-ahead log into the database file (a clean stop leaves no WAL behind); PostgreSQL
        keeps its own."""
        if self._db.postgres is not None:
            return
        with self._db.read() as con:
            con.execute("CHECKPOINT")


def _reach_bucket(con: duckdb.DuckDBPyConnection, s3: dict[str, str]) -> None:
    """httpfs (from its wheel) with a secret for the bucket: S3, or an S3-compatible endpoint."""
    import duckdb_extensions
    from urllib.parse import urlsplit

    duckdb_extensions.import_extension("httpfs", con=con)
    con.execute("LOAD httpfs")
    options = {"REGION": s3.get("region", "us-east-1")}
    if s3.get("access_key_id"):
        options |= {"KEY_ID": s3["access_key_id"], "SECRET": s3.get("secret_access_key", "")}
    if endpoint := s3.get("endpoint"):
        parts = urlsplit(endpoint)
        options |= {"ENDPOINT": parts.netloc, "URL_STYLE": "path", "USE_SSL": str(parts.scheme == "https").lower()}
    rendered = ", ".join(f"{k} '{v}'" if k not in ("USE_SSL",) else f"{k} {v}" for k, v in options.items())
    con.execute(f"CREATE OR REPLACE SECRET mnemoflow_snapshot (TYPE s3, {rendered})")
