"""The system of record on PostgreSQL (`store_url = postgresql://...`), for many servers and workers.

DuckDB stays the query engine: its `postgres` extension attaches the database (READ COMMITTED, so a
statement sees what other processes committed before it) and runs the store's own SQL there, with
primary keys enforced by PostgreSQL. PostgreSQL itself acts only where DuckDB cannot ask it to:
- a tenant's writes take turns: every transaction that appends to a tenant's commit chain first takes
  that tenant's advisory transaction lock (`lock_tenant`, in the same PostgreSQL transaction as the
  writes, through `postgres_execute`), so the chain stays one line and a read-then-write inside the
  tenant cannot interleave with another process's;
- outbox claims are `UPDATE ... FOR UPDATE SKIP LOCKED ... RETURNING` through psycopg (DuckDB's
  scanner wraps a query in COPY and cannot return an UPDATE's rows), so any number of workers each
  take different jobs;
- processes that lease jobs say they are alive in `workers`; a lease held by a process silent for
  three beats is taken over at once rather than when it runs out.
The schema is the embedded store's: every migration runs on a scratch in-memory DuckDB, and the
tables and columns it ends with are created in PostgreSQL (`sync_schema`), under a session advisory
lock so that servers starting together do it once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import duckdb
import duckdb_extensions

from mnemoflow.errors import StoreUnavailableError, UnreachableError

CATALOG = "mf"  # the attached database's name inside DuckDB
_SCHEMA_LOCK = 4_242_001  # session advisory lock key of the schema sync
_LANDING_LOCK = 4_242_002  # session advisory lock key of dlt's loads
_CLAIM_LOCK = 4_242_003  # transaction advisory lock of generation claims (one worker per owner)
_CREATION_LOCK = 4_242_004  # session advisory lock key of creating a LanceDB table
_ATTACHED: set[int] = set()  # ids of DuckDB connections whose default catalog is PostgreSQL

# Secondary indexes for the predicates the store pushes down to PostgreSQL (DuckDB's file needs none:
# it scans columnar segments). Created with the tables, kept by name.
INDEXES = {
    "outbox_claimable": "outbox (kind, status, created_at, job_key)",
    "outbox_tenant": "outbox (tenant_id, status)",
    "chunks_tenant": "chunks (tenant_id, user_id)",
    "chunks_document": "chunks (document_id)",
    "documents_tenant": "source_documents (tenant_id, user_id)",
    "turns_tenant": "turns (tenant_id, user_id)",
    "turns_document": "turns (document_id)",
    "memories_tenant": "memories (tenant_id, user_id)",
    "memory_links_src": "memory_links (src)",
    "memory_links_dst": "memory_links (dst)",
    "memory_entities_entity": "memory_entities (entity_id)",
    "memory_entities_memory": "memory_entities (memory_id)",
    "relations_memory": "relations (memory_id)",
    "commits_tenant_seq": "commits (tenant_id, seq)",
    "entities_tenant": "entities (tenant_id)",
    "review_queue_tenant": "review_queue (tenant_id)",
    "summaries_tenant": "summaries (tenant_id, user_id)",
    # the keyword search over the system of record when the vectors' bucket cannot be reached
    "chunks_text_search": "chunks USING gin (to_tsvector('english', text))",
    "memories_text_search": "memories USING gin (to_tsvector('english', content))",
    "summaries_text_search": "summaries USING gin (to_tsvector('english', content))",
}


_GONE = ("server closed the connection", "terminating connection", "could not connect", "connection refused",
         "no connection to the server", "connection to server", "the database system is shutting down",
         "the database system is starting up", "in recovery mode", "consuming input failed",
         "connection not open", "lost synchronization with server")


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and urlsplit(url).scheme in ("postgres", "postgresql")


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def with_timeout(url: str, connect_timeout_s: float) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.setdefault("connect_timeout", str(max(1, round(connect_timeout_s))))
    return urlunsplit(parts._replace(query=urlencode(query)))


def attached(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this connection's tables live in PostgreSQL."""
    return id(con) in _ATTACHED


def tenant_lock_key(tenant_id: str) -> int:
    """A tenant's advisory lock key: 63 bits of a digest (stable across processes and versions)."""
    return int.from_bytes(hashlib.sha256(f"mnemoflow tenant {tenant_id}".encode()).digest()[:8], "big") >> 1


def lock_tenant(con: duckdb.DuckDBPyConnection, tenant_id: str) -> None:
    """Take the tenant's advisory lock in the connection's current PostgreSQL transaction (held until it
    ends; taking it again is a no-op)."""
    con.execute(f"CALL postgres_execute('{CATALOG}', 'SELECT pg_advisory_xact_lock({tenant_lock_key(tenant_id)})')")


