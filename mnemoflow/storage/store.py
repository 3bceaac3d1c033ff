"""The tenant-scoped store: the only door to DuckDB and LanceDB.

Every method that reads or writes tenant data takes a `Scope`; the predicates
are built here, in `_scope_sql`, `_owner_sql`, `_scope_lance` and `_owner_lance`,
and nowhere else. Reads see the user's rows and the tenant's shared rows; writes
touch only the user's rows.
Each write is one DuckDB transaction that also appends a commit and enqueues its
derived work in the outbox; LanceDB follows after the transaction. Memory writes
(`MemoryWrites`, a generation pass) turn that round: each memory's LanceDB row is
added when it is decided, so that the next decision finds it, and the pass's one
transaction follows; a pass that fails takes its rows back.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
import uuid
from collections import Counter
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
    ENTITY_TYPES,
    PREDICATES,
    THIS_MEMORY,
    EntityRef,
    EntityRow,
    HistoryEntry,
    IngestErrorRecord,
    LINK_TYPES,
    LinkDraft,
    MemoryDraft,
    MemoryItem,
    RelationRow,
    REVIEW_STATUSES,
    ReviewItem,
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
    Hit,
    LanceIndex,
    sql_in,
    sql_string,
)
from mnemoflow.timeutil import utcnow

Target = Literal["chunks", "memories"]
Bm25Engine = Literal["lancedb", "duckdb"]
EMBED_JOB = "embed"
GENERATE_JOB = "generate"
HOTNESS_HALF_LIFE_DAYS = 30.0  # an entity's hotness halves every 30 days without a mention
_ENTITY_ID = re.compile(rf"^entity:({'|'.join(ENTITY_TYPES)}):[a-z0-9]+(?:-[a-z0-9]+)*$")
_CATEGORY_KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*(?:/[a-z0-9][a-z0-9_-]*)*$")

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
    def _owner_lance(scope: Scope) -> str:
        return f"tenant_id = {sql_string(scope.tenant_id)} AND user_id = {sql_string(scope.user_id)}"

    @staticmethod
    def _active_memory_sql(alias: str = "") -> str:
        a = f"{alias}." if alias else ""
        return (
            f"{a}deleted_at IS NULL AND {a}is_latest AND ({a}valid_to IS NULL OR {a}valid_to > ?) "
            f"AND ({a}expires_at IS NULL OR {a}expires_at > ?)"
        )

    @classmethod
    def _lifecycle_sql(cls, alias: str = "", *, history: bool = False) -> tuple[str, list[Any]]:
        """The memory lifecycle gate as " AND ..." and its parameters: active memories only, or with
        `history` past versions and expired ones too; deleted ones never."""
        if history:
            return f" AND {alias + '.' if alias else ''}deleted_at IS NULL", []
        now = utcnow()
        return f" AND {cls._active_memory_sql(alias)}", [now, now]

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
    def write_documents(
        self, scope: Scope, writes: list[DocumentWrite], *, actor: str, generate: bool = False,
    ) -> list[DocumentWriteResult]:
        """Make each document's `chunks` its live chunk set (and upsert its `turns`): one transaction,
        one commit for the whole batch. With `generate`, the new and edited turns of each session
        wait in the outbox for memory generation, queued in the same transaction.

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
            turns_added, fresh = self._upsert_turns(con, scope, [t for w in changed for t in w.turns], pending, now)
            if generate:
                outbox.enqueue(con, _generation_jobs(scope, fresh), now)
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
    ) -> tuple[dict[str, int], list[TurnRecord]]:
        """Insert new turns and update edited ones; returns new turns per document, and the new and
        edited turns (what memory generation has not read yet)."""
        if not turns:
            return {}, []
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
        return added, new + edited

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
        """Insert a memory with its decided relationships, in one commit (`MemoryWrites.add`); the same
        content already held by the user is returned instead (False) and nothing is written."""
        with self.memory_writes(scope, actor=actor) as writes:
            return writes.add(draft, links=links, review=review)

    def reinforce_memory(self, scope: Scope, memory_id: str, sources: tuple[str, ...], *, actor: str) -> bool:
        """The same thing said again: count it and cite the new sources; no second memory."""
        with self.memory_writes(scope, actor=actor) as writes:
            return writes.reinforce(memory_id, sources)

    @contextmanager
    def memory_writes(self, scope: Scope, *, actor: str) -> Iterator[MemoryWrites]:
        """Memory writes decided one after another (a generation pass), written together when the
        block ends: one transaction, one commit. When the block fails none of them stays, in DuckDB
        or in LanceDB."""
        writes = MemoryWrites(self, scope, actor)
        try:
            yield writes
            writes.flush()
        except BaseException:
            writes.discard()
            raise

    def drop_unflushed_memories(self, scope: Scope) -> int:
        """Remove the user's LanceDB memory rows that DuckDB does not hold: what `MemoryWrites` added
        for writes whose process died before their flush (a failure short of that takes them back
        itself). Run before a generation job is tried again; returns how many went."""
        owner = self._owner_lance(scope)
        rows = self._index.count(MEMORY_INDEX, owner)
        if not rows:
            return 0
        ids = self._index.lookup(MEMORY_INDEX, owner, ["memory_id"], rows).column("memory_id").to_pylist()
        with self._read() as con, batch.id_set(con, ids) as wanted:
            held = {r[0] for r in con.execute(f"SELECT memory_id FROM memories WHERE memory_id IN {wanted}").fetchall()}
        gone = [i for i in ids if i not in held]
        if gone:
            self._index.delete(MEMORY_INDEX, sql_in("memory_id", gone))
        return len(gone)

    def _write_memories(
        self, scope: Scope, ops: list[_NewMemory | _Reinforced], superseded: dict[str, datetime],
        pending: PendingCommit,
    ) -> None:
        """The DuckDB side of `MemoryWrites.flush`, in one transaction with set-based statements: the
        new memories (those superseded by a later one of the same unit already as past versions),
        reinforcements, EXTRACTED_FROM and decided links with what an UPDATES does to a stored target
        (`superseded`), reviews, graph rows, embedding jobs, the commit."""
        tenant, commit = scope.tenant_id, pending.commit_id
        new = [op for op in ops if isinstance(op, _NewMemory)]
        reinforced = [op for op in ops if isinstance(op, _Reinforced)]
        counts = Counter(r.memory_id for r in reinforced)
        with self._tx() as con:
            wanted = {s for op in ops for s in (op.draft.derived_from if isinstance(op, _NewMemory) else op.sources)}
            if missing := sorted(wanted - self._live_sources(con, scope, wanted)):
                raise BadInputError(f"derived_from names what {scope} does not hold: {', '.join(missing[:5])}")
            batch.insert(
                con, "memories",
                ["memory_id", "tenant_id", "user_id", "shared", "content", "content_hash", "kind", "salience",
                 "confidence", "is_latest", "valid_from", "valid_to", "expires_at", "observed_at", "event_start_at",
                 "event_end_at", "temporal_text", "tier", "metadata", "embedding_status", "created_at", "updated_at",
                 "commit_id", "reinforcement"],
                [[m.id, tenant, scope.user_id, False, m.content, n.content_hash, m.kind, m.salience, m.confidence,
                  m.is_latest, m.valid_from, m.valid_to, m.expires_at, m.observed_at, m.event_start_at, m.event_end_at,
                  m.temporal_text, "L0", json.dumps(n.draft.metadata), "pending", m.created_at, m.updated_at, commit,
                  counts.get(m.id, 0)] for n in new for m in (n.memory,)],
            )
            pending.record("memories", "insert", [n.memory.id for n in new])
            written = {n.memory.id for n in new}
            if stored := [[mid, times] for mid, times in counts.items() if mid not in written]:
                with batch.registered(con, ["memory_id", "times"], stored) as b:
                    con.execute(f"UPDATE memories SET reinforcement = coalesce(reinforcement, 0) + b.times FROM {b} b "
                                "WHERE memories.memory_id = b.memory_id")
            self._insert_links(con, scope, [row for op in ops for row in _link_rows(op)], pending)
            self._supersede(con, scope, [(n.memory.id, link, n.at) for n in new for link in n.links
                                         if link.type == "UPDATES"], superseded, pending)
            batch.insert(con, "review_queue", ["review_id", "tenant_id", "user_id", "src", "dst", "proposed_type",
                                               "confidence", "reason", "status", "created_at"],
                         [[f"rev_{uuid.uuid4().hex}", tenant, scope.user_id, n.memory.id, link.target_id, link.type,
                           link.confidence, link.reason, "open", n.at] for n in new for link in n.review])
            self._write_graph(con, scope, new, pending)
            outbox.enqueue(con, [self._embed_job(scope, "memories", n.memory.id, n.content_hash) for n in new],
                           [n.at for n in new])
            if new:
                fts.mark_dirty(con, fts.MEMORIES_FTS)
            if not pending.empty:
                write_commit(con, pending, utcnow())

    def _live_sources(self, con: duckdb.DuckDBPyConnection, scope: Scope, ids: set[str]) -> set[str]:
        """Which of `ids` are live chunks or documents of the user (what a memory may be EXTRACTED_FROM)."""
        if not ids:
            return set()
        owner, params = self._owner_sql(scope)
        with batch.id_set(con, list(ids)) as wanted:
            return {r[0] for r in con.execute(
                f"SELECT chunk_id FROM chunks WHERE {owner} AND deleted_at IS NULL AND chunk_id IN {wanted} UNION "
                f"SELECT document_id FROM source_documents WHERE {owner} AND deleted_at IS NULL "
                f"AND document_id IN {wanted}", [*params, *params]).fetchall()}

    def _insert_links(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, rows: list[list[Any]], pending: PendingCommit,
    ) -> None:
        """memory_links rows from (src, dst, type, confidence, decided_by, reason, created_at); a link
        already held stays as the commit that wrote it did (the commit lists only the new ones)."""
        tenant, commit = scope.tenant_id, pending.commit_id
        unique: dict[str, list[Any]] = {}
        for src, dst, kind, *rest in rows:
            unique.setdefault(_link_id(tenant, src, dst, kind), [tenant, src, dst, kind, *rest, commit])
        if not unique:
            return
        pending.record("memory_links", "insert", batch.insert(
            con, "memory_links", ["link_id", "tenant_id", "src", "dst", "type", "confidence", "decided_by", "reason",
                                  "created_at", "commit_id"],
            [[link_id, *row] for link_id, row in unique.items()], on_conflict_ignore=True, returning="link_id"))

    def _write_graph(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, new: list[_NewMemory], pending: PendingCommit,
    ) -> None:
        """The new memories' part of the graph, in their commit: their entities (tenant-wide, upserted),
        the memory_entities rows, the relations they state (`_graph`; those of a memory superseded in
        the same unit already retired) and their categories (tenant-wide, a key's parents created with
        it) with the memory_categories rows.

        An entity named again counts one more mention, takes the new forms of its name as aliases and
        heats up. Hotness is an exponentially decayed mention rate: each mention adds 1 after the
        previous value has decayed with a half-life of HOTNESS_HALF_LIFE_DAYS,
        `hotness * 0.5 ** (days since last_seen / 30) + 1`; the stored value is the one at last_seen
        and reads decay it to the time of reading (`entities`). The mentions of one unit are folded
        in the order its memories were written, each at its own time."""
        tenant, commit = scope.tenant_id, pending.commit_id
        mentions = [(n, ref) for n in new for ref in n.entities.values()]
        if mentions:
            with batch.id_set(con, list(dict.fromkeys(ref.entity_id for _, ref in mentions))) as ids:
                stored = {r[0]: _EntityState(*r[1:]) for r in con.execute(
                    f"SELECT entity_id, name, type, aliases, mention_count, first_seen, last_seen, hotness "
                    f"FROM entities WHERE tenant_id = ? AND entity_id IN {ids}", [tenant]).fetchall()}
            state: dict[str, _EntityState] = {}
            for n, ref in mentions:
                entity = state.get(ref.entity_id) or stored.get(ref.entity_id)
                if entity is None:
                    state[ref.entity_id] = _EntityState(ref.name, ref.type, list(ref.aliases), 1, n.at, n.at, 1.0)
                    continue
                days = max((n.at - entity.last_seen).total_seconds(), 0.0) / 86400 if entity.last_seen else 0.0
                state[ref.entity_id] = _EntityState(
                    entity.name, entity.type, _merge_aliases(entity.name, entity.aliases or [], [ref.name, *ref.aliases]),
                    entity.mention_count + 1, entity.first_seen, n.at,
                    (entity.hotness or 0.0) * 0.5 ** (days / HOTNESS_HALF_LIFE_DAYS) + 1.0)
            fresh = [eid for eid in state if eid not in stored]
            seen_again = [eid for eid in state if eid in stored]
            batch.insert(con, "entities", ["tenant_id", "entity_id", "name", "type", "aliases", "mention_count",
                                           "first_seen", "last_seen", "hotness", "commit_id"],
                         [[tenant, eid, e.name, e.type, e.aliases, e.mention_count, e.first_seen, e.last_seen,
                           e.hotness, commit] for eid in fresh for e in (state[eid],)])
            if seen_again:
                with batch.registered(con, ["entity_id", "aliases", "mention_count", "last_seen", "hotness"],
                                      [[eid, e.aliases, e.mention_count, e.last_seen, e.hotness]
                                       for eid in seen_again for e in (state[eid],)]) as b:
                    con.execute(f"UPDATE entities SET aliases = b.aliases, mention_count = b.mention_count, "
                                f"last_seen = b.last_seen, hotness = b.hotness, commit_id = ? FROM {b} b "
                                f"WHERE entities.tenant_id = ? AND entities.entity_id = b.entity_id", [commit, tenant])
            pending.record("entities", "insert", fresh)
            pending.record("entities", "update", seen_again)
            batch.insert(con, "memory_entities", ["tenant_id", "memory_id", "entity_id", "commit_id"],
                         [[tenant, n.memory.id, ref.entity_id, commit] for n, ref in mentions])
            pending.record("memory_entities", "insert", [f"{n.memory.id}|{ref.entity_id}" for n, ref in mentions])
        relations = [[tenant, rid, subject, predicate, obj, n.memory.id, confidence, n.at,
                      n.retired_at if predicate not in _VERSION_PREDICATES else None, commit]
                     for n in new for rid, (subject, predicate, obj, confidence) in n.relations.items()]
        batch.insert(con, "relations", ["tenant_id", "relation_id", "subject", "predicate", "object", "memory_id",
                                        "confidence", "created_at", "superseded_at", "commit_id"], relations)
        pending.record("relations", "insert", [r[1] for r in relations])
        paths = list(dict.fromkeys(k.rsplit("/", depth)[0] for n in new for k in n.categories
                                   for depth in range(k.count("/"), -1, -1)))
        if paths:
            with batch.id_set(con, paths) as ids:
                held = {r[0] for r in con.execute(
                    f"SELECT category_key FROM categories WHERE tenant_id = ? AND category_key IN {ids}",
                    [tenant]).fetchall()}
            added = [k for k in paths if k not in held]
            batch.insert(con, "categories", ["tenant_id", "category_key", "name", "parent_key", "commit_id"],
                         [[tenant, k, k.rsplit("/", 1)[-1], k.rsplit("/", 1)[0] if "/" in k else None, commit]
                          for k in added])
            pending.record("categories", "insert", added)
            batch.insert(con, "memory_categories", ["tenant_id", "memory_id", "category_key", "commit_id"],
                         [[tenant, n.memory.id, k, commit] for n in new for k in n.categories])
            pending.record("memory_categories", "insert", [f"{n.memory.id}|{k}" for n in new for k in n.categories])

    def _retire_relations(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, retired: dict[str, datetime], pending: PendingCommit,
    ) -> None:
        """What deleted or superseded memories (id -> since when) stated stops being current: their
        relation rows get `superseded_at` (the version chain itself, `supersedes`, stays as it is)."""
        if not retired:
            return
        with batch.registered(con, ["memory_id", "since"], [[m, at] for m, at in retired.items()]) as b:
            pending.record("relations", "update", [r[0] for r in con.execute(
                f"UPDATE relations SET superseded_at = b.since, commit_id = ? FROM {b} b "
                "WHERE relations.tenant_id = ? AND relations.memory_id = b.memory_id "
                "AND relations.superseded_at IS NULL AND relations.predicate NOT IN ('supersedes', 'superseded_by') "
                "RETURNING relation_id", [pending.commit_id, scope.tenant_id]).fetchall()])

    def _supersede(
        self, con: duckdb.DuckDBPyConnection, scope: Scope, updates: list[tuple[str, LinkDraft, datetime]],
        superseded: dict[str, datetime], pending: PendingCommit,
    ) -> None:
        """What UPDATES links (from, link, when) do besides their link rows: a `supersedes` relation row
        each; the stored memories in `superseded` (id -> since when) become past versions (is_latest
        false, valid_to then) and what they stated retires. A target written in the same unit of
        writes is inserted that way already."""
        tenant, commit = scope.tenant_id, pending.commit_id
        batch.update(con, "memories", "memory_id", ["is_latest", "valid_to", "updated_at", "commit_id"],
                     [[mid, False, at, at, commit] for mid, at in superseded.items()])
        pending.record("memories", "update", list(superseded))
        versions = [[tenant, _link_id(tenant, src, link.target_id, "supersedes"), src, "supersedes", link.target_id,
                     src, link.confidence, at, commit] for src, link, at in updates]
        if versions:  # the commit lists the rows it wrote, not those already held
            pending.record("relations", "insert", batch.insert(
                con, "relations", ["tenant_id", "relation_id", "subject", "predicate", "object", "memory_id",
                                   "confidence", "created_at", "commit_id"], versions, on_conflict_ignore=True,
                returning="relation_id"))
        self._retire_relations(con, scope, superseded, pending)

    def review_items(self, scope: Scope, *, status: str = "open", limit: int = 100) -> list[ReviewItem]:
        """The user's relationship decisions in `review_queue` with `status` (open, accepted, rejected or
        all), oldest first, each with the contents of both memories so a person can judge it."""
        if status != "all" and status not in REVIEW_STATUSES:
            raise BadInputError(f"review status must be open, accepted, rejected or all; got {status!r}")
        if limit < 1:
            raise BadInputError(f"review limit must be at least 1; got {limit}")
        where, params = self._owner_sql(scope, "r")
        if status != "all":
            where, params = f"{where} AND r.status = ?", [*params, status]
        with self._read() as con:
            rows = con.execute(f"{_REVIEW_SELECT} WHERE {where} ORDER BY r.created_at, r.review_id LIMIT ?",
                               [*params, limit]).fetchall()
        return [_review_item(r) for r in rows]

    def decide_review(
        self, scope: Scope, review_id: str, accept: bool, *, actor: str, link_type: str | None = None,
    ) -> ReviewItem:
        """A person's decision on a queued relationship, in one commit. Accepting applies the link as an
        automatic decision would (`_supersede`: an UPDATES supersedes its target), decided by 'user',
        as `link_type` when the person chose another relation; rejecting applies nothing.

        BadInputError for a review the scope does not hold (another scope's id looks just the same),
        one already decided, or, when accepting, a memory since deleted or no longer the latest."""
        chosen = None
        if link_type is not None:
            if not accept:
                raise BadInputError("a link type applies only when accepting a review")
            chosen = link_type.strip().upper()
            if chosen not in LINK_TYPES:
                raise BadInputError(f"link type must be one of {', '.join(LINK_TYPES)}; got {link_type!r}")
        now = utcnow()
        where, params = self._owner_sql(scope, "r")
        owner, owner_params = self._owner_sql(scope)
        superseded: list[str] = []
        with self._tx() as con:
            row = con.execute(f"{_REVIEW_SELECT} WHERE {where} AND r.review_id = ?", [*params, review_id]).fetchone()
            if row is None:
                raise BadInputError(f"no review {review_id} for {scope}")
            item = _review_item(row)
            if item.status != "open":
                raise BadInputError(f"review {review_id} was already {item.status}")
            verdict = "accepted" if accept else "rejected"
            applied = chosen or item.proposed_type
            pending = PendingCommit(
                scope.tenant_id, actor,
                sha256_json({"review": review_id, "decision": verdict, "type": applied if accept else None}),
                f"review {review_id} {verdict}: {item.src} {applied} {item.dst}")
            if accept:
                if applied not in LINK_TYPES:
                    raise BadInputError(f"review {review_id} proposes {applied!r}, not a link type; "
                                        f"accept it as one of {', '.join(LINK_TYPES)}")
                state = {r[0]: (r[1], r[2]) for r in con.execute(
                    f"SELECT memory_id, deleted_at IS NOT NULL, is_latest FROM memories "
                    f"WHERE {owner} AND memory_id IN (?, ?)", [*owner_params, item.src, item.dst]).fetchall()}
                for role, memory_id in (("new", item.src), ("existing", item.dst)):
                    deleted, latest = state.get(memory_id, (True, False))
                    if deleted or not latest:
                        since = "deleted" if deleted else "superseded by a newer version"
                        raise BadInputError(f"cannot accept review {review_id}: the {role} memory {memory_id} "
                                            f"has been {since} since it was queued")
                if con.execute("SELECT 1 FROM memory_links WHERE link_id = ?",
                               [_link_id(scope.tenant_id, item.src, item.dst, applied)]).fetchone():
                    raise BadInputError(f"cannot accept review {review_id}: {item.src} is already linked "
                                        f"to {item.dst} as {applied}")
                self._insert_links(con, scope, [[item.src, item.dst, applied, item.confidence, "user", item.reason,
                                                 now]], pending)
                if applied == "UPDATES":
                    superseded = [item.dst]
                    link = LinkDraft(applied, item.dst, item.confidence, item.reason)
                    self._supersede(con, scope, [(item.src, link, now)], {item.dst: now}, pending)
            con.execute("UPDATE review_queue SET status = ?, decided_at = ?, decided_by = 'user' WHERE review_id = ?",
                        [verdict, now, review_id])
            write_commit(con, pending, now)
            row = con.execute(f"{_REVIEW_SELECT} WHERE {where} AND r.review_id = ?", [*params, review_id]).fetchone()
        if superseded:
            self._index.update(MEMORY_INDEX, sql_in("memory_id", superseded), {"is_latest": False})
        return _review_item(row)

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
        self._retire_relations(con, scope, {m: now for m in orphans}, pending)
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

    def linked_memories(
        self, scope: Scope, ids: list[str], types: tuple[str, ...],
    ) -> list[tuple[str, str, str]]:
        """(src, dst, type) of the links of `types` touching any of `ids` (either end), inside the
        tenant, whose source is a memory the user owns and whose target is one too, or (for
        EXTRACTED_FROM / DERIVED_FROM) the chunk or document it came from. Lifecycle is not checked
        here: callers gate the memories they use through `fetch_memories`."""
        if not ids or not types:
            return []
        with self._read() as con, batch.id_set(con, ids) as wanted:
            return [tuple(r) for r in con.execute(
                f"""
                SELECT l.src, l.dst, l.type FROM memory_links l
                JOIN memories s ON s.memory_id = l.src AND s.tenant_id = l.tenant_id
                LEFT JOIN memories d ON d.memory_id = l.dst AND d.tenant_id = l.tenant_id
                WHERE l.tenant_id = ? AND s.user_id = ? AND {sql_in("l.type", types)}
                  AND (d.user_id = ? OR (d.memory_id IS NULL AND l.type IN ('EXTRACTED_FROM', 'DERIVED_FROM')))
                  AND (l.src IN {wanted} OR l.dst IN {wanted})
                ORDER BY l.src, l.dst, l.type
                """, [scope.tenant_id, scope.user_id, scope.user_id]).fetchall()]

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

    def fetch_memories(
        self, scope: Scope, memory_ids: list[str], *, include_history: bool = False,
    ) -> dict[str, MemoryItem]:
        """Active memories among `memory_ids`, inside the scope (the final gate before recall returns them).
        `include_history` also admits past versions and expired memories; deleted ones never."""
        if not memory_ids:
            return {}
        where, params = self._scope_sql(scope)
        gate, gate_params = self._lifecycle_sql(history=include_history)
        where, params = where + gate, [*params, *gate_params]
        with self._read() as con, batch.id_set(con, memory_ids) as ids:
            rows = con.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {where} AND memory_id IN {ids}", params,
            ).fetchall()
        return {r[0]: _memory_item(r) for r in rows}

    def current_versions(self, scope: Scope, memory_ids: list[str]) -> dict[str, MemoryItem]:
        """For each of `memory_ids` that a newer version supersedes: the active memory at the head of
        its UPDATES chain (the nearest one when the chain forks), inside the scope. Lets recall answer
        with what is true now when the query matches the wording of what was true before."""
        if not memory_ids:
            return {}
        where, params = self._scope_sql(scope, "m")
        gate, gate_params = self._lifecycle_sql("m")
        with self._read() as con, batch.id_set(con, memory_ids) as ids:
            rows = con.execute(
                f"""
                WITH RECURSIVE chain(origin, memory_id, hops) AS (
                    SELECT id, id, 0 FROM {ids}
                    UNION ALL
                    SELECT c.origin, l.src, c.hops + 1 FROM chain c
                    JOIN memory_links l ON l.dst = c.memory_id AND l.type = 'UPDATES' AND l.tenant_id = ?
                    WHERE c.hops < 16
                )
                SELECT origin, {_MEMORY_COLUMNS} FROM (
                    SELECT c.origin, c.hops, m.* FROM chain c JOIN memories m ON m.memory_id = c.memory_id
                    WHERE c.hops > 0 AND {where}{gate}
                ) ORDER BY origin, hops, memory_id
                """, [scope.tenant_id, *params, *gate_params]).fetchall()
        found: dict[str, MemoryItem] = {}
        for origin, *memory in rows:
            found.setdefault(origin, _memory_item(tuple(memory)))
        return found

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
            self._retire_relations(con, scope, {memory_id: now}, pending)
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

    # ------------------------------------------------------------------ entity graph
    # Entities and categories are tenant-wide rows; what a scope sees of them goes through the memories
    # that name them, which follow the usual visibility (the user's own and the tenant's shared ones).
    def entities(self, scope: Scope, *, limit: int = 50, order: str = "hotness") -> list[EntityRow]:
        """Entities named by a live memory the scope can see, `order`ed by hotness (decayed to now),
        mentions, recent (last seen) or name. Mention counts are the tenant's."""
        orders = {"hotness": "heat DESC", "mentions": "e.mention_count DESC", "recent": "e.last_seen DESC NULLS LAST",
                  "name": "lower(e.name)"}
        if order not in orders:
            raise BadInputError(f"entity order must be one of {', '.join(orders)}; got {order!r}")
        if limit < 1:
            raise BadInputError(f"entity limit must be at least 1; got {limit}")
        where, params = self._scope_sql(scope, "m")
        with self._read() as con:
            rows = con.execute(
                f"""
                SELECT e.entity_id, e.name, e.type, e.aliases, e.mention_count, e.first_seen, e.last_seen,
                       coalesce(e.hotness * pow(0.5, greatest(date_diff('millisecond', e.last_seen, ?), 0)
                                / 86400000.0 / ?), e.hotness) AS heat, e.commit_id
                FROM entities e
                WHERE e.tenant_id = ? AND EXISTS (
                    SELECT 1 FROM memory_entities me JOIN memories m
                      ON m.memory_id = me.memory_id AND m.tenant_id = me.tenant_id
                    WHERE me.tenant_id = e.tenant_id AND me.entity_id = e.entity_id AND {where}
                      AND m.deleted_at IS NULL)
                ORDER BY {orders[order]}, e.entity_id LIMIT ?
                """, [utcnow(), HOTNESS_HALF_LIFE_DAYS, scope.tenant_id, *params, limit]).fetchall()
        return [EntityRow(r[0], r[1], r[2], tuple(r[3] or ()), r[4], r[5], r[6], float(r[7]), r[8]) for r in rows]

    def memory_entity_ids(self, scope: Scope, memory_ids: list[str]) -> dict[str, list[str]]:
        """The entities each of `memory_ids` names (those the scope can see, deleted ones aside), the
        rarest in the tenant first: the most telling link between two memories comes first."""
        if not memory_ids:
            return {}
        where, params = self._scope_sql(scope, "m")
        with self._read() as con, batch.id_set(con, memory_ids) as ids:
            rows = con.execute(
                f"""
                SELECT me.memory_id, me.entity_id FROM memory_entities me
                JOIN memories m ON m.memory_id = me.memory_id AND m.tenant_id = me.tenant_id
                JOIN entities e ON e.tenant_id = me.tenant_id AND e.entity_id = me.entity_id
                WHERE me.tenant_id = ? AND {where} AND m.deleted_at IS NULL AND me.memory_id IN {ids}
                ORDER BY me.memory_id, e.mention_count, me.entity_id
                """, [scope.tenant_id, *params]).fetchall()
        found: dict[str, list[str]] = {}
        for memory_id, eid in rows:
            found.setdefault(memory_id, []).append(eid)
        return found

    def memories_with_entities(self, scope: Scope, entity_ids: list[str], *, limit: int = 20) -> list[str]:
        """Active, latest memories the scope can see that name any of `entity_ids`, best first: those
        sharing the rarer entities (sum of 1 / mention count), then more of them, then salience, then
        the newest."""
        if not entity_ids or limit < 1:
            return []
        where, params = self._scope_sql(scope, "m")
        now = utcnow()
        with self._read() as con, batch.id_set(con, entity_ids) as ids:
            return [r[0] for r in con.execute(
                f"""
                SELECT m.memory_id FROM memory_entities me
                JOIN memories m ON m.memory_id = me.memory_id AND m.tenant_id = me.tenant_id
                JOIN entities e ON e.tenant_id = me.tenant_id AND e.entity_id = me.entity_id
                WHERE me.tenant_id = ? AND {where} AND {self._active_memory_sql("m")} AND me.entity_id IN {ids}
                GROUP BY m.memory_id, m.salience, m.created_at
                ORDER BY sum(1.0 / greatest(e.mention_count, 1)) DESC, count(*) DESC, m.salience DESC,
                         m.created_at DESC, m.memory_id
                LIMIT ?
                """, [scope.tenant_id, *params, now, now, limit]).fetchall()]

    def relations_of(self, scope: Scope, entity_id: str, *, include_superseded: bool = False) -> list[RelationRow]:
        """Relations with `entity_id` as subject or object, stated by memories the scope can see, oldest
        first; by default only current ones (not superseded, from an active, latest memory)."""
        where, params = self._scope_sql(scope, "m")
        gate, gate_params = self._lifecycle_sql("m", history=include_superseded)
        where, params = where + gate, [*params, *gate_params]
        if not include_superseded:
            where += " AND r.superseded_at IS NULL"
        with self._read() as con:
            rows = con.execute(
                f"""
                SELECT r.relation_id, r.subject, r.predicate, r.object, r.memory_id, r.confidence, r.created_at,
                       r.superseded_at, r.commit_id
                FROM relations r JOIN memories m ON m.memory_id = r.memory_id AND m.tenant_id = r.tenant_id
                WHERE r.tenant_id = ? AND (r.subject = ? OR r.object = ?) AND {where}
                ORDER BY r.created_at, r.relation_id
                """, [scope.tenant_id, entity_id, entity_id, *params]).fetchall()
        return [RelationRow(*r) for r in rows]

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

    def claim_generation_jobs(self, limit: int) -> list[Job]:
        """Sessions with turns memory generation has not read, oldest first."""
        with self._tx() as con:
            return outbox.claim(con, GENERATE_JOB, limit, self._lease_s, utcnow())

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

    def _lance_where(self, scope: Scope, target: Target, include_history: bool = False) -> str:
        where = self._scope_lance(scope) + " AND NOT deleted"
        if target == "memories" and not include_history:
            where += f" AND is_latest AND (active_until IS NULL OR active_until > {_epoch(utcnow())})"
        return where

    def bm25_search(
        self, scope: Scope, target: Target, query: str, k: int, *, include_history: bool = False,
    ) -> list[SearchHit]:
        """BM25 hits best first, inside scope and lifecycle; LanceDB's index online, or DuckDB FTS.
        `include_history` lifts the lifecycle gate for memories (past versions, expired), never deletion."""
        if self._bm25_engine == "lancedb":  # LanceDB is thread-safe: no connection lock, so it can run in parallel
            spec = CHUNK_INDEX if target == "chunks" else MEMORY_INDEX
            found = self._index.text_search(spec, query, self._lance_where(scope, target, include_history), k)
            return [_search_hit(target, h) for h in found]
        fts_spec = fts.CHUNKS_FTS if target == "chunks" else fts.MEMORIES_FTS
        where, params = self._scope_sql(scope)
        gate, gate_params = self._lifecycle_sql(history=target == "chunks" or include_history)
        where, params = where + gate, [*params, *gate_params]
        with self._lock:
            fts.ensure_current(self._con, fts_spec, utcnow())
            return [SearchHit(target, i, score, None) for i, score in fts.search(
                self._con, fts_spec, query, where, params, k)]

    def vector_search(
        self, scope: Scope, target: Target, vector: np.ndarray, k: int, *, include_history: bool = False,
    ) -> list[SearchHit]:
        """Cosine-similarity hits best first, inside scope and lifecycle (`include_history`: as bm25_search)."""
        spec = CHUNK_INDEX if target == "chunks" else MEMORY_INDEX
        found = self._index.vector_search(spec, vector, self._lance_where(scope, target, include_history), k)
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


