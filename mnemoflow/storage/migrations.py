"""Ordered, recorded schema migrations for the DuckDB system of record.

Each migration is a function applied once, inside a transaction, and recorded in
`schema_migrations`. Append new ones; never edit an applied one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import duckdb

from mnemoflow.storage.analyst_views import ANALYST_VIEWS_0008
from mnemoflow.storage.data_model import DATA_MODEL_0001
from mnemoflow.storage.link_types import MEMORY_LINKS_0015
from mnemoflow.storage.rekey_entities import REKEYED, rekey_entity_ids
from mnemoflow.storage.rule_schema import RULES_0010

Migration = Callable[[duckdb.DuckDBPyConnection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(name: str) -> Callable[[Migration], Migration]:
    def register(fn: Migration) -> Migration:
        if any(existing == name for existing, _ in MIGRATIONS):
            raise ValueError(f"duplicate migration {name!r}")
        MIGRATIONS.append((name, fn))
        return fn

    return register


@migration("0001_data_model")
def _data_model(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(DATA_MODEL_0001)


@migration("0002_memory_link_ids")
def _memory_link_ids(con: duckdb.DuckDBPyConnection) -> None:
    """Link rows get an id of their own so commits can name and digest them."""
    con.execute("ALTER TABLE memory_links ADD COLUMN link_id VARCHAR")
    con.execute("UPDATE memory_links SET link_id = 'lnk_' || "
                "substr(sha256(concat_ws(chr(31), tenant_id, src, dst, type)), 1, 24)")


@migration("0003_api_keys")
def _api_keys(con: duckdb.DuckDBPyConnection) -> None:
    """Per-tenant API keys for the HTTP API; only a hash of each secret is kept."""
    con.execute("""
        CREATE TABLE api_keys (
            key_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            name VARCHAR,
            secret_sha256 VARCHAR NOT NULL UNIQUE,
            created_at TIMESTAMP NOT NULL,
            revoked_at TIMESTAMP
        )
    """)


@migration("0004_memory_reinforcement")
def _memory_reinforcement(con: duckdb.DuckDBPyConnection) -> None:
    """How often a memory was said again (a duplicate reinforces rather than repeats); a counter like
    access_count, so not part of the row digest."""
    con.execute("ALTER TABLE memories ADD COLUMN reinforcement INTEGER DEFAULT 0")


@migration("0005_memory_tree")
def _memory_tree(con: duckdb.DuckDBPyConnection) -> None:
    """The memory tree: sealed summaries (what each cites, down to its memories, and whether it was
    retired because one of them is no longer current), per-user profiles line by line with the
    memories each line cites, topics with their memories, and `topic_memories` for analysts."""
    con.execute("""
        ALTER TABLE summaries ADD COLUMN shared BOOLEAN DEFAULT false;
        ALTER TABLE summaries ADD COLUMN title VARCHAR;
        ALTER TABLE summaries ADD COLUMN memory_ids VARCHAR[];
        ALTER TABLE summaries ADD COLUMN cited_ids VARCHAR[];
        ALTER TABLE summaries ADD COLUMN method VARCHAR;
        ALTER TABLE summaries ADD COLUMN period_start TIMESTAMP;
        ALTER TABLE summaries ADD COLUMN period_end TIMESTAMP;
        ALTER TABLE summaries ADD COLUMN content_hash VARCHAR;
        ALTER TABLE summaries ADD COLUMN token_count INTEGER;
        ALTER TABLE summaries ADD COLUMN retired_at TIMESTAMP;
        ALTER TABLE summaries ADD COLUMN retired_reason VARCHAR;
        ALTER TABLE summaries ADD COLUMN embedding_status VARCHAR DEFAULT 'pending';
        ALTER TABLE summaries ADD COLUMN embedding_model VARCHAR;
        CREATE TABLE profile_lines (
            line_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            version INTEGER NOT NULL,
            section VARCHAR NOT NULL CHECK (section IN ('static', 'dynamic')),
            ordinal INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            memory_ids VARCHAR[] NOT NULL,
            commit_id VARCHAR NOT NULL
        );
        CREATE TABLE topics (
            topic_id VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            label VARCHAR NOT NULL,
            terms VARCHAR[] NOT NULL,
            size INTEGER NOT NULL,
            created_at TIMESTAMP NOT NULL,
            updated_at TIMESTAMP NOT NULL,
            retired_at TIMESTAMP,
            commit_id VARCHAR NOT NULL
        );
        CREATE TABLE memory_topics (
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            memory_id VARCHAR NOT NULL,
            topic_id VARCHAR NOT NULL,
            weight DOUBLE NOT NULL,
            commit_id VARCHAR NOT NULL,
            PRIMARY KEY (tenant_id, memory_id, topic_id)
        );
        CREATE VIEW topic_memories AS
            SELECT t.tenant_id, t.user_id, t.topic_id, t.label, t.terms, t.size, mt.weight, m.memory_id, m.content,
                   m.kind, m.salience, m.observed_at, m.event_start_at
            FROM topics t
            JOIN memory_topics mt ON mt.topic_id = t.topic_id AND mt.tenant_id = t.tenant_id
            JOIN memories m ON m.memory_id = mt.memory_id AND m.tenant_id = mt.tenant_id
            WHERE t.retired_at IS NULL AND m.deleted_at IS NULL AND m.is_latest
              AND (m.valid_to IS NULL OR m.valid_to > (now() AT TIME ZONE 'UTC'))
              AND (m.expires_at IS NULL OR m.expires_at > (now() AT TIME ZONE 'UTC'));
        INSERT INTO store_state VALUES ('fts:summaries', 'dirty');
    """)


@migration("0006_lifecycle_quality")
def _lifecycle_quality(con: duckdb.DuckDBPyConnection) -> None:
    """Decay, deletion and quality: memories can be pinned and archived and carry their last retention
    score (lifecycle state, like access_count, so not part of the row digest: adding them leaves
    every recorded digest valid); outbox jobs back off between attempts and end as dead letters;
    deleted tenants, quality results and generic evaluation results get tables of their own."""
    con.execute("""
        ALTER TABLE memories ADD COLUMN pinned BOOLEAN DEFAULT false;
        ALTER TABLE memories ADD COLUMN archived_at TIMESTAMP;
        ALTER TABLE memories ADD COLUMN retention DOUBLE;
        CREATE TABLE outbox_v6 (
            job_key VARCHAR PRIMARY KEY,
            tenant_id VARCHAR NOT NULL,
            user_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            payload JSON NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            lease_until TIMESTAMP,
            next_attempt_at TIMESTAMP,
            status VARCHAR NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'dead')),
            last_error VARCHAR,
            created_at TIMESTAMP NOT NULL,
            updated_at TIMESTAMP NOT NULL
        );
        INSERT INTO outbox_v6 SELECT job_key, tenant_id, user_id, kind, payload, attempts, lease_until, NULL,
            CASE status WHEN 'failed' THEN 'dead' ELSE status END, last_error, created_at, updated_at FROM outbox;
        DROP TABLE outbox;
        ALTER TABLE outbox_v6 RENAME TO outbox;
        CREATE TABLE tenant_deletions (
            tenant_id VARCHAR PRIMARY KEY,
            requested_at TIMESTAMP NOT NULL,
            actor VARCHAR NOT NULL,
            purged_at TIMESTAMP
        );
        CREATE TABLE quality_runs (
            run_id VARCHAR NOT NULL,
            run_at TIMESTAMP NOT NULL,
            tenant_id VARCHAR,
            suite VARCHAR NOT NULL,
            expectation VARCHAR NOT NULL,
            success BOOLEAN NOT NULL,
            observed_value JSON,
            unexpected_count BIGINT,
            failing_ids VARCHAR[]
        );
        CREATE TABLE eval_results_v6 (
            run_id VARCHAR NOT NULL,
            item_id VARCHAR NOT NULL,
            budget INTEGER NOT NULL DEFAULT 0,
            metric VARCHAR NOT NULL,
            value DOUBLE,
            category VARCHAR,
            PRIMARY KEY (run_id, item_id, budget, metric)
        );
        INSERT INTO eval_results_v6
            SELECT run_id, question_id, budget, 'evidence_recall', evidence_recall, category FROM eval_results
            UNION ALL SELECT run_id, question_id, budget, 'latency_ms', latency_ms, category FROM eval_results;
        DROP TABLE eval_results;
        ALTER TABLE eval_results_v6 RENAME TO eval_results;
        CREATE VIEW eval_trends AS
            SELECT r.suite, r.created_at, r.run_id, e.metric, e.budget, e.value,
                   e.value - lag(e.value) OVER (PARTITION BY r.suite, e.metric, e.budget ORDER BY r.created_at)
                       AS change
            FROM eval_runs r JOIN eval_results e ON e.run_id = r.run_id
            WHERE e.item_id = '';
    """)


SCOPED_TABLES = ("source_documents", "chunks", "turns", "memories", "summaries", "review_queue", "outbox", "ingest_errors")
USERLESS_TABLES = ("source_documents", "chunks", "memories", "review_queue", "outbox", "ingest_errors")


@migration("0007_scopes")
def _scopes(con: duckdb.DuckDBPyConnection) -> None:
    """The owner's second-level boundaries (storage/scope.py): agent_id, run_id and container on every
    row a scope writes, and rows without a user (an agent's own) where a scope may leave it out.
    Existing rows were written by user scopes: NULL in the new columns is exactly their stamp.
    Conversations keep a user (their dlt landing table is keyed by it)."""
    for table in SCOPED_TABLES:
        for column in ("agent_id", "run_id", "container"):
            con.execute(f"ALTER TABLE {table} ADD COLUMN {column} VARCHAR")
    for table in USERLESS_TABLES:
        con.execute(f"ALTER TABLE {table} ALTER COLUMN user_id DROP NOT NULL")


@migration("0008_analyst_views")
def _analyst_views(con: duckdb.DuckDBPyConnection) -> None:
    """Stable views for analysts (`analyst_views`, docs/tables.md)."""
    con.execute(ANALYST_VIEWS_0008)


@migration("0009_outbox_lease_owner")
def _outbox_lease_owner(con: duckdb.DuckDBPyConnection) -> None:
    """Which process holds a job's lease (`outbox.worker_id`), so that a lease left by a process that
    died is claimable at once instead of when it runs out."""
    con.execute("ALTER TABLE outbox ADD COLUMN leased_by VARCHAR")


@migration("0010_eval_run_reports")
def _eval_run_reports(con: duckdb.DuckDBPyConnection) -> None:
    """An evaluation run keeps its HTML report page (the dashboard serves it)."""
    con.execute("ALTER TABLE eval_runs ADD COLUMN report_html VARCHAR")


@migration("0011_rules")
def _rules(con: duckdb.DuckDBPyConnection) -> None:
    """Procedural rules, their moves and counters, tool selections, and admin keys (`rule_schema`)."""
    con.execute(RULES_0010)


@migration("0012_workers")
def _workers(con: duckdb.DuckDBPyConnection) -> None:
    """The processes that lease outbox jobs on a shared store, with when each last said it was alive
    (storage/heartbeat.py): a lease whose holder fell silent is taken over at once."""
    con.execute("""
        CREATE TABLE workers (
            worker_id VARCHAR PRIMARY KEY,
            role VARCHAR NOT NULL,
            host VARCHAR,
            pid INTEGER,
            started_at TIMESTAMP NOT NULL,
            beat_at TIMESTAMP NOT NULL
        )
    """)


@migration("0013_rate_buckets")
def _rate_buckets(con: duckdb.DuckDBPyConnection) -> None:
    """The API keys' rate budgets when several servers share a store (`protect.ratelimit.SharedLimiter`)."""
    con.execute("CREATE TABLE rate_buckets (bucket VARCHAR PRIMARY KEY, tokens DOUBLE NOT NULL, "
                "updated_at TIMESTAMP NOT NULL)")


@migration(REKEYED)
def _entity_id_digests(con: duckdb.DuckDBPyConnection) -> None:
    """Entity ids that spelled names become digests, in rows and in the commit chain (`rekey_entities`)."""
    rekey_entity_ids(con)


@migration("0015_may_update_links")
def _may_update_links(con: duckdb.DuckDBPyConnection) -> None:
    """`MAY_UPDATE` links (`link_types`): the type's CHECK lists the types, so the table is rebuilt."""
    con.execute(f"{MEMORY_LINKS_0015}; INSERT INTO memory_links_0015 SELECT tenant_id, src, dst, type, confidence, "
                "decided_by, reason, created_at, commit_id, link_id FROM memory_links; DROP TABLE memory_links; "
                "ALTER TABLE memory_links_0015 RENAME TO memory_links")


def apply_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations in order; returns the names applied now. A store that is up to date
    costs one read (no DDL, no write)."""
    try:
        done = {row[0] for row in con.execute("SELECT name FROM schema_migrations").fetchall()}
    except duckdb.CatalogException:  # a new store
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
        )
        done = set()
    applied: list[str] = []
    for version, (name, fn) in enumerate(MIGRATIONS, start=1):
        if name in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            fn(con)
            con.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                [version, name, datetime.now(UTC).replace(tzinfo=None)],
            )
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