def unavailable(exc: BaseException) -> bool:
    """Whether a DuckDB error says PostgreSQL went away (a restart, a dropped connection)."""
    text = str(exc).lower()
    return any(s in text for s in _GONE)


def attach(con: duckdb.DuckDBPyConnection, url: str, connect_timeout_s: float) -> None:
    """Attach the database as the connection's default catalog; UnreachableError naming it when it cannot be
    reached."""
    duckdb_extensions.import_extension("postgres", con=con)  # from the wheel's own copy
    con.execute("LOAD postgres")
    con.execute("SET pg_use_ctid_scan = false")  # one scan per query: the tenant index decides, not page ranges
    try:
        con.execute(f"ATTACH '{with_timeout(url, connect_timeout_s).replace(chr(39), chr(39) * 2)}' AS {CATALOG} "
                    "(TYPE postgres, ISOLATION_LEVEL 'READ COMMITTED')")
    except duckdb.Error as exc:
        raise UnreachableError(f"cannot reach the store at {redacted(url)}: {_reason(exc)}") from None
    con.execute(f"USE {CATALOG}")
    _ATTACHED.add(id(con))


def attach_read_only(con: duckdb.DuckDBPyConnection, url: str) -> None:
    """An analyst's connection: the database attached read-only (one consistent snapshot per
    transaction) as the default catalog, with the analyst views."""
    duckdb_extensions.import_extension("postgres", con=con)
    con.execute("LOAD postgres")
    con.execute("SET pg_use_ctid_scan = false")
    try:
        con.execute(f"ATTACH '{url.replace(chr(39), chr(39) * 2)}' AS {CATALOG} (TYPE postgres, READ_ONLY)")
    except duckdb.Error as exc:
        raise StoreUnavailableError(f"the store at {redacted(url)} is unavailable: {_reason(exc)}") from None
    con.execute(f"USE {CATALOG}")
    _, views, _ = target_schema()
    for _, sql in views:
        con.execute(sql.replace("CREATE VIEW", "CREATE OR REPLACE TEMP VIEW", 1))


def detach(con: duckdb.DuckDBPyConnection) -> None:
    _ATTACHED.discard(id(con))