def _generation_jobs(scope: Scope, turns: list[TurnRecord]) -> list[Job]:
    """One job per session; its key names the turns and their text, so re-landing the same turns
    queues nothing and an edited turn is read again."""
    by_session: dict[str, list[TurnRecord]] = {}
    for turn in turns:
        by_session.setdefault(turn.document_id, []).append(turn)
    jobs = []
    for document_id, group in by_session.items():
        group.sort(key=lambda t: t.ordinal)
        digest = sha256_json([[t.turn_key, t.text] for t in group])[:24]
        jobs.append(Job(
            job_key=f"{GENERATE_JOB}:{document_id}:{digest}", tenant_id=scope.tenant_id, user_id=scope.user_id,
            kind=GENERATE_JOB, attempts=0,
            payload={"document_id": document_id, "session_id": group[0].session_id,
                     "turn_ids": [t.turn_id for t in group],
                     "first_ts": group[0].ts.isoformat() if group[0].ts else None}))
    return jobs


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


# a review with both memories (of the review's own user) and the link a person accepted
_REVIEW_SELECT = (
    "SELECT r.review_id, r.tenant_id, r.user_id, r.src, r.dst, r.proposed_type, r.confidence, r.reason, r.status, "
    "r.created_at, r.decided_at, r.decided_by, "
    "(SELECT l.type FROM memory_links l WHERE r.status = 'accepted' AND l.tenant_id = r.tenant_id "
    "AND l.src = r.src AND l.dst = r.dst AND l.decided_by = 'user' ORDER BY l.created_at DESC LIMIT 1), "
    "s.content, d.content, coalesce(s.deleted_at IS NULL AND s.is_latest, false), "
    "coalesce(d.deleted_at IS NULL AND d.is_latest, false) "
    "FROM review_queue r "
    "LEFT JOIN memories s ON s.memory_id = r.src AND s.tenant_id = r.tenant_id AND s.user_id = r.user_id "
    "LEFT JOIN memories d ON d.memory_id = r.dst AND d.tenant_id = r.tenant_id AND d.user_id = r.user_id"
)


