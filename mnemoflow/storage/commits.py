"""Commits: every write is one, chained per tenant by hash, naming a digest of each row it wrote.

A row's digest is computed by DuckDB from its content columns (`ROW_DIGEST_SQL`), both
when the commit is written and when it is verified, so an edit made behind the
store's back (an UPDATE in a SQL shell) no longer matches the commit that row names.
Derived columns (embedding status, access counters) are left out on purpose: they
change without a commit.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from mnemoflow.storage import batch, postgres
from mnemoflow.storage.scope import tenant

# table -> (id column, content columns covered by the digest)
TRACKED_TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "source_documents": (
        "document_id",
        ("document_id", "tenant_id", "user_id", "shared", "connector", "uri", "mime", "title",
         "content_hash", "metadata", "deleted_at"),
    ),
    "chunks": (
        "chunk_id",
        ("chunk_id", "tenant_id", "user_id", "shared", "document_id", "ordinal", "text", "context",
         "content_hash", "locator", "deleted_at"),
    ),
    "turns": (
        "turn_key",
        ("turn_key", "tenant_id", "user_id", "document_id", "session_id", "turn_id", "ordinal", "role",
         "speaker", "ts", "text", "metadata"),
    ),
    "memory_links": (
        "link_id",
        ("link_id", "tenant_id", "src", "dst", "type", "confidence", "decided_by", "reason"),
    ),
    "memories": (
        "memory_id",
        ("memory_id", "tenant_id", "user_id", "shared", "content", "content_hash", "kind", "salience",
         "confidence", "is_latest", "valid_from", "valid_to", "expires_at", "deleted_at", "observed_at",
         "event_start_at", "event_end_at", "temporal_text", "tier", "metadata"),
    ),
    # the graph: tenant-wide entities and categories, and what each memory names, states and is filed under.
    # An id "column" may be an expression: tables keyed by a pair name their rows "<memory_id>|<other>".
    "entities": (
        "entity_id",
        ("entity_id", "tenant_id", "name", "type", "aliases", "mention_count", "first_seen", "last_seen",
         "hotness"),
    ),
    "memory_entities": (
        "memory_id || '|' || entity_id",
        ("tenant_id", "memory_id", "entity_id"),
    ),
    "relations": (
        "relation_id",
        ("relation_id", "tenant_id", "subject", "predicate", "object", "memory_id", "confidence",
         "superseded_at"),
    ),
    "categories": (
        "category_key",
        ("category_key", "tenant_id", "name", "parent_key"),
    ),
    "memory_categories": (
        "memory_id || '|' || category_key",
        ("tenant_id", "memory_id", "category_key"),
    ),
    # the memory tree: sealed summaries (retiring one is a commit too), profiles and their lines, topics
    "summaries": (
        "summary_id",
        ("summary_id", "tenant_id", "user_id", "shared", "level", "subject_kind", "subject_key", "day", "title",
         "content", "content_hash", "child_ids", "memory_ids", "cited_ids", "method", "period_start", "period_end",
         "created_at", "retired_at", "retired_reason"),
    ),
    "profiles": (
        "user_id",
        ("tenant_id", "user_id", "static_summary", "dynamic_summary", "updated_at", "version"),
    ),
    "profile_lines": (
        "line_id",
        ("line_id", "tenant_id", "user_id", "version", "section", "ordinal", "text", "memory_ids"),
    ),
    "topics": (
        "topic_id",
        ("topic_id", "tenant_id", "user_id", "label", "terms", "size", "created_at", "updated_at", "retired_at"),
    ),
    "memory_topics": (
        "memory_id || '|' || topic_id",
        ("tenant_id", "user_id", "memory_id", "topic_id", "weight"),
    ),
    # procedural rules: each rule's slots and state, and every move of that state with who made it
    "rules": (
        "rule_id",
        ("rule_id", "tenant_id", "user_id", "agent_id", "run_id", "container", "shared", "state", "conditions",
         "patch", "exceptions", "origin", "memory_id", "created_at", "updated_at"),
    ),
    "rule_transitions": (
        "transition_id",
        ("transition_id", "tenant_id", "rule_id", "from_state", "to_state", "actor", "moved_at"),
    ),
}


PURGED = "purge"  # the op of a row a hard deletion removed: recorded with no digest

# A scope's second-level boundaries (migration 0007) join a row's digest only when it carries one, so
# the digests of rows written before them still verify.
STAMPED_TABLES = ("source_documents", "chunks", "turns", "memories")
BOUNDARY_COLUMNS = ("agent_id", "run_id", "container")


def _digest(columns: tuple[str, ...]) -> str:
    packed = ", ".join(f"{c} := {c}" for c in columns)
    return f"substr(sha256(CAST(to_json(struct_pack({packed})) AS VARCHAR)), 1, 32)"


def row_digest_sql(table: str) -> str:
    _, columns = TRACKED_TABLES[table]
    if table not in STAMPED_TABLES:
        return _digest(columns)
    unstamped = " AND ".join(f"{c} IS NULL" for c in BOUNDARY_COLUMNS)
    return f"CASE WHEN {unstamped} THEN {_digest(columns)} ELSE {_digest((*columns, *BOUNDARY_COLUMNS))} END"


def sha256_json(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


@dataclass
class PendingCommit:
    """What one unit of work wrote; rows carry `commit_id` before the commit row exists."""

    tenant_id: str
    actor: str
    input_sha256: str
    message: str
    commit_id: str = field(default_factory=lambda: f"c_{uuid.uuid4().hex}")
    ops: dict[str, dict[str, str]] = field(default_factory=dict)

    def record(self, table: str, op: str, ids: list[str]) -> None:
        if table not in TRACKED_TABLES:
            raise ValueError(f"{table} is not tracked by commits")
        if ids:
            self.ops.setdefault(table, {}).update({row_id: op for row_id in ids})

    def record_purged(self, table: str, ids: list[str]) -> None:
        """Rows this unit of work removed for good: the commit names them without a digest (nothing is
        left to digest), so the chain says when each went and by whose hand."""
        self.record(table, PURGED, ids)

    @property
    def empty(self) -> bool:
        return not any(self.ops.values())


@dataclass(frozen=True)
class CommitInfo:
    commit_id: str
    commit_hash: str
    seq: int
    rows: int


def _commit_hash(
    *, tenant_id: str, seq: int, parent_hash: str | None, input_sha256: str, diff: dict,
    created_at: datetime, actor: str, message: str,
) -> str:
    return sha256_json({
        "tenant_id": tenant_id, "seq": seq, "parent_hash": parent_hash, "input_sha256": input_sha256,
        "diff": diff, "created_at": created_at.isoformat(), "actor": actor, "message": message,
    })


def write_commit(con: duckdb.DuckDBPyConnection, pending: PendingCommit, now: datetime) -> CommitInfo:
    """Digest the rows the unit of work wrote and append the commit to its tenant's chain (a purged
    row is named with no digest). Runs inside the caller's transaction, after the row writes.
    """
    if postgres.attached(con):  # the chain is one line: this tenant's other writers wait (no-op when held)
        postgres.lock_tenant(con, pending.tenant_id)
    rows: list[list[str]] = []
    within, params = tenant(pending.tenant_id)
    digested = [table for table, ops in sorted(pending.ops.items()) if any(op != PURGED for op in ops.values())]
    digests: dict[tuple[str, str], str] = {}
    if digested:  # one statement for every table the unit wrote (a direct add writes some seven)
        found = con.execute(" UNION ALL ".join(
            f"SELECT '{table}', CAST({TRACKED_TABLES[table][0]} AS VARCHAR), {row_digest_sql(table)} FROM {table} "
            f"WHERE {within} AND commit_id = ?" for table in digested),
            [*params, pending.commit_id] * len(digested)).fetchall()
        digests = {(table, row_id): digest for table, row_id, digest in found}
    for table, ops in sorted(pending.ops.items()):
        for row_id, op in sorted(ops.items()):
            if op == PURGED:
                rows.append([table, op, row_id, None])
                continue
            if (table, row_id) not in digests:
                raise RuntimeError(f"{table} row {row_id} was recorded but does not name commit {pending.commit_id}")
            rows.append([table, op, row_id, digests[(table, row_id)]])
    diff = {"rows": rows}
    parent = con.execute(
        f"SELECT commit_id, commit_hash, seq FROM commits WHERE {within} ORDER BY seq DESC LIMIT 1", params).fetchone()
    parent_id, parent_hash, seq = (parent[0], parent[1], parent[2] + 1) if parent else (None, None, 1)
    commit_hash = _commit_hash(
        tenant_id=pending.tenant_id, seq=seq, parent_hash=parent_hash, input_sha256=pending.input_sha256,
        diff=diff, created_at=now, actor=pending.actor, message=pending.message,
    )
    con.execute(
        "INSERT INTO commits VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [pending.commit_id, pending.tenant_id, seq, parent_id, pending.input_sha256, json.dumps(diff),
         commit_hash, now, pending.actor, pending.message],
    )
    return CommitInfo(pending.commit_id, commit_hash, seq, len(rows))


def rewrite_row_ids(con: duckdb.DuckDBPyConnection, tenant_id: str, renamed: Callable[[str, str], str]) -> str | None:
    """Rename row ids inside the tenant's commits (`renamed(table, row_id)` gives each id's new name) and
    re-derive the chain from the first commit that changed, so that `verify` holds. For a migration that
    must take text out of ids the chain has recorded (entity ids that spelled names): the commits keep
    their order, times, actors, inputs and digests. Returns the chain's head hash before the rewrite, for
    the commit that records it; None when no id changed."""
    within, params = tenant(tenant_id)
    commits = con.execute(
        "SELECT commit_id, seq, input_sha256, diff_json, commit_hash, created_at, actor, message "
        f"FROM commits WHERE {within} ORDER BY seq", params).fetchall()
    previous_hash: str | None = None
    changed_from: int | None = None
    updates: list[list[str]] = []
    for commit_id, seq, input_sha256, diff_json, commit_hash, created_at, actor, message in commits:
        diff = json.loads(diff_json)
        rows = [[table, op, renamed(table, row_id), digest] for table, op, row_id, digest in diff["rows"]]
        if changed_from is None and rows != diff["rows"]:
            changed_from = seq
        if changed_from is not None:
            diff = {**diff, "rows": rows}
            rehashed = _commit_hash(tenant_id=tenant_id, seq=seq, parent_hash=previous_hash, input_sha256=input_sha256,
                                    diff=diff, created_at=created_at, actor=actor, message=message)
            updates.append([commit_id, json.dumps(diff), rehashed])
            commit_hash = rehashed
        previous_hash = commit_hash
    if not updates:
        return None
    batch.update(con, "commits", "commit_id", ["diff_json", "commit_hash"], updates)
    return commits[-1][4]


@dataclass
class VerifyReport:
    tenant_id: str
    commits_checked: int = 0
    rows_checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_tenant(con: duckdb.DuckDBPyConnection, tenant_id: str) -> VerifyReport:
    """Re-derive every commit hash of the tenant's chain and every tracked row's digest."""
    report = VerifyReport(tenant_id)
    recorded: dict[tuple[str, str, str], str] = {}
    previous_id: str | None = None
    previous_hash: str | None = None
    within, params = tenant(tenant_id)
    commits = con.execute(
        "SELECT commit_id, seq, parent_id, input_sha256, diff_json, commit_hash, created_at, actor, message "
        f"FROM commits WHERE {within} ORDER BY seq", params).fetchall()
    for commit_id, seq, parent_id, input_sha256, diff_json, commit_hash, created_at, actor, message in commits:
        report.commits_checked += 1
        diff = json.loads(diff_json)
        if parent_id != previous_id:
            report.problems.append(f"commit {commit_id} (seq {seq}) names parent {parent_id}, expected {previous_id}")
        expected = _commit_hash(
            tenant_id=tenant_id, seq=seq, parent_hash=previous_hash, input_sha256=input_sha256, diff=diff,
            created_at=created_at, actor=actor, message=message,
        )
        if expected != commit_hash:
            report.problems.append(f"commit {commit_id} (seq {seq}) does not hash to its recorded commit_hash")
        for table, _op, row_id, digest in diff["rows"]:
            recorded[(commit_id, table, row_id)] = digest
        previous_id, previous_hash = commit_id, commit_hash
    for table, (id_col, _) in TRACKED_TABLES.items():
        for row_id, commit_id, digest in con.execute(
            f"SELECT {id_col}, commit_id, {row_digest_sql(table)} FROM {table} WHERE {within}", params).fetchall():
            report.rows_checked += 1
            expected_digest = recorded.get((commit_id, table, row_id))
            if expected_digest is None:
                report.problems.append(f"{table} row {row_id} names commit {commit_id}, which does not record it")
            elif expected_digest != digest:
                report.problems.append(f"{table} row {row_id} changed since commit {commit_id} wrote it")
    return report
