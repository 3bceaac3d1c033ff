"""Documents, chunks and turns: what ingestion writes (one transaction and one commit per batch,
its derived work queued in the outbox in the same transaction), deletes at the source, and
records as ingest errors."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import duckdb

from mnemoflow.models import (
    ChunkRecord,
    DeletionResult,
    DocumentRecord,
    DocumentWrite,
    DocumentWriteResult,
    IngestErrorRecord,
    TurnRecord,
)
from mnemoflow.storage import batch, fts, outbox
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.connection import table_exists
from mnemoflow.storage.lance_index import CHUNK_INDEX
from mnemoflow.storage.links import orphaned_memories
from mnemoflow.errors import VectorsUnavailableError
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import chunk_index_row, columns, search_text
from mnemoflow.storage.scope import SCOPE_COLUMNS, Scope, owned, row_scope, tenant
from mnemoflow.storage.search import mark_deleted
from mnemoflow.storage.vectors import GENERATE_JOB, embed_job, generation_jobs
from mnemoflow.timeutil import utcnow


log = logging.getLogger("mnemoflow.storage")


def _chunk_row(scope: Scope, chunk: ChunkRecord, document: DocumentRecord) -> dict[str, Any]:
    return chunk_index_row(scope, chunk.chunk_id, chunk.text, chunk.context, chunk.content_hash,
                           json.dumps(chunk.locator), False, document.document_id, document.title,
                           document.uri, document.connector)


class Documents(Room):
    @contextmanager
    def landing(self) -> Iterator[Any]:
        """A dlt run's turn at the store: one pipeline at a time per process, because two pipelines
        creating the same landing tables at once conflict in DuckDB's catalog; on a shared store one
        at a time across processes too (dlt stages a merge in one staging table per dataset). Yields
        the destination (`dlt_destination`)."""
        with self._landing:
            if self._db.postgres is None:
                yield self.dlt_destination()
                return
            with self._db.postgres.landing_lock():
                yield self.dlt_destination()
            with self._db.read() as con:  # the tables dlt created are new to DuckDB's catalog cache
                con.execute("CALL pg_clear_cache()")

    def dlt_destination(self) -> Any:
        """The dlt destination of the raw landing tables: this store's file (dlt gets its own cursor, same
        database, separate session state: it changes the search path, which must not leak into the
        store's connection), or on a shared store its PostgreSQL database, written by dlt's own
        postgres destination."""
        import dlt

        if self._db.postgres is not None:
            from dlt.destinations.impl.postgres.configuration import PostgresCredentials

            credentials = PostgresCredentials()
            credentials.parse_native_representation(self._db.postgres.url)
            if credentials.password is None:  # a server that trusts the connection needs none; dlt wants one
                credentials.password = ""
            credentials.resolve()
            return dlt.destinations.postgres(credentials=credentials)
        return dlt.destinations.duckdb(self._db.con.cursor())

    def landed_turns(self, scope: Scope) -> list[dict[str, Any]]:
        """Landed transcript turns of the scope that are new or changed since they were last processed.

        All of them, not only the last run's: a run that died after landing is finished by the next.
        """
        if not scope.user_level:
            return []  # conversations land per user only (`connectors.conversations`): none for this scope
        mine, params = owned(scope, "r")
        with self._db.read() as con:
            if not table_exists(con, "raw_conversations", "turns"):
                return []
            cur = con.execute(
                f"""
                SELECT r.file_url, r.line_no, r.session_id, r.turn_id, r.speaker, r.role, r.ts, r.text,
                       CAST(r.metadata AS VARCHAR) AS metadata
                FROM raw_conversations.turns r
                WHERE {mine}
                  AND NOT EXISTS (
                    SELECT 1 FROM turns t
                    WHERE t.tenant_id = r.tenant_id AND t.user_id = r.user_id AND t.turn_id = r.turn_id
                      AND t.text = r.text AND (t.session_id = r.session_id OR t.source_uri = r.file_url))
                ORDER BY r.file_url, r.line_no
                """, params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]

    def queue_generation_backfill(self, tenant_id: str | None = None) -> int:
        """Queue memory generation for every conversation session (of one tenant, or all) that no
        generation job has read: landed while generation was off, or before it existed. Returns the
        sessions queued; a session already read is never queued again."""
        where, params = tenant(tenant_id, "t") if tenant_id is not None else ("true", [])
        stamp = ", ".join(f"t.{c}" for c in SCOPE_COLUMNS)
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {stamp}, t.turn_key, t.document_id, t.session_id, t.turn_id, t.ordinal, t.role, t.speaker, "
                f"t.ts, t.text, CAST(t.metadata AS VARCHAR), t.source_uri FROM turns t WHERE {where} AND NOT EXISTS ("
                f"SELECT 1 FROM outbox o WHERE o.kind = '{GENERATE_JOB}' AND o.tenant_id = t.tenant_id "
                "AND json_extract_string(o.payload, '$.document_id') = t.document_id) ORDER BY t.document_id, t.ordinal",
                params).fetchall()
        width = len(SCOPE_COLUMNS)
        by_scope: dict[Scope, list[TurnRecord]] = {}
        for r in rows:
            t = r[width:]
            by_scope.setdefault(row_scope(r[:width]), []).append(TurnRecord(
                t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], json.loads(t[9]) if t[9] else None, t[10]))
        queued = 0
        for scope, turns in by_scope.items():
            jobs = generation_jobs(scope, turns)
            with self._db.tx() as con:
                outbox.enqueue(con, jobs, utcnow())
            queued += len(jobs)
        return queued

    def landed_file_session(self, scope: Scope, file_url: str, session_id: str) -> list[dict[str, Any]]:
        """Every landed turn of one session of one file (read whole when it becomes a conversation of
        its own beside another file's with the same ids), in file order."""
        mine, params = owned(scope, "r")
        with self._db.read() as con:
            if not table_exists(con, "raw_conversations", "turns"):
                return []
            cur = con.execute(
                f"SELECT r.file_url, r.line_no, r.session_id, r.turn_id, r.speaker, r.role, r.ts, r.text, "
                f"CAST(r.metadata AS VARCHAR) AS metadata FROM raw_conversations.turns r "
                f"WHERE {mine} AND r.file_url = ? AND r.session_id = ? ORDER BY r.line_no",
                [*params, file_url, session_id])
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]

    def conversations_of(self, scope: Scope, session_id: str) -> dict[str, list[TurnRecord]]:
        """The turns of a session id and of the conversations that reuse it (`<session_id>@<file>`),
        by the session they were written under, each in order."""
        where, params = owned(scope)
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT turn_key, document_id, session_id, turn_id, ordinal, role, speaker, ts, text, "
                f"CAST(metadata AS VARCHAR), source_uri FROM turns WHERE {where} "
                "AND (session_id = ? OR starts_with(session_id, ?)) ORDER BY session_id, ordinal",
                [*params, session_id, f"{session_id}@"]).fetchall()
        found: dict[str, list[TurnRecord]] = {}
        for r in rows:
            found.setdefault(r[2], []).append(
                TurnRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], json.loads(r[9]) if r[9] else None,
                           r[10]))
        return found

    def session_turns(self, scope: Scope, document_id: str) -> list[TurnRecord]:
        where, params = owned(scope)
        with self._db.read() as con:
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
        with self._db.tx(pending.tenant_id) as con:
            with batch.id_set(con, [w.document.document_id for w in writes]) as ids:
                found = {
                    r[0]: r[1:] for r in con.execute(
                        f"SELECT document_id, content_hash, deleted_at, {', '.join(SCOPE_COLUMNS)} "
                        f"FROM source_documents WHERE document_id IN {ids}").fetchall()
                }
            for w in writes:
                doc = w.document
                hit = found.get(doc.document_id)
                if hit is not None and tuple(hit[2:]) != tuple(scope.stamp().values()):
                    raise ValueError(f"document id {doc.document_id} already belongs to another scope")
                if hit is not None and hit[0] == doc.content_hash and hit[1] is None:
                    results[doc.document_id] = DocumentWriteResult(doc.document_id, None, 0, 0, 0)
                else:
                    changed.append(w)
            if not changed:
                return [results[w.document.document_id] for w in writes]
            self._upsert_documents(con, scope, [w.document for w in changed], set(found), pending, now)
            turns_added, fresh = self._upsert_turns(con, scope, [t for w in changed for t in w.turns], pending, now)
            if generate:
                outbox.enqueue(con, generation_jobs(scope, fresh), now)
            diff = self._replace_chunks(con, scope, changed, pending, now)
            for w in changed:
                added, revived, gone, recontext = diff[w.document.document_id]
                embed += [(c, w.document) for c in added + revived]
                removed += gone
                recontexted += recontext
                results[w.document.document_id] = DocumentWriteResult(
                    w.document.document_id, pending.commit_id, turns_added.get(w.document.document_id, 0),
                    len(added) + len(revived), len(gone))
            outbox.enqueue(con, [embed_job(self._index.model, scope, "chunks", c.chunk_id, c.content_hash) for c, _ in embed], now)
            orphaned = orphaned_memories(con, scope, removed, pending, now)
            write_commit(con, pending, now)
            fts.mark_dirty(con, fts.CHUNKS_FTS)
        try:
            if embed:
                self._index.upsert(CHUNK_INDEX, columns([_chunk_row(scope, c, d) for c, d in embed]))
            mark_deleted(self._index, removed, orphaned)
            if recontexted:  # the turn before an appended one: new search text, same vector
                self._index.update_columns(CHUNK_INDEX, {
                    "chunk_id": [c.chunk_id for c in recontexted],
                    "text": [search_text(c.text, c.context) for c in recontexted]})
        except VectorsUnavailableError as exc:
            # the write stands: each new chunk's embedding job writes its whole index row once the bucket
            # answers, and meanwhile the system of record gates (and keyword-searches) every read
            log.warning("documents written, their index rows wait for the vectors: %s", exc)
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
            ["document_id", *SCOPE_COLUMNS, "shared", "connector", "uri", "mime", "title", "content_hash",
             "metadata", "commit_id", "created_at"],
            [[d.document_id, *scope.stamp().values(), False, *row(d), now] for d in fresh],
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
            ["turn_key", *SCOPE_COLUMNS, "document_id", "session_id", "turn_id", "ordinal", "role",
             "speaker", "ts", "text", "metadata", "source_uri", "created_at", "commit_id"],
            [[t.turn_key, *scope.stamp().values(), t.document_id, t.session_id, t.turn_id, t.ordinal,
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
        within, params = tenant(scope.tenant_id)
        with batch.id_set(con, [w.document.document_id for w in writes]) as ids:
            rows = con.execute(
                f"SELECT document_id, chunk_id, deleted_at, context FROM chunks "
                f"WHERE {within} AND document_id IN {ids}", params).fetchall()
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
            ["chunk_id", *SCOPE_COLUMNS, "shared", "document_id", "ordinal", "text", "context",
             "content_hash", "token_count", "locator", "score", "embedding_status", "created_at", "commit_id"],
            [[c.chunk_id, *scope.stamp().values(), False, c.document_id, c.ordinal, c.text, c.context,
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
        with self._db.tx() as con:
            batch.insert(
                con, "ingest_errors",
                ["error_id", *SCOPE_COLUMNS, "connector", "uri", "kind", "reason", "detail", "created_at"],
                [[f"err_{uuid.uuid4().hex}", *scope.stamp().values(), e.connector, e.uri, e.kind, e.reason,
                  e.detail, now] for e in errors],
            )

    def ingest_errors(self, scope: Scope) -> list[IngestErrorRecord]:
        where, params = owned(scope)
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT connector, uri, kind, reason, detail FROM ingest_errors WHERE {where} ORDER BY created_at",
                params,
            ).fetchall()
        return [IngestErrorRecord(*r) for r in rows]

    def documents_under(self, scope: Scope, connector: str, uri_prefix: str) -> dict[str, tuple[str, str]]:
        """Live documents of the user from `connector` whose URI starts with `uri_prefix`:
        uri -> (document_id, content_hash)."""
        mine, params = owned(scope)
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT uri, document_id, content_hash FROM source_documents WHERE {mine} AND connector = ? "
                "AND deleted_at IS NULL AND starts_with(uri, ?)", [*params, connector, uri_prefix]).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    def documents_from_files(self, scope: Scope, folder_uri: str) -> dict[str, list[str]]:
        """The user's live documents read from files under `folder_uri` (a URL ending in '/'), each with
        the file URLs it came from: a file's own (an attachment's: its parent file's), or the transcript
        files of a conversation session. What `ingest` retires when those files are gone."""
        mine, params = owned(scope)
        with self._db.read() as con:
            rows = con.execute(
                f"""
                SELECT document_id, uri, CAST(json_extract(metadata, '$.source_uris') AS VARCHAR[])
                FROM source_documents WHERE {mine} AND deleted_at IS NULL AND (starts_with(uri, ?) OR list_bool_or(
                    [starts_with(u, ?) FOR u IN coalesce(CAST(json_extract(metadata, '$.source_uris') AS VARCHAR[]),
                                                          [])]))
                """, [*params, folder_uri, folder_uri]).fetchall()
        return {doc: list(files) if files else [uri.split("#attachment=", 1)[0]] for doc, uri, files in rows}

    def document_family(self, scope: Scope, document_id: str) -> list[str]:
        """A live document the owner holds and the attachments read from it (documents of their own), the
        document first; empty when the owner holds no such live document."""
        mine, params = owned(scope)
        with self._db.read() as con:
            row = con.execute(f"SELECT uri FROM source_documents WHERE {mine} AND deleted_at IS NULL "
                              "AND document_id = ?", [*params, document_id]).fetchone()
            if row is None:
                return []
            inside = con.execute(f"SELECT document_id FROM source_documents WHERE {mine} AND deleted_at IS NULL "
                                 "AND starts_with(uri, ?) ORDER BY uri", [*params, f"{row[0]}#attachment="]).fetchall()
        return [document_id, *(r[0] for r in inside)]

    def document_owner(self, tenant_id: str, document_id: str) -> Scope | None:
        """The scope that ingested a document of the tenant (as `memory_owner` for a memory)."""
        within, params = tenant(tenant_id)
        with self._db.read() as con:
            row = con.execute(f"SELECT {', '.join(SCOPE_COLUMNS)} FROM source_documents WHERE {within} "
                              "AND document_id = ?", [*params, document_id]).fetchone()
        return row_scope(row) if row else None

    def delete_documents(self, scope: Scope, document_ids: list[str], *, actor: str) -> DeletionResult:
        """Soft-delete the user's documents, their chunks and the memories extracted only from them:
        one commit. Recall stops returning all of it; history keeps it."""
        if not document_ids:
            return DeletionResult()
        now = utcnow()
        mine, params = owned(scope)
        pending = PendingCommit(scope.tenant_id, actor, sha256_json(sorted(document_ids)),
                                f"delete {len(document_ids)} documents")
        with self._db.tx(pending.tenant_id) as con:
            with batch.id_set(con, document_ids) as ids:
                documents = [r[0] for r in con.execute(
                    f"SELECT document_id FROM source_documents WHERE {mine} AND deleted_at IS NULL "
                    f"AND document_id IN {ids}", params).fetchall()]
            if not documents:
                return DeletionResult()
            with batch.id_set(con, documents) as ids:
                chunks = [r[0] for r in con.execute(
                    f"SELECT chunk_id FROM chunks WHERE {mine} AND deleted_at IS NULL AND document_id IN {ids}",
                    params).fetchall()]
            batch.update(con, "source_documents", "document_id", ["deleted_at", "commit_id"],
                         [[d, now, pending.commit_id] for d in documents])
            batch.update(con, "chunks", "chunk_id", ["deleted_at", "commit_id"],
                         [[c, now, pending.commit_id] for c in chunks])
            pending.record("source_documents", "delete", documents)
            pending.record("chunks", "delete", chunks)
            memories = orphaned_memories(con, scope, documents + chunks, pending, now)
            write_commit(con, pending, now)
            fts.mark_dirty(con, fts.CHUNKS_FTS)
        mark_deleted(self._index, chunks, memories)
        return DeletionResult(len(documents), len(chunks), len(memories))

    def turn_chunk_ids(self, scope: Scope, session_id: str) -> dict[str, list[str]]:
        """The live chunks of each turn of a session (what a memory drawn from the turn cites)."""
        mine, params = owned(scope)
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT json_extract_string(locator, '$.turns[0].turn_id'), chunk_id FROM chunks "
                f"WHERE {mine} AND deleted_at IS NULL AND json_extract_string(locator, '$.session_id') = ? "
                "ORDER BY ordinal", [*params, session_id]).fetchall()
        found: dict[str, list[str]] = {}
        for turn_id, chunk_id in rows:
            found.setdefault(turn_id, []).append(chunk_id)
        return found