def _review_item(row: tuple) -> ReviewItem:
    return ReviewItem(
        review_id=row[0], tenant_id=row[1], user_id=row[2], src=row[3], dst=row[4], proposed_type=row[5],
        confidence=row[6], reason=row[7], status=row[8], created_at=row[9], decided_at=row[10], decided_by=row[11],
        applied_type=row[12], src_content=row[13], dst_content=row[14], src_current=row[15], dst_current=row[16])


def _secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _link_id(tenant_id: str, src: str, dst: str, link_type: str) -> str:
    return "lnk_" + hashlib.sha256(f"{tenant_id}\x1f{src}\x1f{dst}\x1f{link_type}".encode()).hexdigest()[:24]


def _relation_id(tenant_id: str, subject: str, predicate: str, obj: str, memory_id: str) -> str:
    key = f"{tenant_id}\x1f{subject}\x1f{predicate}\x1f{obj}\x1f{memory_id}"
    return "rel_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def _merged_entities(refs: tuple[EntityRef, ...]) -> dict[str, EntityRef]:
    """A draft's entities by id, checked (`entity:<type>:<slug>` of its own type), one per id."""
    merged: dict[str, EntityRef] = {}
    for ref in refs:
        match = _ENTITY_ID.match(ref.entity_id)
        if match is None or match.group(1) != ref.type or not ref.name.strip():
            raise BadInputError(f"entity {ref.entity_id!r} ({ref.type}) is not entity:<type>:<slug> with a name")
        first = merged.get(ref.entity_id, ref)
        merged[ref.entity_id] = EntityRef(ref.entity_id, first.name, ref.type,
                                          tuple(_merge_aliases(first.name, first.aliases, [ref.name, *ref.aliases])))
    return merged