def _reason(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return next((line for line in reversed(lines) if "error" in line.lower() or "fatal" in line.lower()),
                lines[0] if lines else type(exc).__name__)[:300]


class Postgres:
    """What PostgreSQL does itself for the store: claims, the schema sync, liveness. One psycopg
    connection (autocommit) per process, used by one thread at a time."""

    def __init__(self, url: str, connect_timeout_s: float) -> None:
        import psycopg

        self.url = url
        self._timeout = connect_timeout_s
        self._lock = threading.Lock()
        try:
            self._pg = psycopg.connect(with_timeout(url, connect_timeout_s), autocommit=True)
        except psycopg.Error as exc:
            raise UnreachableError(f"cannot reach the store at {redacted(url)}: {_reason(exc)}") from None

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        """A cursor on a live connection: one that a PostgreSQL restart broke is replaced, once."""
        import psycopg

        with self._lock:
            if self._pg.closed or self._pg.broken:
                try:
                    self._pg = psycopg.connect(with_timeout(self.url, self._timeout), autocommit=True)
                except psycopg.Error as exc:
                    raise StoreUnavailableError(f"the store at {redacted(self.url)} is unavailable: "
                                                f"{_reason(exc)}") from None
            try:
                with self._pg.cursor() as cur:
                    yield cur
            except psycopg.OperationalError as exc:
                raise StoreUnavailableError(f"the store at {redacted(self.url)} is unavailable: "
                                            f"{_reason(exc)}") from None

    def close(self) -> None:
        with self._lock:
            self._pg.close()

    # ------------------------------------------------------------------ schema
    def sync_schema(self, con: duckdb.DuckDBPyConnection) -> list[str]:
        """Create what the migrations' schema has and this database lacks (tables, columns, indexes),
        record the migrations as applied and define the analyst views in `con`; returns the migrations
        recorded now. Servers starting together take turns."""
        tables, views, names = target_schema()
        with self.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s)", [_SCHEMA_LOCK])
            try:
                con.execute("CALL pg_clear_cache()")
                recorded = self._create_missing(con, cur, tables, names)
            finally:
                cur.execute("SELECT pg_advisory_unlock(%s)", [_SCHEMA_LOCK])
        con.execute("CALL pg_clear_cache()")
        for _, sql in views:  # DuckDB views over the attached tables, for `sql` and analysts
            con.execute(sql.replace("CREATE VIEW", "CREATE OR REPLACE TEMP VIEW", 1))
        return recorded

    def _create_missing(self, con: duckdb.DuckDBPyConnection, cur: Any,
                        tables: dict[str, tuple[str, list[tuple[str, str]]]], names: list[str]) -> list[str]:
        cur.execute("SELECT table_name, column_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema()")
        present: dict[str, set[str]] = {}
        for table, column in cur.fetchall():
            present.setdefault(table, set()).add(column)
        for table, (create_sql, columns) in tables.items():
            if table not in present:
                con.execute(create_sql)
                continue
            for column, type_sql in columns:
                if column not in present[table]:
                    con.execute(f'ALTER TABLE {table} ADD COLUMN "{column}" {type_sql}')
        for name, definition in INDEXES.items():
            cur.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {definition}")
        cur.execute("SELECT name FROM schema_migrations")
        done = {r[0] for r in cur.fetchall()}
        missing = [(version, name) for version, name in enumerate(names, start=1) if name not in done]
        for version, name in missing:
            cur.execute("INSERT INTO schema_migrations VALUES (%s, %s, now() AT TIME ZONE 'UTC') "
                        "ON CONFLICT DO NOTHING", [version, name])
        return [name for _, name in missing]

    def landing_lock(self) -> AbstractContextManager[None]:
        """One dlt load at a time across every process."""
        return self._advisory_lock(_LANDING_LOCK)

    def creation_lock(self) -> AbstractContextManager[None]:
        """One LanceDB table created at a time across every process: two creating one table at once both
        commit, the second as an Overwrite that fails (or, committed after it, wipes) the first's appends."""
        return self._advisory_lock(_CREATION_LOCK)

    @contextmanager
    def _advisory_lock(self, key: int) -> Iterator[None]:
        """A session advisory lock on a connection of its own, so claims and beats go on meanwhile."""
        import psycopg

        with psycopg.connect(with_timeout(self.url, self._timeout), autocommit=True) as pg:
            pg.execute("SELECT pg_advisory_lock(%s)", [key])
            try:
                yield
            finally:
                pg.execute("SELECT pg_advisory_unlock(%s)", [key])

    # ------------------------------------------------------------------ outbox and liveness
    def claim(self, kind: str, limit: int, lease_s: float, now: datetime, worker: str,
              silent_after_s: float, *, one_worker_per_owner: bool = False) -> list[tuple]:
        """Lease up to `limit` claimable jobs of `kind`, oldest first, skipping rows another claim holds:
        pending, past their backoff, and not leased or leased by a process that ran out its lease or fell
        silent. `one_worker_per_owner` (memory generation, which reads an owner's sessions in order):
        no job of an owner another live process holds jobs of; such claims take turns, so two cannot
        both find an owner free. Returns (job_key, kind, payload, attempts, *scope columns) rows."""
        from mnemoflow.storage.scope import SCOPE_COLUMNS

        alive = "SELECT worker_id FROM workers WHERE beat_at >= %(alive)s"
        held_by_another = ""
        if one_worker_per_owner:
            same_owner = " AND ".join(f"h.{c} IS NOT DISTINCT FROM o.{c}" for c in SCOPE_COLUMNS)
            held_by_another = (
                f"AND NOT EXISTS (SELECT 1 FROM outbox h WHERE h.kind = o.kind AND h.status = 'pending' "
                f"AND {same_owner} AND h.leased_by <> %(me)s AND h.lease_until >= %(now)s AND h.leased_by IN ({alive}))")
        with self.cursor() as cur, cur.connection.transaction():
            if one_worker_per_owner:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", [_CLAIM_LOCK])
            cur.execute(
                f"""
                UPDATE outbox SET attempts = attempts + 1, lease_until = %(until)s, leased_by = %(me)s,
                       updated_at = %(now)s
                WHERE job_key IN (
                    SELECT job_key FROM outbox o
                    WHERE status = 'pending' AND kind = %(kind)s
                      AND (next_attempt_at IS NULL OR next_attempt_at <= %(now)s)
                      AND (lease_until IS NULL OR lease_until < %(now)s OR leased_by IS NULL
                           OR leased_by NOT IN ({alive}))
                      {held_by_another}
                    ORDER BY created_at, job_key LIMIT %(limit)s FOR UPDATE SKIP LOCKED)
                RETURNING job_key, kind, payload::text, attempts, {", ".join(SCOPE_COLUMNS)}
                """,
                {"until": now + timedelta(seconds=lease_s), "me": worker, "now": now, "kind": kind,
                 "alive": now - timedelta(seconds=silent_after_s), "limit": limit})
            rows = cur.fetchall()
        rows.sort(key=lambda r: r[0])
        return rows

    def beat(self, worker: str, role: str, host: str, pid: int, now: datetime) -> None:
        """Say this process is alive (it may hold leases)."""
        with self.cursor() as cur:
            cur.execute("INSERT INTO workers (worker_id, role, host, pid, started_at, beat_at) "
                        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (worker_id) DO UPDATE SET beat_at = excluded.beat_at",
                        [worker, role, host, pid, now, now])

    def leave(self, worker: str) -> None:
        """A clean stop: this process's leases are free at once."""
        with self.cursor() as cur:
            cur.execute("UPDATE outbox SET lease_until = NULL, leased_by = NULL, attempts = greatest(attempts - 1, 0) "
                        "WHERE leased_by = %s AND status = 'pending'", [worker])
            cur.execute("DELETE FROM workers WHERE worker_id = %s", [worker])

    def take_token(self, bucket: str, rate: float, burst: int) -> float | None:
        """Spend one token of `bucket` (refilled at `rate` per second up to `burst`): None when there was
        one, else the seconds until there is. One statement, so servers racing on a key cannot both spend
        its last token."""
        with self.cursor() as cur:
            cur.execute(
                """
                INSERT INTO rate_buckets AS b (bucket, tokens, updated_at)
                VALUES (%(b)s, %(burst)s - 1, clock_timestamp() AT TIME ZONE 'UTC')
                ON CONFLICT (bucket) DO UPDATE SET
                    tokens = least(%(burst)s, b.tokens + %(rate)s * extract(epoch FROM
                             (clock_timestamp() AT TIME ZONE 'UTC') - b.updated_at)) - 1,
                    updated_at = clock_timestamp() AT TIME ZONE 'UTC'
                WHERE least(%(burst)s, b.tokens + %(rate)s * extract(epoch FROM
                      (clock_timestamp() AT TIME ZONE 'UTC') - b.updated_at)) >= 1
                RETURNING tokens
                """, {"b": bucket, "burst": float(burst), "rate": rate})
            if cur.fetchone() is not None:
                return None
            cur.execute("SELECT least(%(burst)s, tokens + %(rate)s * extract(epoch FROM (clock_timestamp() "
                        "AT TIME ZONE 'UTC') - updated_at)) FROM rate_buckets WHERE bucket = %(b)s",
                        {"b": bucket, "burst": float(burst), "rate": rate})
            row = cur.fetchone()
        tokens = float(row[0]) if row else 0.0
        return max(0.001, (1.0 - tokens) / rate)

    def text_search(self, table: str, id_column: str, text_column: str, query: str, where: str,
                    params: list[Any], k: int) -> list[tuple[str, float]]:
        """PostgreSQL's own full-text ranking (ts_rank_cd over an english tsvector, GIN-indexed) inside the
        caller's scope: the keyword search recall falls back to when the vectors cannot be reached."""
        from psycopg import sql

        statement = sql.SQL(
            "SELECT {id}, ts_rank_cd(to_tsvector('english', {text}), q) AS score "
            "FROM {table}, websearch_to_tsquery('english', %s) q "
            "WHERE to_tsvector('english', {text}) @@ q AND {where} ORDER BY score DESC, {id} LIMIT %s"
        ).format(id=sql.Identifier(id_column), text=sql.Identifier(text_column), table=sql.Identifier(table),
                 where=sql.SQL(where.replace("?", "%s")))
        with self.cursor() as cur:
            cur.execute(statement, [query, *params, k])
            return [(r[0], float(r[1])) for r in cur.fetchall()]


