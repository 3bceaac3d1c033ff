"""The tenant-scoped store: the only door to DuckDB and LanceDB.

Every method that reads or writes tenant data takes a `Scope`; the predicates
are built here, in `_scope_sql` and `_scope_lance`, and nowhere else. Reads see
the user's rows and the tenant's shared rows; writes touch only the user's rows.
Each write is one DuckDB transaction that also appends a commit and enqueues its
derived work in the outbox; LanceDB follows after the transaction.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import duckdb
import numpy as np

from mnemoflow.errors import BadInputError
from mnemoflow.models import (
    ChunkRecord,
    DeletionResult,
    DocumentRecord,
    DocumentWrite,
    DocumentWriteResult,
    HistoryEntry,
    IngestErrorRecord,
    LinkDraft,
    MemoryDraft,
    MemoryItem,
    TurnRecord,
)
from mnemoflow.storage import batch, fts, outbox
from mnemoflow.storage.commits import PendingCommit, VerifyReport, sha256_json, verify_tenant, write_commit
from mnemoflow.storage.outbox import Job
from mnemoflow.storage.scope import Scope
from mnemoflow.storage.lance_index import (
    CHUNK_INDEX,
    EMBEDDING_CACHE,
    MEMORY_INDEX,
    LanceIndex,
    sql_in,
    sql_string,
)
from mnemoflow.timeutil import utcnow

Target = Literal["chunks", "memories"]
Bm25Engine = Literal["lancedb", "duckdb"]
EMBED_JOB = "embed"

_MEMORY_COLUMNS = (
    "memory_id, tenant_id, user_id, content, kind, salience, confidence, is_latest, created_at, updated_at, "
    "valid_from, valid_to, expires_at, deleted_at, observed_at, event_start_at, event_end_at, temporal_text, "
    "embedding_status, metadata"
)


def _memory_item(row: tuple) -> MemoryItem:
    names = [c.strip() for c in _MEMORY_COLUMNS.split(",")]
    data = dict(zip(names, row))
    data["id"] = data.pop("memory_id")
    data["metadata"] = json.loads(data["metadata"]) if data["metadata"] else {}
    return MemoryItem(**data)


def _epoch(value: datetime | None) -> int | None:
    return None if value is None else int((value - datetime(1970, 1, 1)).total_seconds())


def _active_until(valid_to: datetime | None, expires_at: datetime | None) -> int | None:
    ends = [t for t in (valid_to, expires_at) if t is not None]
    return _epoch(min(ends)) if ends else None


@dataclass(frozen=True)
class EmbeddingInput:
    """A row waiting for its vector: what to embed and what LanceDB must carry beside it."""

    job_key: str
    row_id: str
    text: str
    content_hash: str
    columns: dict[str, Any]


@dataclass(frozen=True)
class SearchHit:
    target: Target
    id: str
    score: float
    chunk: ChunkHit | None  # a chunk's display data when the index returned it with the hit


@dataclass(frozen=True)
class ChunkHit:
    """What recall shows and cites of a chunk."""

    chunk_id: str
    text: str
    locator: dict[str, Any]
    document_id: str
    uri: str
    title: str
    connector: str


class Store:
    """One DuckDB connection (one unit of work or one long-lived server) plus the LanceDB tables."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, index: LanceIndex, *, max_attempts: int, lease_s: float,
        bm25_engine: Bm25Engine = "lancedb",
    ) -> None:
        self._con = con
        self._index = index
        self._bm25_engine = bm25_engine
        self._lock = threading.RLock()
        self._max_attempts = max_attempts
        self._lease_s = lease_s

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        with self._lock:
            self._con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedding_model(self) -> str:
        return self._index.model

    @staticmethod
    def _chunk_row(scope: Scope, chunk: ChunkRecord, document: DocumentRecord) -> dict[str, Any]:
        return _chunk_index_row(scope, chunk.chunk_id, chunk.text, chunk.context, chunk.content_hash,
                                json.dumps(chunk.locator), False, document.document_id, document.title,
                                document.uri, document.connector)

    @contextmanager
    def _tx(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._lock:
            self._con.execute("BEGIN TRANSACTION")
            try:
                yield self._con
            except BaseException:
                self._con.execute("ROLLBACK")
                raise
            self._con.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._lock:
            yield self._con

    # ------------------------------------------------------------------ scope, in one place
    @staticmethod
    def _scope_sql(scope: Scope, alias: str = "") -> tuple[str, list[str]]:
        a = f"{alias}." if alias else ""
        return f"{a}tenant_id = ? AND ({a}user_id = ? OR {a}shared)", [scope.tenant_id, scope.user_id]

    @staticmethod
    def _owner_sql(scope: Scope, alias: str = "") -> tuple[str, list[str]]:
        a = f"{alias}." if alias else ""
        return f"{a}tenant_id = ? AND {a}user_id = ?", [scope.tenant_id, scope.user_id]

    @staticmethod
    def _scope_lance(scope: Scope) -> str:
        # Scope ids are validated to a quote-free alphabet; sql_string escapes regardless.
        # `shared = true`, not `shared`: the bare column defeats the bitmap index (3x slower)
        return f"tenant_id = {sql_string(scope.tenant_id)} AND (user_id = {sql_string(scope.user_id)} OR shared = true)"

    @staticmethod
    def _active_memory_sql(alias: str = "") -> str:
        a = f"{alias}." if alias else ""
        return (
            f"{a}deleted_at IS NULL AND {a}is_latest AND ({a}valid_to IS NULL OR {a}valid_to > ?) "
            f"AND ({a}expires_at IS NULL OR {a}expires_at > ?)"
        )

    # ------------------------------------------------------------------ landing (dlt)
    def dlt_destination(self) -> Any:
        """A dlt duckdb destination writing raw landing tables into this store's file.

        dlt gets its own cursor (same database, separate session state): it changes the
        search path, which must not leak into the store's connection.
        """
        import dlt

        return dlt.destinations.duckdb(self._con.cursor())

    def _table_exists(self, con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
        return bool(
            con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
                [schema, table],
            ).fetchone()[0]
        )

    def landed_turns(self, scope: Scope) -> list[dict[str, Any]]:
        """Landed transcript turns of the scope that are new or changed since they were last processed.

        All of them, not only the last run's: a run that died after landing is finished by the next.
        """
        with self._read() as con:
            if not self._table_exists(con, "raw_conversations", "turns"):
                return []
            cur = con.execute(
                """
                SELECT r.file_url, r.line_no, r.session_id, r.turn_id, r.speaker, r.role, r.ts, r.text,
                       CAST(r.metadata AS VARCHAR) AS metadata
                FROM raw_conversations.turns r
                WHERE r.tenant_id = ? AND r.user_id = ?
                  AND NOT EXISTS (
                    SELECT 1 FROM turns t
                    WHERE t.tenant_id = r.tenant_id AND t.user_id = r.user_id
                      AND t.session_id = r.session_id AND t.turn_id = r.turn_id AND t.text = r.text)
                ORDER BY r.file_url, r.line_no
                """,
                [scope.tenant_id, scope.user_id],
            )
            columns = [d[0] for d in cur.description]
            return [dict(zip(columns, row)) for row in cur.fetchall()]

    def session_turns(self, scope: Scope, document_id: str) -> list[TurnRecord]:
        where, params = self._owner_sql(scope)
        with self._read() as con:
            rows = con.execute(
                f"SELECT turn_key, document_id, session_id, turn_id, ordinal, role, speaker, ts, text, "
                f"CAST(metadata AS VARCHAR), source_uri FROM turns WHERE {where} AND document_id = ? "
                "ORDER BY ordinal",
                [*params, document_id],
            ).fetchall()
        return [
            TurnRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], json.loads(r[9]) if r[9] else None, r[10])
            for r in rows
        ]

    # ------------------------------------------------------------------ documents
    def write_documents(self, scope: Scope, writes: list[DocumentWrite], *, actor: str) -> list[DocumentWriteResult]:
        """Make each document's `chunks` its live chunk set (and upsert its `turns`): one transaction,
        one commit for the whole batch.

        Unchanged documents write nothing. Chunks that vanished are soft-deleted; new ones wait for
        their vector in the outbox; a live chunk whose search context changed is updated in place.
        """
        now = utcnow()
        results: dict[str, DocumentWriteResult] = {}
        changed: list[DocumentWrite] = []
        embed: list[tuple[ChunkRecord, DocumentRecord]] = []
        removed: list[str] = []
        recontexted: list[ChunkRecord] = []
        input_hash = sha256_json(sorted((w.document.document_id, w.document.content_hash) for w in writes))
        pending = PendingCommit(scope.tenant_id, actor, input_hash, f"ingest {len(writes)} documents")
        with self._tx() as con:
            with batch.id_set(con, [w.document.document_id for w in writes]) as ids:
                found = {
                    r[0]: r[1:] for r in con.execute(
                        f"SELECT document_id, tenant_id, user_id, content_hash, deleted_at FROM source_documents "
                        f"WHERE document_id IN {ids}").fetchall()
                }
            for w in writes:
                doc = w.document
                hit = found.get(doc.document_id)
                if hit is not None and (hit[0], hit[1]) != (scope.tenant_id, scope.user_id):
                    raise ValueError(f"document id {doc.document_id} already belongs to another scope")
                if hit is not None and hit[2] == doc.content_hash and hit[3] is None:
                    results[doc.document_id] = DocumentWriteResult(doc.document_id, None, 0, 0, 0)
                else:
                    changed.append(w)
            if not changed:
                return [results[w.document.document_id] for w in writes]
            self._upsert_documents(con, scope, [w.document for w in changed], set(found), pending, now)
            turns_added = self._upsert_turns(con, scope, [t for w in changed for t in w.turns], pending, now)
            diff = self._replace_chunks(con, scope, changed, pending, now)
            for w in changed:
                added, revived, gone, recontext = diff[w.document.document_id]
                embed += [(c, w.document) for c in added + revived]
                removed += gone
                recontexted += recontext
                results[w.document.document_id] = DocumentWriteResult(
                    w.document.document_id, pending.commit_id, turns_added.get(w.document.document_id, 0),
                    len(added) + len(revived), len(gone))
            outbox.enqueue(con, [self._embed_job(scope, "chunks", c.chunk_id, c.content_hash) for c, _ in embed], now)
            orphaned = self._orphaned_memories(con, scope, removed, pending, now)
            write_commit(con, pending, now)
            fts.mark_dirty(con, fts.CHUNKS_FTS)
        if embed:
            self._index.upsert(CHUNK_INDEX, _columns([self._chunk_row(scope, c, d) for c, d in embed]))
        self._mark_deleted(removed, orphaned)
        if recontexted:  # the turn before an appended one: new search text, same vector
            self._index.update_columns(CHUNK_INDEX, {
                "chunk_id": [c.chunk_id for c in recontexted],
                "text": [search_text(c.text, c.context) for c in recontexted]})
        return [results[w.document.document_id] for w in writes]

    def _upsert_documents(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, documents: list[DocumentRecord], known: set[str],
        pending: PendingCommit, now: datetime,
    ) -> None:
        def row(d: DocumentRecord) -> list[Any]:
            return [d.connector, d.uri, d.mime, d.title, d.content_hash, json.dumps(d.metadata), pending.commit_id]

        fresh = [d for d in documents if d.document_id not in known]
        stale = [d for d in documents if d.document_id in known]
        batch.insert(
            con, "source_documents",
            ["document_id", "tenant_id", "user_id", "shared", "connector", "uri", "mime", "title", "content_hash",
             "metadata", "commit_id", "created_at"],
            [[d.document_id, scope.tenant_id, scope.user_id, False, *row(d), now] for d in fresh],
        )
        batch.update(
            con, "source_documents", "document_id",
            ["connector", "uri", "mime", "title", "content_hash", "metadata", "commit_id", "deleted_at"],
            [[d.document_id, *row(d), None] for d in stale],
        )
        pending.record("source_documents", "insert", [d.document_id for d in fresh])
        pending.record("source_documents", "update", [d.document_id for d in stale])

    def _upsert_turns(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, turns: list[TurnRecord], pending: PendingCommit,
        now: datetime,
    ) -> dict[str, int]:
        """Insert new turns and update edited ones; returns new turns per document."""
        if not turns:
            return {}
        with batch.id_set(con, [t.turn_key for t in turns]) as keys:
            existing = dict(con.execute(f"SELECT turn_key, text FROM turns WHERE turn_key IN {keys}").fetchall())
        new = [t for t in turns if t.turn_key not in existing]
        edited = [t for t in turns if t.turn_key in existing and existing[t.turn_key] != t.text]
        batch.update(
            con, "turns", "turn_key", ["text", "speaker", "role", "ts", "metadata", "commit_id"],
            [[t.turn_key, t.text, t.speaker, t.role, t.ts, json.dumps(t.metadata) if t.metadata else None,
              pending.commit_id] for t in edited],
        )
        batch.insert(
            con, "turns",
            ["turn_key", "tenant_id", "user_id", "document_id", "session_id", "turn_id", "ordinal", "role",
             "speaker", "ts", "text", "metadata", "source_uri", "created_at", "commit_id"],
            [[t.turn_key, scope.tenant_id, scope.user_id, t.document_id, t.session_id, t.turn_id, t.ordinal,
              t.role, t.speaker, t.ts, t.text, json.dumps(t.metadata) if t.metadata else None, t.source_uri,
              now, pending.commit_id] for t in new],
        )
        pending.record("turns", "update", [t.turn_key for t in edited])
        pending.record("turns", "insert", [t.turn_key for t in new])
        added: dict[str, int] = {}
        for t in new:
            added[t.document_id] = added.get(t.document_id, 0) + 1
        return added

    def _replace_chunks(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, writes: list[DocumentWrite], pending: PendingCommit,
        now: datetime,
    ) -> dict[str, tuple[list[ChunkRecord], list[ChunkRecord], list[str], list[ChunkRecord]]]:
        """Per document: chunks added, revived (live again), removed (ids), and live ones re-contexted."""
        with batch.id_set(con, [w.document.document_id for w in writes]) as ids:
            rows = con.execute(
                f"SELECT document_id, chunk_id, deleted_at, context FROM chunks "
                f"WHERE tenant_id = ? AND document_id IN {ids}", [scope.tenant_id]).fetchall()
        known: dict[str, dict[str, tuple[Any, Any]]] = {}
        for document_id, cid, deleted_at, context in rows:
            known.setdefault(document_id, {})[cid] = (deleted_at, context)
        diff = {}
        for w in writes:
            have = known.get(w.document.document_id, {})
            wanted = {c.chunk_id for c in w.chunks}
            diff[w.document.document_id] = (
                [c for c in w.chunks if c.chunk_id not in have],
                [c for c in w.chunks if c.chunk_id in have and have[c.chunk_id][0] is not None],
                [cid for cid, (deleted_at, _) in have.items() if deleted_at is None and cid not in wanted],
                [c for c in w.chunks if c.chunk_id in have and have[c.chunk_id][0] is None
                 and have[c.chunk_id][1] != c.context],
            )
        added = [c for d in diff.values() for c in d[0]]
        revived = [c for d in diff.values() for c in d[1]]
        removed = [cid for d in diff.values() for cid in d[2]]
        recontexted = [c for d in diff.values() for c in d[3]]
        batch.insert(
            con, "chunks",
            ["chunk_id", "tenant_id", "user_id", "shared", "document_id", "ordinal", "text", "context",
             "content_hash", "token_count", "locator", "score", "embedding_status", "created_at", "commit_id"],
            [[c.chunk_id, scope.tenant_id, scope.user_id, False, c.document_id, c.ordinal, c.text, c.context,
              c.content_hash, c.token_count, json.dumps(c.locator), c.score, "pending", now, pending.commit_id]
             for c in added],
        )
        batch.update(con, "chunks", "chunk_id", ["deleted_at", "context", "embedding_status", "commit_id"],
                     [[c.chunk_id, None, c.context, "pending", pending.commit_id] for c in revived])
        batch.update(con, "chunks", "chunk_id", ["deleted_at", "commit_id"],
                     [[cid, now, pending.commit_id] for cid in removed])
        batch.update(con, "chunks", "chunk_id", ["context", "commit_id"],
                     [[c.chunk_id, c.context, pending.commit_id] for c in recontexted])
        pending.record("chunks", "insert", [c.chunk_id for c in added])
        pending.record("chunks", "restore", [c.chunk_id for c in revived])
        pending.record("chunks", "delete", removed)
        pending.record("chunks", "update", [c.chunk_id for c in recontexted])
        return diff

    def record_ingest_errors(self, scope: Scope, errors: list[IngestErrorRecord]) -> None:
        if not errors:
            return
        now = utcnow()
        with self._tx() as con:
            batch.insert(
                con, "ingest_errors",
                ["error_id", "tenant_id", "user_id", "connector", "uri", "kind", "reason", "detail", "created_at"],
                [[f"err_{uuid.uuid4().hex}", scope.tenant_id, scope.user_id, e.connector, e.uri, e.kind, e.reason,
                  e.detail, now] for e in errors],
            )

    def ingest_errors(self, scope: Scope) -> list[IngestErrorRecord]:
        where, params = self._owner_sql(scope)
        with self._read() as con:
            rows = con.execute(
                f"SELECT connector, uri, kind, reason, detail FROM ingest_errors WHERE {where} ORDER BY created_at",
                params,
            ).fetchall()
        return [IngestErrorRecord(*r) for r in rows]

    # ------------------------------------------------------------------ memories
    def add_memory(self, scope: Scope, draft: MemoryDraft, *, actor: str) -> tuple[MemoryItem, bool]:
        """Insert a memory unless the user already holds the same content (then return that one)."""
        return self.write_memory(scope, draft, actor=actor)

    def write_memory(
        self, scope: Scope, draft: MemoryDraft, *, actor: str, links: tuple[LinkDraft, ...] = (),
        review: tuple[LinkDraft, ...] = (),
    ) -> tuple[MemoryItem, bool]:
        """Insert a memory with its decided relationships, in one commit; the same content already
        held by the user is returned instead (False) and nothing is written.

        `links` are applied: an UPDATES makes its target a past version (is_latest false, valid_to
        now) with a `supersedes` relation row; the others are link rows. `review` links wait in
        `review_queue` for a person."""
        now = utcnow()
        content_hash = memory_content_hash(draft.content)
        owner, params = self._owner_sql(scope)
        active = self._active_memory_sql()
        pending = PendingCommit(scope.tenant_id, actor, content_hash, "add memory")
        memory_id = f"mem_{uuid.uuid4().hex}"
        with self._tx() as con:
            existing = con.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {owner} AND content_hash = ? AND {active} LIMIT 1",
                [*params, content_hash, now, now],
            ).fetchone()
            if existing is not None:
                return _memory_item(existing), False
            targets = [link.target_id for link in (*links, *review)]
            if targets:
                with batch.id_set(con, targets) as ids:
                    held = {r[0] for r in con.execute(
                        f"SELECT memory_id FROM memories WHERE {owner} AND deleted_at IS NULL AND memory_id IN {ids}",
                        params).fetchall()}
                if missing := sorted(set(targets) - held):
                    raise BadInputError(f"links name memories {scope} does not hold: {', '.join(missing[:5])}")
            con.execute(
                "INSERT INTO memories (memory_id, tenant_id, user_id, shared, content, content_hash, kind, salience, "
                "confidence, is_latest, valid_from, expires_at, observed_at, event_start_at, event_end_at, "
                "temporal_text, tier, metadata, embedding_status, created_at, updated_at, commit_id) "
                "VALUES (?, ?, ?, false, ?, ?, ?, ?, ?, true, ?, ?, ?, ?, ?, ?, 'L0', ?, 'pending', ?, ?, ?)",
                [memory_id, scope.tenant_id, scope.user_id, draft.content, content_hash, draft.kind, draft.salience,
                 draft.confidence, now, draft.expires_at, draft.observed_at or now, draft.event_start_at,
                 draft.event_end_at, draft.temporal_text, json.dumps(draft.metadata), now, now, pending.commit_id],
            )
            pending.record("memories", "insert", [memory_id])
            self._link_sources(con, scope, memory_id, draft.derived_from, pending, now)
            superseded = self._apply_links(con, scope, memory_id, links, pending, now)
            self._queue_reviews(con, scope, memory_id, review, now)
            outbox.enqueue(con, [self._embed_job(scope, "memories", memory_id, content_hash)], now)
            write_commit(con, pending, now)
            fts.mark_dirty(con, fts.MEMORIES_FTS)
            row = con.execute(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE memory_id = ?", [memory_id]).fetchone()
        memory = _memory_item(row)
        self._index.upsert(MEMORY_INDEX, _columns([_memory_row(scope, memory, content_hash)]))
        if superseded:
            self._index.update(MEMORY_INDEX, sql_in("memory_id", superseded), {"is_latest": False})
        return memory, True

    def _apply_links(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, memory_id: str, links: tuple[LinkDraft, ...],
        pending: PendingCommit, now: datetime,
    ) -> list[str]:
        """Link rows from the new memory; UPDATES targets become past versions. Returns those ids."""
        if not links:
            return []
        rows = [[_link_id(scope.tenant_id, memory_id, link.target_id, link.type), scope.tenant_id, memory_id,
                 link.target_id, link.type, link.confidence, "auto", link.reason, now, pending.commit_id]
                for link in links]
        batch.insert(con, "memory_links", ["link_id", "tenant_id", "src", "dst", "type", "confidence", "decided_by",
                                           "reason", "created_at", "commit_id"], rows, on_conflict_ignore=True)
        pending.record("memory_links", "insert", [r[0] for r in rows])
        updates = [link for link in links if link.type == "UPDATES"]
        if updates:
            batch.update(con, "memories", "memory_id", ["is_latest", "valid_to", "updated_at", "commit_id"],
                         [[link.target_id, False, now, now, pending.commit_id] for link in updates])
            pending.record("memories", "update", [link.target_id for link in updates])
            batch.insert(con, "relations", ["tenant_id", "relation_id", "subject", "predicate", "object", "memory_id",
                                            "confidence", "created_at", "commit_id"],
                         [[scope.tenant_id, _link_id(scope.tenant_id, memory_id, link.target_id, "supersedes"),
                           memory_id, "supersedes", link.target_id, memory_id, link.confidence, now,
                           pending.commit_id] for link in updates],
                         on_conflict_ignore=True)
        return [link.target_id for link in updates]

    def _queue_reviews(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, memory_id: str, review: tuple[LinkDraft, ...],
        now: datetime,
    ) -> None:
        if review:
            batch.insert(con, "review_queue", ["review_id", "tenant_id", "user_id", "src", "dst", "proposed_type",
                                               "confidence", "reason", "status", "created_at"],
                         [[f"rev_{uuid.uuid4().hex}", scope.tenant_id, scope.user_id, memory_id, link.target_id,
                           link.type, link.confidence, link.reason, "open", now] for link in review])

    def reinforce_memory(self, scope: Scope, memory_id: str, sources: tuple[str, ...], *, actor: str) -> bool:
        """The same thing said again: count it and cite the new sources; no second memory."""
        now = utcnow()
        owner, params = self._owner_sql(scope)
        pending = PendingCommit(scope.tenant_id, actor, sha256_json({"reinforce": memory_id, "sources": sources}),
                                "reinforce memory")
        with self._tx() as con:
            hit = con.execute(f"SELECT 1 FROM memories WHERE {owner} AND memory_id = ? AND deleted_at IS NULL",
                              [*params, memory_id]).fetchone()
            if hit is None:
                return False
            con.execute("UPDATE memories SET reinforcement = coalesce(reinforcement, 0) + 1 WHERE memory_id = ?",
                        [memory_id])
            self._link_sources(con, scope, memory_id, sources, pending, now)
            if not pending.empty:
                write_commit(con, pending, now)
        return True

    def _link_sources(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, memory_id: str, sources: tuple[str, ...],
        pending: PendingCommit, now: datetime,
    ) -> None:
        """EXTRACTED_FROM links to the live chunks or documents (of the user) a memory came from."""
        if not sources:
            return
        owner, params = self._owner_sql(scope)
        with batch.id_set(con, list(sources)) as ids:
            live = {r[0] for r in con.execute(
                f"SELECT chunk_id FROM chunks WHERE {owner} AND deleted_at IS NULL AND chunk_id IN {ids} UNION "
                f"SELECT document_id FROM source_documents WHERE {owner} AND deleted_at IS NULL "
                f"AND document_id IN {ids}", [*params, *params]).fetchall()}
        missing = sorted(set(sources) - live)
        if missing:
            raise BadInputError(f"derived_from names what {scope} does not hold: {', '.join(missing[:5])}")
        rows = [[_link_id(scope.tenant_id, memory_id, dst, "EXTRACTED_FROM"), scope.tenant_id, memory_id, dst,
                 "EXTRACTED_FROM", 1.0, "auto", None, now, pending.commit_id] for dst in sorted(live)]
        batch.insert(con, "memory_links", ["link_id", "tenant_id", "src", "dst", "type", "confidence", "decided_by",
                                           "reason", "created_at", "commit_id"], rows, on_conflict_ignore=True)
        pending.record("memory_links", "insert", [r[0] for r in rows])

    def _orphaned_memories(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, gone: list[str], pending: PendingCommit, now: datetime,
    ) -> list[str]:
        """Soft-delete memories extracted only from what just went (`gone` chunk or document ids)."""
        if not gone:
            return []
        with batch.id_set(con, gone) as ids:
            orphans = [r[0] for r in con.execute(
                f"""
                WITH hit AS (SELECT DISTINCT src FROM memory_links
                             WHERE tenant_id = ? AND type = 'EXTRACTED_FROM' AND dst IN {ids})
                SELECT m.memory_id FROM memories m JOIN hit ON hit.src = m.memory_id
                WHERE m.tenant_id = ? AND m.deleted_at IS NULL AND NOT EXISTS (
                    SELECT 1 FROM memory_links l WHERE l.tenant_id = ? AND l.src = m.memory_id
                      AND l.type = 'EXTRACTED_FROM' AND (
                        EXISTS (SELECT 1 FROM chunks c WHERE c.chunk_id = l.dst AND c.deleted_at IS NULL)
                        OR EXISTS (SELECT 1 FROM source_documents d WHERE d.document_id = l.dst
                                   AND d.deleted_at IS NULL)))
                """, [scope.tenant_id, scope.tenant_id, scope.tenant_id]).fetchall()]
        batch.update(con, "memories", "memory_id", ["deleted_at", "updated_at", "commit_id"],
                     [[m, now, now, pending.commit_id] for m in orphans])
        pending.record("memories", "delete", orphans)
        if orphans:
            fts.mark_dirty(con, fts.MEMORIES_FTS)
        return orphans

    def documents_under(self, scope: Scope, connector: str, uri_prefix: str) -> dict[str, tuple[str, str]]:
        """Live documents of the user from `connector` whose URI starts with `uri_prefix`:
        uri -> (document_id, content_hash)."""
        owner, params = self._owner_sql(scope)
        with self._read() as con:
            rows = con.execute(
                f"SELECT uri, document_id, content_hash FROM source_documents WHERE {owner} AND connector = ? "
                "AND deleted_at IS NULL AND starts_with(uri, ?)", [*params, connector, uri_prefix]).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    def delete_documents(self, scope: Scope, document_ids: list[str], *, actor: str) -> DeletionResult:
        """Soft-delete the user's documents, their chunks and the memories extracted only from them:
        one commit. Recall stops returning all of it; history keeps it."""
        if not document_ids:
            return DeletionResult()
        now = utcnow()
        owner, params = self._owner_sql(scope)
        pending = PendingCommit(scope.tenant_id, actor, sha256_json(sorted(document_ids)),
                                f"delete {len(document_ids)} documents")
        with self._tx() as con:
            with batch.id_set(con, document_ids) as ids:
                documents = [r[0] for r in con.execute(
                    f"SELECT document_id FROM source_documents WHERE {owner} AND deleted_at IS NULL "
                    f"AND document_id IN {ids}", params).fetchall()]
            if not documents:
                return DeletionResult()
            with batch.id_set(con, documents) as ids:
                chunks = [r[0] for r in con.execute(
                    f"SELECT chunk_id FROM chunks WHERE {owner} AND deleted_at IS NULL AND document_id IN {ids}",
                    params).fetchall()]
            batch.update(con, "source_documents", "document_id", ["deleted_at", "commit_id"],
                         [[d, now, pending.commit_id] for d in documents])
            batch.update(con, "chunks", "chunk_id", ["deleted_at", "commit_id"],
                         [[c, now, pending.commit_id] for c in chunks])
            pending.record("source_documents", "delete", documents)
            pending.record("chunks", "delete", chunks)
            memories = self._orphaned_memories(con, scope, documents + chunks, pending, now)
            write_commit(con, pending, now)
            fts.mark_dirty(con, fts.CHUNKS_FTS)
        self._mark_deleted(chunks, memories)
        return DeletionResult(len(documents), len(chunks), len(memories))

    def _mark_deleted(self, chunks: list[str], memories: list[str]) -> None:
        if chunks:
            self._index.update(CHUNK_INDEX, sql_in("chunk_id", chunks), {"deleted": True})
        if memories:
            self._index.update(MEMORY_INDEX, sql_in("memory_id", memories), {"deleted": True})

    def get_memory(self, scope: Scope, memory_id: str) -> MemoryItem | None:
        where, params = self._scope_sql(scope)
        with self._read() as con:
            row = con.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {where} AND memory_id = ?", [*params, memory_id]
            ).fetchone()
        return _memory_item(row) if row else None

    def list_memories(self, scope: Scope, *, limit: int = 100, include_inactive: bool = False) -> list[MemoryItem]:
        where, params = self._scope_sql(scope)
        now = utcnow()
        if not include_inactive:
            where += f" AND {self._active_memory_sql()}"
            params = [*params, now, now]
        with self._read() as con:
            rows = con.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {where} ORDER BY created_at DESC, memory_id LIMIT ?",
                [*params, limit],
            ).fetchall()
        return [_memory_item(r) for r in rows]

    def turn_chunk_ids(self, scope: Scope, session_id: str) -> dict[str, list[str]]:
        """The live chunks of each turn of a session (what a memory drawn from the turn cites)."""
        owner, params = self._owner_sql(scope)
        with self._read() as con:
            rows = con.execute(
                f"SELECT json_extract_string(locator, '$.turns[0].turn_id'), chunk_id FROM chunks "
                f"WHERE {owner} AND deleted_at IS NULL AND json_extract_string(locator, '$.session_id') = ? "
                "ORDER BY ordinal", [*params, session_id]).fetchall()
        found: dict[str, list[str]] = {}
        for turn_id, chunk_id in rows:
            found.setdefault(turn_id, []).append(chunk_id)
        return found

    def memory_links(self, scope: Scope) -> list[tuple[str, str, str]]:
        """(src, type, dst) between the user's memories, EXTRACTED_FROM aside."""
        owner, params = self._owner_sql(scope, "m")
        with self._read() as con:
            return [tuple(r) for r in con.execute(
                f"SELECT l.src, l.type, l.dst FROM memory_links l JOIN memories m ON m.memory_id = l.src "
                f"WHERE {owner} AND l.tenant_id = m.tenant_id AND l.type <> 'EXTRACTED_FROM' ORDER BY l.created_at",
                params).fetchall()]

    def memory_source_turns(self, scope: Scope) -> dict[str, list[str]]:
        """The conversation turns each of the user's memories was extracted from."""
        owner, params = self._owner_sql(scope, "m")
        with self._read() as con:
            rows = con.execute(
                f"SELECT l.src, json_extract_string(c.locator, '$.turns[0].turn_id') FROM memory_links l "
                f"JOIN memories m ON m.memory_id = l.src JOIN chunks c ON c.chunk_id = l.dst "
                f"WHERE {owner} AND l.type = 'EXTRACTED_FROM' AND c.tenant_id = m.tenant_id", params).fetchall()
        found: dict[str, list[str]] = {}
        for memory_id, turn_id in rows:
            if turn_id is not None:
                found.setdefault(memory_id, []).append(turn_id)
        return found

    def fetch_memories(self, scope: Scope, memory_ids: list[str]) -> dict[str, MemoryItem]:
        """Active memories among `memory_ids`, inside the scope (the final gate before recall returns them)."""
        if not memory_ids:
            return {}
        where, params = self._scope_sql(scope)
        now = utcnow()
        with self._read() as con, batch.id_set(con, memory_ids) as ids:
            rows = con.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {where} AND {self._active_memory_sql()} "
                f"AND memory_id IN {ids}",
                [*params, now, now],
            ).fetchall()
        return {r[0]: _memory_item(r) for r in rows}

    def delete_memory(self, scope: Scope, memory_id: str, *, actor: str) -> bool:
        """Soft-delete one of the user's own memories; False when there is none in scope."""
        now = utcnow()
        owner, params = self._owner_sql(scope)
        pending = PendingCommit(scope.tenant_id, actor, sha256_json({"delete": memory_id}), "delete memory")
        with self._tx() as con:
            hit = con.execute(
                f"SELECT 1 FROM memories WHERE {owner} AND memory_id = ? AND deleted_at IS NULL",
                [*params, memory_id],
            ).fetchone()
            if hit is None:
                return False
            con.execute(
                "UPDATE memories SET deleted_at = ?, updated_at = ?, commit_id = ? WHERE memory_id = ?",
                [now, now, pending.commit_id, memory_id],
            )
            pending.record("memories", "delete", [memory_id])
            write_commit(con, pending, now)
            fts.mark_dirty(con, fts.MEMORIES_FTS)
        self._index.update(MEMORY_INDEX, sql_in("memory_id", [memory_id]), {"deleted": True})
        return True

    def memory_history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        """Commits that wrote this memory, oldest first (empty when it is not in scope)."""
        if self.get_memory(scope, memory_id) is None:
            return []
        with self._read() as con:
            rows = con.execute(
                """
                SELECT c.commit_id, c.created_at, c.actor, c.message, r.row[2]
                FROM commits c, unnest(from_json(c.diff_json->'rows', '["VARCHAR[]"]')) AS r(row)
                WHERE c.tenant_id = ? AND r.row[1] = 'memories' AND r.row[3] = ?
                ORDER BY c.seq
                """,
                [scope.tenant_id, memory_id],
            ).fetchall()
        return [HistoryEntry(commit_id=r[0], created_at=r[1], actor=r[2], message=r[3], op=r[4]) for r in rows]

    # ------------------------------------------------------------------ embeddings (outbox)
    def _embed_job(self, scope: Scope, target: Target, row_id: str, content_hash: str) -> Job:
        model = self._index.model
        return Job(
            job_key=f"{EMBED_JOB}:{target}:{row_id}:{content_hash[:16]}:{model}",
            tenant_id=scope.tenant_id, user_id=scope.user_id, kind=EMBED_JOB,
            payload={"target": target, "id": row_id, "content_hash": content_hash, "model": model},
            attempts=0,
        )

    def claim_embedding_jobs(self, limit: int) -> list[Job]:
        with self._tx() as con:
            return outbox.claim(con, EMBED_JOB, limit, self._lease_s, utcnow())

    def embedding_inputs(self, scope: Scope, target: Target, jobs: list[Job]) -> tuple[list[EmbeddingInput], list[str]]:
        """Rows behind `jobs` that still need this vector, and the keys of jobs that are moot.

        A job is moot when its row was deleted or its content changed since (a newer job exists).
        """
        wanted = {j.payload["id"]: j for j in jobs}
        owner, params = self._owner_sql(scope)
        with self._read() as con, batch.id_set(con, list(wanted)) as ids:
            if target == "chunks":
                chunk_owner, _ = self._owner_sql(scope, "c")
                rows = con.execute(f"{_CHUNK_INDEX_SELECT} WHERE {chunk_owner} AND c.deleted_at IS NULL "
                                   f"AND c.chunk_id IN {ids}", params).fetchall()
                found = {r[0]: EmbeddingInput(wanted[r[0]].job_key, r[0], r[1], r[3],
                                              _chunk_index_row(scope, *r)) for r in rows}
            else:
                rows = con.execute(
                    f"SELECT memory_id, content, content_hash, shared, is_latest, valid_to, expires_at FROM memories "
                    f"WHERE {owner} AND deleted_at IS NULL AND memory_id IN {ids}",
                    params,
                ).fetchall()
                found = {
                    r[0]: EmbeddingInput(wanted[r[0]].job_key, r[0], r[1], r[2],
                                         {"shared": r[3], "is_latest": r[4], "deleted": False,
                                          "active_until": _active_until(r[5], r[6]), "text": r[1]})
                    for r in rows
                }
        live = [i for i in found.values() if i.content_hash == wanted[i.row_id].payload["content_hash"]]
        live_keys = {i.job_key for i in live}
        return live, [j.job_key for j in jobs if j.job_key not in live_keys]

    def reset_vectors_for_model(self) -> int:
        """A model change is a re-embed: drop the LanceDB tables, mark every live row pending under the
        configured model, queue its job, and re-seed the search text so BM25 answers meanwhile.
        Returns the rows queued."""
        for spec in (CHUNK_INDEX, MEMORY_INDEX, EMBEDDING_CACHE):
            self._index.drop(spec)
        with self._read() as con:
            scopes = con.execute(
                "SELECT DISTINCT tenant_id, user_id FROM chunks WHERE deleted_at IS NULL UNION "
                "SELECT DISTINCT tenant_id, user_id FROM memories WHERE deleted_at IS NULL").fetchall()
        queued = 0
        for tenant_id, user_id in scopes:
            queued += self._requeue_scope(Scope(tenant_id, user_id))
        return queued

    def _requeue_scope(self, scope: Scope) -> int:
        owner, params = self._owner_sql(scope)
        now = utcnow()
        with self._tx() as con:
            chunks = con.execute(
                f"{_CHUNK_INDEX_SELECT} WHERE c.tenant_id = ? AND c.user_id = ? AND c.deleted_at IS NULL",
                params).fetchall()
            memories = [_memory_item(r) for r in con.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {owner} AND deleted_at IS NULL", params).fetchall()]
            hashes = dict(con.execute(
                f"SELECT memory_id, content_hash FROM memories WHERE {owner} AND deleted_at IS NULL", params).fetchall())
            for table in ("chunks", "memories"):
                con.execute(f"UPDATE {table} SET embedding_status = 'pending', embedding_model = NULL "
                            f"WHERE {owner} AND deleted_at IS NULL", params)
            outbox.requeue(con, [self._embed_job(scope, "chunks", c[0], c[3]) for c in chunks]
                           + [self._embed_job(scope, "memories", m.id, hashes[m.id]) for m in memories], now)
        self._index.upsert(CHUNK_INDEX, _columns([_chunk_index_row(scope, *c) for c in chunks]))
        self._index.upsert(MEMORY_INDEX, _columns([_memory_row(scope, m, hashes[m.id]) for m in memories]))
        return len(chunks) + len(memories)

    def cached_vectors(self, content_hashes: list[str]) -> dict[str, np.ndarray]:
        """Vectors already computed by this model for these content hashes (content-addressed, no tenant data)."""
        if not content_hashes:
            return {}
        keys = [f"{self._index.model}:{h}" for h in set(content_hashes)]
        table = self._index.lookup(EMBEDDING_CACHE, sql_in("cache_key", keys), ["cache_key", "vector"], len(keys))
        prefix = len(self._index.model) + 1
        return {
            key[prefix:]: np.asarray(vec, dtype=np.float32)
            for key, vec in zip(table.column("cache_key").to_pylist(), table.column("vector").to_pylist())
        }

    def cache_vectors(self, content_hashes: list[str], vectors: np.ndarray) -> None:
        self._index.upsert(
            EMBEDDING_CACHE, {"cache_key": [f"{self._index.model}:{h}" for h in content_hashes]}, vectors
        )

    def store_embeddings(self, scope: Scope, target: Target, inputs: list[EmbeddingInput], vectors: np.ndarray) -> None:
        """Write vectors to LanceDB, then mark the DuckDB rows embedded and their jobs done."""
        if not inputs:
            return
        spec = CHUNK_INDEX if target == "chunks" else MEMORY_INDEX
        self._index.upsert(spec, _columns([
            {spec.id_column: item.row_id, "tenant_id": scope.tenant_id, "user_id": scope.user_id,
             "content_hash": item.content_hash, **item.columns}
            for item in inputs
        ]), vectors)
        id_column = "chunk_id" if target == "chunks" else "memory_id"
        now = utcnow()
        with self._tx() as con, batch.id_set(con, [i.row_id for i in inputs]) as ids:
            con.execute(
                f"UPDATE {target} SET embedding_status = 'done', embedding_model = ? "
                f"WHERE tenant_id = ? AND {id_column} IN {ids}",
                [self._index.model, scope.tenant_id],
            )
            outbox.complete(con, [i.job_key for i in inputs], now)

    def complete_jobs(self, keys: list[str]) -> None:
        with self._tx() as con:
            outbox.complete(con, keys, utcnow())

    def fail_jobs(self, keys: list[str], error: str) -> None:
        with self._tx() as con:
            outbox.fail(con, keys, error, self._max_attempts, utcnow())

    def release_jobs(self, keys: list[str], error: str) -> None:
        with self._tx() as con:
            outbox.release(con, keys, error, utcnow())

    def outbox_counts(self) -> dict[str, int]:
        with self._read() as con:
            return outbox.counts(con)

    # ------------------------------------------------------------------ search
    def refresh_search_indexes(self) -> None:
        """After a batch of writes: fold new rows into LanceDB's indexes and rebuild the dirty
        DuckDB FTS indexes (analysts' BM25), once per batch, never per row."""
        now = utcnow()
        with self._lock:
            for spec in fts.FTS_SPECS:
                fts.ensure_current(self._con, spec, now)
            for index in (CHUNK_INDEX, MEMORY_INDEX):
                self._index.refresh(index)

    def rebuild_fts_index(self, target: Target) -> None:
        """Force a rebuild of the DuckDB FTS index (benchmarks measure what one costs)."""
        with self._lock:
            fts.rebuild(self._con, fts.CHUNKS_FTS if target == "chunks" else fts.MEMORIES_FTS, utcnow())

    def _lance_where(self, scope: Scope, target: Target) -> str:
        where = self._scope_lance(scope) + " AND NOT deleted"
        if target == "memories":
            where += f" AND is_latest AND (active_until IS NULL OR active_until > {_epoch(utcnow())})"
        return where

    def bm25_search(self, scope: Scope, target: Target, query: str, k: int) -> list[SearchHit]:
        """BM25 hits best first, inside scope and lifecycle; LanceDB's index online, or DuckDB FTS."""
        if self._bm25_engine == "lancedb":  # LanceDB is thread-safe: no connection lock, so it can run in parallel
            spec = CHUNK_INDEX if target == "chunks" else MEMORY_INDEX
            found = self._index.text_search(spec, query, self._lance_where(scope, target), k)
            return [_search_hit(target, h) for h in found]
        fts_spec = fts.CHUNKS_FTS if target == "chunks" else fts.MEMORIES_FTS
        where, params = self._scope_sql(scope)
        if target == "chunks":
            where += " AND deleted_at IS NULL"
        else:
            now = utcnow()
            where += f" AND {self._active_memory_sql()}"
            params = [*params, now, now]
        with self._lock:
            fts.ensure_current(self._con, fts_spec, utcnow())
            return [SearchHit(target, i, score, None) for i, score in fts.search(
                self._con, fts_spec, query, where, params, k)]

    def vector_search(self, scope: Scope, target: Target, vector: np.ndarray, k: int) -> list[SearchHit]:
        """Cosine-similarity hits best first, inside scope and lifecycle."""
        spec = CHUNK_INDEX if target == "chunks" else MEMORY_INDEX
        found = self._index.vector_search(spec, vector, self._lance_where(scope, target), k)
        return [_search_hit(target, h) for h in found]

    def live_chunk_ids(self, scope: Scope, chunk_ids: list[str]) -> set[str]:
        """Which of `chunk_ids` DuckDB, the system of record, holds live inside the scope: the final
        gate before recall returns a chunk, so a lagging index can lose a hit but never leak one.
        Reads only ids and filter columns (6 ms for 400 ids at 100k chunks; the text would cost 20)."""
        if not chunk_ids:
            return set()
        where, params = self._scope_sql(scope)
        with self._read() as con, batch.id_set(con, chunk_ids) as ids:
            # a document's deletion soft-deletes its chunks, so the chunk row alone decides
            return {r[0] for r in con.execute(
                f"SELECT chunk_id FROM chunks WHERE {where} AND deleted_at IS NULL AND chunk_id IN {ids}",
                params).fetchall()}

    def fetch_chunks(self, scope: Scope, chunk_ids: list[str]) -> dict[str, ChunkHit]:
        """Live chunks among `chunk_ids`, inside the scope, with their documents (for citations)."""
        if not chunk_ids:
            return {}
        where, params = self._scope_sql(scope, "c")
        with self._read() as con, batch.id_set(con, chunk_ids) as ids:
            rows = con.execute(
                f"SELECT c.chunk_id, c.text, CAST(c.locator AS VARCHAR), d.document_id, "
                f"d.uri, d.title, d.connector FROM chunks c JOIN source_documents d ON d.document_id = c.document_id "
                f"WHERE {where} AND c.deleted_at IS NULL AND d.deleted_at IS NULL AND c.chunk_id IN {ids}",
                params,
            ).fetchall()
        return {
            r[0]: ChunkHit(r[0], r[1], json.loads(r[2]) if r[2] else {}, r[3], r[4], r[5], r[6])
            for r in rows
        }

    # ------------------------------------------------------------------ API keys (not tenant data)
    def create_api_key(self, tenant_id: str, name: str | None = None) -> tuple[str, str]:
        """A new key for `tenant_id`: (key_id, secret). The secret is shown once; only its hash is kept
        (random 256-bit tokens need no slow hash)."""
        Scope(tenant_id, "keys")  # validates the tenant id
        key_id = f"key_{uuid.uuid4().hex[:16]}"
        secret = f"mf_{secrets.token_urlsafe(32)}"
        with self._tx() as con:
            con.execute("INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, NULL)",
                        [key_id, tenant_id, name, _secret_hash(secret), utcnow()])
        return key_id, secret

    def tenant_for_key(self, secret: str) -> str | None:
        with self._read() as con:
            row = con.execute("SELECT tenant_id FROM api_keys WHERE secret_sha256 = ? AND revoked_at IS NULL",
                              [_secret_hash(secret)]).fetchone()
        return row[0] if row else None

    def list_api_keys(self, tenant_id: str | None = None) -> list[dict[str, Any]]:
        with self._read() as con:
            cur = con.execute("SELECT key_id, tenant_id, name, created_at, revoked_at FROM api_keys "
                              "WHERE ? IS NULL OR tenant_id = ? ORDER BY created_at", [tenant_id, tenant_id])
            columns = [d[0] for d in cur.description]
            return [dict(zip(columns, r)) for r in cur.fetchall()]

    def revoke_api_key(self, key_id: str) -> bool:
        with self._tx() as con:
            return bool(con.execute("UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL "
                                    "RETURNING key_id", [utcnow(), key_id]).fetchall())

    # ------------------------------------------------------------------ integrity and stats
    def verify(self, tenant_id: str) -> VerifyReport:
        with self._read() as con:
            return verify_tenant(con, tenant_id)

    def tenants(self) -> list[str]:
        with self._read() as con:
            return [r[0] for r in con.execute("SELECT DISTINCT tenant_id FROM commits ORDER BY 1").fetchall()]

    def counts(self, scope: Scope) -> dict[str, int]:
        """Live rows per table inside the scope."""
        where, params = self._scope_sql(scope)
        owner, owner_params = self._owner_sql(scope)
        with self._read() as con:
            return {
                "documents": con.execute(
                    f"SELECT count(*) FROM source_documents WHERE {where} AND deleted_at IS NULL", params).fetchone()[0],
                "chunks": con.execute(
                    f"SELECT count(*) FROM chunks WHERE {where} AND deleted_at IS NULL", params).fetchone()[0],
                "turns": con.execute(f"SELECT count(*) FROM turns WHERE {owner}", owner_params).fetchone()[0],
                "memories": con.execute(
                    f"SELECT count(*) FROM memories WHERE {where} AND deleted_at IS NULL", params).fetchone()[0],
                "pending_embeddings": con.execute(
                    f"SELECT (SELECT count(*) FROM chunks WHERE {where} AND deleted_at IS NULL AND "
                    f"embedding_status = 'pending') + (SELECT count(*) FROM memories WHERE {where} AND "
                    "deleted_at IS NULL AND embedding_status = 'pending')", [*params, *params]).fetchone()[0],
                "ingest_errors": con.execute(
                    f"SELECT count(*) FROM ingest_errors WHERE {owner}", owner_params).fetchone()[0],
            }

    def vector_count(self, target: Target) -> int:
        """Rows of the target that carry a vector (all tenants; for benchmarks and checks)."""
        return self._index.count(CHUNK_INDEX if target == "chunks" else MEMORY_INDEX, "vector IS NOT NULL")


def search_text(text: str, context: str | None) -> str:
    """What BM25 indexes for a chunk: its context (e.g. the neighbouring turns), then its text.
    Only the text is embedded."""
    return f"{context}\n{text}" if context else text


# the columns `_chunk_index_row` takes after the scope, in order
_CHUNK_INDEX_SELECT = (
    "SELECT c.chunk_id, c.text, c.context, c.content_hash, CAST(c.locator AS VARCHAR), c.shared, d.document_id, "
    "d.title, d.uri, d.connector FROM chunks c JOIN source_documents d ON d.document_id = c.document_id"
)


def _chunk_index_row(
    scope: Scope, chunk_id: str, text: str, context: str | None, content_hash: str, locator: str, shared: bool,
    document_id: str, title: str, uri: str, connector: str,
) -> dict[str, Any]:
    return {"chunk_id": chunk_id, "tenant_id": scope.tenant_id, "user_id": scope.user_id, "shared": shared,
            "document_id": document_id, "deleted": False, "content_hash": content_hash,
            "text": search_text(text, context), "body": text, "locator": locator, "title": title, "uri": uri,
            "connector": connector}


def _search_hit(target: Target, hit: tuple[str, float, dict[str, str]]) -> SearchHit:
    row_id, score, payload = hit
    if target != "chunks" or payload.get("body") is None:
        return SearchHit(target, row_id, score, None)
    chunk = ChunkHit(row_id, payload["body"], json.loads(payload["locator"] or "{}"), payload["document_id"],
                     payload["uri"], payload["title"], payload["connector"])
    return SearchHit(target, row_id, score, chunk)


def _columns(rows: list[dict[str, Any]]) -> dict[str, list]:
    return {name: [row[name] for row in rows] for name in rows[0]} if rows else {}


def _memory_row(scope: Scope, memory: MemoryItem, content_hash: str) -> dict[str, Any]:
    return {"memory_id": memory.id, "tenant_id": scope.tenant_id, "user_id": scope.user_id, "shared": False,
            "deleted": memory.deleted_at is not None, "is_latest": memory.is_latest,
            "active_until": _active_until(memory.valid_to, memory.expires_at), "content_hash": content_hash,
            "text": memory.content}


def _secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _link_id(tenant_id: str, src: str, dst: str, link_type: str) -> str:
    return "lnk_" + hashlib.sha256(f"{tenant_id}\x1f{src}\x1f{dst}\x1f{link_type}".encode()).hexdigest()[:24]


def memory_content_hash(content: str) -> str:
    """Exact repeats are the same memory: compare whitespace-collapsed, case-folded text."""
    normal = " ".join(content.split()).casefold()
    return hashlib.sha256(normal.encode()).hexdigest()