def _merge_aliases(name: str, aliases: list[str] | tuple[str, ...], forms: list[str]) -> list[str]:
    out = [a for a in dict.fromkeys(aliases) if a != name]
    out += [f for f in dict.fromkeys(forms) if f and f != name and f not in out]
    return out


@dataclass
class _NewMemory:
    """A memory `MemoryWrites.add` decided to write, as its rows will be inserted."""

    memory: MemoryItem
    content_hash: str
    draft: MemoryDraft
    at: datetime
    links: tuple[LinkDraft, ...]
    review: tuple[LinkDraft, ...]
    entities: dict[str, EntityRef]
    relations: dict[str, tuple[str, str, str, float]]  # relation id -> subject, predicate, object, confidence
    categories: list[str]
    retired_at: datetime | None = None  # superseded within the same unit of writes, at this time


@dataclass(frozen=True)
class _Reinforced:
    memory_id: str
    sources: tuple[str, ...]
    at: datetime


@dataclass(frozen=True)
class _EntityState:
    name: str
    type: str
    aliases: list[str]
    mention_count: int
    first_seen: datetime | None
    last_seen: datetime | None
    hotness: float


_VERSION_PREDICATES = ("supersedes", "superseded_by")  # the version chain: a retired memory keeps these current


class MemoryWrites:
    """Memory writes decided one after another, each against what the earlier ones left: a generation
    pass. Get one from `Store.memory_writes`.

    A write is searchable at once: its LanceDB row is added when it is decided, since LanceDB's
    full-text search reads the rows its index has not folded in yet, so the next candidate's BM25
    neighbours include it (as when every memory was its own commit; decisions depend on it). Its
    DuckDB rows wait here, seen by the reads of the pass (`fetch_memories`, the same-content check),
    until `flush` writes all of them in one transaction and one commit: some 30 statements for a
    pass instead of some 25 per memory."""

    def __init__(self, store: Store, scope: Scope, actor: str) -> None:
        self._store, self._scope, self._actor = store, scope, actor
        self._ops: list[_NewMemory | _Reinforced] = []  # in the order they were decided
        self._new: dict[str, _NewMemory] = {}
        self._superseded: dict[str, datetime] = {}  # stored memories made past versions, not flushed yet
        self._retired: set[str] = set()  # every memory made a past version here, flushed or not
        self._ahead: dict[bytes, tuple[list[Hit], bool]] = {}
        self._ahead_k = 0

    # ------------------------------------------------------------------ writes
    def add(
        self, draft: MemoryDraft, *, links: tuple[LinkDraft, ...] = (), review: tuple[LinkDraft, ...] = (),
    ) -> tuple[MemoryItem, bool]:
        """A memory with its decided relationships: `links` are applied (an UPDATES makes its target a
        past version, is_latest false and valid_to now, with a `supersedes` relation row; the others
        are link rows), `review` links wait in `review_queue` for a person; the draft's entities,
        relations and categories go with it (`Store._write_graph`). The same content the user already
        holds (stored or added here) is returned instead (False) and nothing is written."""
        store, scope = self._store, self._scope
        now = utcnow()
        content_hash = memory_content_hash(draft.content)
        if (held := self._held(content_hash, now)) is not None:
            return held, False
        targets = [link.target_id for link in (*links, *review) if link.target_id not in self._new]
        if missing := sorted(set(targets) - self._owned(targets)):
            raise BadInputError(f"links name memories {scope} does not hold: {', '.join(missing[:5])}")
        memory_id = f"mem_{uuid.uuid4().hex}"
        entities, relations, categories = _graph(scope.tenant_id, memory_id, draft)
        memory = MemoryItem(
            id=memory_id, tenant_id=scope.tenant_id, user_id=scope.user_id, content=draft.content, kind=draft.kind,
            salience=draft.salience, confidence=draft.confidence, is_latest=True, created_at=now, updated_at=now,
            valid_from=now, expires_at=draft.expires_at, observed_at=draft.observed_at or now,
            event_start_at=draft.event_start_at, event_end_at=draft.event_end_at, temporal_text=draft.temporal_text,
            embedding_status="pending", metadata=json.loads(json.dumps(draft.metadata)))  # as DuckDB gives it back
        new = _NewMemory(memory, content_hash, draft, now, links, review, entities, relations, categories)
        store._index.append(MEMORY_INDEX, _columns([_memory_row(scope, memory, content_hash)]))
        superseded = [link.target_id for link in links if link.type == "UPDATES"]
        for target in superseded:
            self._supersede(target, now)
        if superseded:
            store._index.update(MEMORY_INDEX, sql_in("memory_id", superseded), {"is_latest": False})
        self._new[memory_id] = new
        self._ops.append(new)
        return memory, True

    def reinforce(self, memory_id: str, sources: tuple[str, ...]) -> bool:
        """The same thing said again: count it and cite the new sources; False when the user does not
        hold the memory."""
        if memory_id not in self._new and not self._owned([memory_id]):
            return False
        self._ops.append(_Reinforced(memory_id, tuple(sources), utcnow()))
        return True

    def flush(self) -> None:
        """Write what is waiting in one transaction and one commit."""
        if not self._ops:
            return
        inputs = [op.content_hash if isinstance(op, _NewMemory) else
                  sha256_json({"reinforce": op.memory_id, "sources": op.sources}) for op in self._ops]
        pending = PendingCommit(self._scope.tenant_id, self._actor,
                                inputs[0] if len(inputs) == 1 else sha256_json(inputs), _message(self._ops))
        self._store._write_memories(self._scope, self._ops, self._superseded, pending)
        self._ops, self._new, self._superseded = [], {}, {}

    def discard(self) -> None:
        """Take back from LanceDB what waiting writes put there (DuckDB never saw them)."""
        index = self._store._index
        if self._new:
            index.delete(MEMORY_INDEX, sql_in("memory_id", list(self._new)))
        if self._superseded:
            with self._store._read() as con, batch.id_set(con, list(self._superseded)) as ids:
                latest = [r[0] for r in con.execute(
                    f"SELECT memory_id FROM memories WHERE is_latest AND memory_id IN {ids}").fetchall()]
            if latest:
                index.update(MEMORY_INDEX, sql_in("memory_id", latest), {"is_latest": True})
        self._ops, self._new, self._superseded = [], {}, {}

    def _supersede(self, memory_id: str, now: datetime) -> None:
        new = self._new.get(memory_id)
        if new is None:
            self._superseded.setdefault(memory_id, now)
        elif new.retired_at is None:
            new.memory = new.memory.model_copy(update={"is_latest": False, "valid_to": now, "updated_at": now})
            new.retired_at = now
        self._retired.add(memory_id)

    # ------------------------------------------------------------------ reads, waiting writes included
    def fetch_memories(self, memory_ids: list[str]) -> dict[str, MemoryItem]:
        """`Store.fetch_memories` (active memories among the ids, inside the scope), with the writes
        still waiting: their memories, and the stored ones they made past versions."""
        now = utcnow()
        stored = self._store.fetch_memories(self._scope, [m for m in memory_ids if m not in self._new])
        found = {mid: m for mid, m in stored.items() if mid not in self._superseded}
        wanted = set(memory_ids)
        found.update((mid, n.memory) for mid, n in self._new.items() if mid in wanted and n.memory.active_at(now))
        return found

    def bm25_search(self, query: str, k: int) -> list[SearchHit]:
        """`Store.bm25_search` over the scope's memories, the writes made here included. DuckDB's FTS
        reads committed rows only, so with that engine what is waiting is flushed first."""
        if self._store._bm25_engine == "duckdb":
            self.flush()
        return self._store.bm25_search(self._scope, "memories", query, k)

    def search_ahead(self, vectors: list[np.ndarray], k: int) -> None:
        """Vector hits for what the pass will search, in one query: `vector_search` answers from them.
        The writes here never change the vectors a search finds (a new memory waits for its vector
        until the embedding worker); they only make stored memories past versions, dropped from the
        hits, so each vector's search takes 2k hits."""
        where = self._store._lance_where(self._scope, "memories")
        found = self._store._index.vector_search_many(MEMORY_INDEX, vectors, where, 2 * k, ("active_until",))
        self._ahead = {v.tobytes(): (hits, len(hits) == 2 * k) for v, hits in zip(vectors, found)}
        self._ahead_k = k

    def vector_search(self, vector: np.ndarray, k: int) -> list[SearchHit]:
        """`Store.vector_search` over the scope's memories, from `search_ahead`'s hits when they still
        hold k current ones (a search of its own otherwise)."""
        ahead = self._ahead.get(vector.tobytes()) if k == self._ahead_k else None
        if ahead is not None:
            hits, more = ahead
            now = _epoch(utcnow())
            current = [(mid, score) for mid, score, payload in hits if mid not in self._retired
                       and (payload["active_until"] is None or payload["active_until"] > now)]
            if len(current) >= k or not more:
                return [SearchHit("memories", mid, score, None) for mid, score in current[:k]]
        return self._store.vector_search(self._scope, "memories", vector, k)

    def _held(self, content_hash: str, now: datetime) -> MemoryItem | None:
        """The user's active memory with this content, added here or stored (one at most: writes dedupe)."""
        for n in self._new.values():
            if n.content_hash == content_hash and n.memory.active_at(now):
                return n.memory
        owner, params = self._store._owner_sql(self._scope)
        gate, gate_params = self._store._lifecycle_sql()
        with self._store._read() as con:
            rows = con.execute(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {owner} AND content_hash = ?{gate}",
                               [*params, content_hash, *gate_params]).fetchall()
        return next((_memory_item(r) for r in rows if r[0] not in self._superseded), None)

    def _owned(self, memory_ids: list[str]) -> set[str]:
        """Which of `memory_ids` the user holds stored, not deleted."""
        if not memory_ids:
            return set()
        owner, params = self._store._owner_sql(self._scope)
        with self._store._read() as con, batch.id_set(con, memory_ids) as ids:
            return {r[0] for r in con.execute(
                f"SELECT memory_id FROM memories WHERE {owner} AND deleted_at IS NULL AND memory_id IN {ids}",
                params).fetchall()}