def payload_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else json.loads(value)


@functools.cache
def target_schema() -> tuple[dict[str, tuple[str, list[tuple[str, str]]]], list[tuple[str, str]], list[str]]:
    """What the migrations build, read off a scratch in-memory DuckDB: {table: (CREATE sql, [(column,
    type)])}, the views' (name, CREATE sql) and the migrations' names in order."""
    from mnemoflow.storage.migrations import MIGRATIONS, apply_migrations

    scratch = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        apply_migrations(scratch)
        tables: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        for name, sql in scratch.execute("SELECT table_name, sql FROM duckdb_tables() WHERE schema_name = 'main' "
                                         "ORDER BY table_name").fetchall():
            columns = scratch.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' "
                                      "AND table_name = ? ORDER BY column_index", [name]).fetchall()
            tables[name] = (sql, [(c, t) for c, t in columns])
        views = scratch.execute("SELECT view_name, sql FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal "
                                "ORDER BY view_name").fetchall()
    finally:
        scratch.close()
    return tables, [(n, s) for n, s in views], [name for name, _ in MIGRATIONS]


def wait_until_up(url: str, timeout_s: float) -> None:
    """Block until the database accepts connections (a cluster just started it)."""
    import psycopg

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            psycopg.connect(with_timeout(url, 2), autocommit=True).close()
            return
        except psycopg.Error as exc:
            if time.monotonic() > deadline:
                raise UnreachableError(f"cannot reach the store at {redacted(url)}: {_reason(exc)}") from None
            time.sleep(0.2)
