"""What links do to memories, inside a caller's transaction: link rows, UPDATES making past
versions, retiring what a gone memory stated, and memories orphaned when their sources go.

Plain functions over a connection: memory writes, review decisions, deletions and document
writes all change memories this way, each in its own commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from mnemoflow.models import LinkDraft
from mnemoflow.storage import batch, fts
from mnemoflow.storage.commits import PendingCommit
from mnemoflow.storage.rows import link_id
from mnemoflow.storage.scope import Scope, owned, tenant

VERSION_PREDICATES = ("supersedes", "superseded_by")  # the version chain: a retired memory keeps these current


def newer_versions_cte(ids: str, links: str) -> str:
    """`chain(origin, memory_id, hops)`: from each id of the table `ids`, the versions that replaced it,
    following UPDATES links forward (`links`: the tenant predicate on `l`), at most 16 hops."""
    return f"""
        chain(origin, memory_id, hops) AS (
            SELECT id, id, 0 FROM {ids}
            UNION ALL
            SELECT c.origin, l.src, c.hops + 1 FROM chain c
            JOIN memory_links l ON l.dst = c.memory_id AND l.type = 'UPDATES' AND {links}
            WHERE c.hops < 16
        )"""


def insert_links(con: duckdb.DuckDBPyConnection, scope: Scope, rows: list[list[Any]], pending: PendingCommit) -> None:
    """memory_links rows from (src, dst, type, confidence, decided_by, reason, created_at); a link
    already held stays as the commit that wrote it did (the commit lists only the new ones)."""
    tenant_id, commit = scope.tenant_id, pending.commit_id
    unique: dict[str, list[Any]] = {}
    for src, dst, kind, *rest in rows:
        unique.setdefault(link_id(tenant_id, src, dst, kind), [tenant_id, src, dst, kind, *rest, commit])
    if not unique:
        return
    pending.record("memory_links", "insert", batch.insert(
        con, "memory_links", ["link_id", "tenant_id", "src", "dst", "type", "confidence", "decided_by", "reason",
                              "created_at", "commit_id"],
        [[lid, *row] for lid, row in unique.items()], on_conflict_ignore=True, returning="link_id"))


def live_sources(con: duckdb.DuckDBPyConnection, scope: Scope, ids: set[str]) -> set[str]:
    """Which of `ids` are live chunks or documents of the user (what a memory may be EXTRACTED_FROM)."""
    if not ids:
        return set()
    mine, params = owned(scope)
    with batch.id_set(con, list(ids)) as wanted:
        return {r[0] for r in con.execute(
            f"SELECT chunk_id FROM chunks WHERE {mine} AND deleted_at IS NULL AND chunk_id IN {wanted} UNION "
            f"SELECT document_id FROM source_documents WHERE {mine} AND deleted_at IS NULL "
            f"AND document_id IN {wanted}", [*params, *params]).fetchall()}


def retire_relations(
    con: duckdb.DuckDBPyConnection, scope: Scope, retired: dict[str, datetime], pending: PendingCommit,
) -> None:
    """What deleted or superseded memories (id -> since when) stated stops being current: their
    relation rows get `superseded_at` (the version chain itself, `supersedes`, stays as it is)."""
    if not retired:
        return
    where, params = tenant(scope.tenant_id, "relations")
    with batch.registered(con, ["memory_id", "since"], [[m, at] for m, at in retired.items()]) as b:
        pending.record("relations", "update", batch.update_returning(
            con, "relations", "relation_id", "superseded_at = b.since, commit_id = ?",
            f"{where} AND relations.memory_id = b.memory_id AND relations.superseded_at IS NULL "
            "AND relations.predicate NOT IN ('supersedes', 'superseded_by')",
            [pending.commit_id], params, source=f"{b} b"))


def supersede(
    con: duckdb.DuckDBPyConnection, scope: Scope, updates: list[tuple[str, LinkDraft, datetime]],
    superseded: dict[str, datetime], pending: PendingCommit,
) -> None:
    """What UPDATES links (from, link, when) do besides their link rows: a `supersedes` relation row
    each; the stored memories in `superseded` (id -> since when) become past versions (is_latest
    false, valid_to then) and what they stated retires. A target written in the same unit of
    writes is inserted that way already."""
    tenant_id, commit = scope.tenant_id, pending.commit_id
    batch.update(con, "memories", "memory_id", ["is_latest", "valid_to", "updated_at", "commit_id"],
                 [[mid, False, at, at, commit] for mid, at in superseded.items()])
    pending.record("memories", "update", list(superseded))
    versions = [[tenant_id, link_id(tenant_id, src, link.target_id, "supersedes"), src, "supersedes", link.target_id,
                 src, link.confidence, at, commit] for src, link, at in updates]
    if versions:  # the commit lists the rows it wrote, not those already held
        pending.record("relations", "insert", batch.insert(
            con, "relations", ["tenant_id", "relation_id", "subject", "predicate", "object", "memory_id",
                               "confidence", "created_at", "commit_id"], versions, on_conflict_ignore=True,
            returning="relation_id"))
    retire_relations(con, scope, superseded, pending)


def orphaned_memories(
    con: duckdb.DuckDBPyConnection, scope: Scope, gone: list[str], pending: PendingCommit, now: datetime,
) -> list[str]:
    """Soft-delete memories extracted only from what just went (`gone` chunk or document ids)."""
    if not gone:
        return []
    links, link_params = tenant(scope.tenant_id, "l")
    memories, memory_params = tenant(scope.tenant_id, "m")
    with batch.id_set(con, gone) as ids:
        orphans = [r[0] for r in con.execute(
            f"""
            WITH hit AS (SELECT DISTINCT src FROM memory_links l
                         WHERE {links} AND l.type = 'EXTRACTED_FROM' AND l.dst IN {ids})
            SELECT m.memory_id FROM memories m JOIN hit ON hit.src = m.memory_id
            WHERE {memories} AND m.deleted_at IS NULL AND NOT EXISTS (
                SELECT 1 FROM memory_links l WHERE l.tenant_id = m.tenant_id AND l.src = m.memory_id
                  AND l.type = 'EXTRACTED_FROM' AND (
                    EXISTS (SELECT 1 FROM chunks c WHERE c.chunk_id = l.dst AND c.deleted_at IS NULL)
                    OR EXISTS (SELECT 1 FROM source_documents d WHERE d.document_id = l.dst
                               AND d.deleted_at IS NULL)))
            """, [*link_params, *memory_params]).fetchall()]
    batch.update(con, "memories", "memory_id", ["deleted_at", "updated_at", "commit_id"],
                 [[m, now, now, pending.commit_id] for m in orphans])
    pending.record("memories", "delete", orphans)
    retire_relations(con, scope, {m: now for m in orphans}, pending)
    if orphans:
        fts.mark_dirty(con, fts.MEMORIES_FTS)
    return orphans