def _message(ops: list[_NewMemory | _Reinforced]) -> str:
    added = sum(isinstance(op, _NewMemory) for op in ops)
    reinforced = len(ops) - added
    parts = ["add memory" if added == 1 else f"add {added} memories"] if added else []
    if reinforced:
        parts.append("reinforce memory" if reinforced == 1 else f"reinforce {reinforced} memories")
    return "; ".join(parts)


def _link_rows(op: _NewMemory | _Reinforced) -> list[list[Any]]:
    """(src, dst, type, confidence, decided_by, reason, created_at) of what one write links: the
    EXTRACTED_FROM links to its sources, then a new memory's decided links."""
    if isinstance(op, _Reinforced):
        return [[op.memory_id, dst, "EXTRACTED_FROM", 1.0, "auto", None, op.at] for dst in sorted(set(op.sources))]
    return ([[op.memory.id, dst, "EXTRACTED_FROM", 1.0, "auto", None, op.at] for dst in sorted(set(op.draft.derived_from))]
            + [[op.memory.id, link.target_id, link.type, link.confidence, "auto", link.reason, op.at] for link in op.links])


def _graph(
    tenant_id: str, memory_id: str, draft: MemoryDraft,
) -> tuple[dict[str, EntityRef], dict[str, tuple[str, str, str, float]], list[str]]:
    """A draft's entities (`_merged_entities`), the relations it states by relation id (THIS_MEMORY is
    the memory) and its category keys, checked: BadInputError before anything is written."""
    entities = _merged_entities(draft.entities)
    relations: dict[str, tuple[str, str, str, float]] = {}
    for r in draft.relations:
        if r.predicate not in PREDICATES:
            raise BadInputError(f"relation predicate must be one of {', '.join(PREDICATES)}; got {r.predicate!r}")
        if r.subject != THIS_MEMORY and not r.subject.startswith("entity:"):
            raise BadInputError(f"a relation's subject is an entity of the memory or the memory; got {r.subject!r}")
        named = [end for end in (r.subject, r.object) if end.startswith("entity:") and end not in entities]
        if named:
            raise BadInputError(f"relation names entities the memory does not: {', '.join(named)}")
        if not r.object.strip() or not 0.0 <= r.confidence <= 1.0:
            raise BadInputError(f"relation needs an object and a confidence in [0, 1]: {r!r}")
        subject = memory_id if r.subject == THIS_MEMORY else r.subject
        obj = memory_id if r.object == THIS_MEMORY else r.object.strip()
        relations[_relation_id(tenant_id, subject, r.predicate, obj, memory_id)] = (subject, r.predicate, obj,
                                                                                   r.confidence)
    keys = list(dict.fromkeys(k.strip() for k in draft.categories))
    if bad := [k for k in keys if not _CATEGORY_KEY.match(k)]:
        raise BadInputError(f"category keys are lowercase 'a/b' paths; got {', '.join(map(repr, bad[:5]))}")
    return entities, relations, keys


def memory_content_hash(content: str) -> str:
    """Exact repeats are the same memory: compare whitespace-collapsed, case-folded text."""
    normal = " ".join(content.split()).casefold()
    return hashlib.sha256(normal.encode()).hexdigest()
