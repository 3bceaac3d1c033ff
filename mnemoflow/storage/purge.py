"""Hard deletion: what was deleted or archived for longer than the retention period, and whole
tenants, removed for good from DuckDB (with everything derived from it), LanceDB and both BM25
indexes. One commit per tenant records each purge: it names the rows that went, with no digest.

Kept on purpose: the commit chain (ids and digests, no text; `mnemoflow verify` still passes),
revoked API keys (hashes) and `tenant_deletions`, the record that a tenant asked to go. The
embedding cache keeps a vector only while some row, of any tenant, still has that content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import duckdb

from mnemoflow.storage import batch, fts
from mnemoflow.storage.commits import TRACKED_TABLES, PendingCommit, sha256_json, write_commit
from mnemoflow.storage.lance_index import CHUNK_INDEX, EMBEDDING_CACHE, MEMORY_INDEX, sql_in
from mnemoflow.storage.lifecycle import LANCE_ID_BATCH
from mnemoflow.storage.room import Room
from mnemoflow.storage.rules import purge_rules_of
from mnemoflow.storage.scope import check_id, lance_tenant, tenant
from mnemoflow.timeutil import utcnow

# rows a tenant deletion keeps: the chain that records it, the revoked keys, the deletion itself
KEPT_TABLES = frozenset({"commits", "api_keys", "tenant_deletions"})
DELETED_MARKS = ("memories", "source_documents", "chunks")  # what a tenant deletion soft-deletes first


@dataclass
class PurgeResult:
    """What one purge removed, by table (DuckDB rows, LanceDB rows, cache vectors)."""

    tenant_id: str
    commit_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not any(self.counts.values())


@dataclass(frozen=True)
class _Gone:
    """The rows a purge of retired data removes, found before anything is deleted."""

    memories: dict[str, str]  # memory_id -> content_hash
    documents: list[tuple[str, str, str]]  # (document_id, user_id, uri)
    chunks: dict[str, str]  # chunk_id -> content_hash

    @property
    def empty(self) -> bool:
        return not (self.memories or self.documents or self.chunks)


def _delete(con: duckdb.DuckDBPyConnection, table: str, where: str, params: list, returning: str) -> list[str]:
    return batch.delete_returning(con, table, where, params, returning)


def _tenant_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(schema, table) of every base table with a tenant_id column: the system of record, its derived
    tables and the raw landing tables of the connectors (dlt's staging copies included)."""
    return [(r[0], r[1]) for r in con.execute(
        "SELECT c.table_schema, c.table_name FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
        "WHERE c.column_name = 'tenant_id' AND t.table_type = 'BASE TABLE' ORDER BY 1, 2").fetchall()]


def _columns(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> set[str]:
    return {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                      "WHERE table_schema = ? AND table_name = ?", [schema, table]).fetchall()}


class Purge(Room):
    # ------------------------------------------------------------------ retired rows
    def purge_retired(self, tenant_id: str, cutoff: datetime, *, actor: str) -> PurgeResult:
        """Remove for good the tenant's memories deleted or archived before `cutoff`, its documents
        deleted before then (their chunks and turns) and chunks retired from a changed document, with
        everything derived from them: links to or from them, what only they named (entities,
        categories), the relations they stated, their reviews, summaries citing them, the profiles of
        their users (rebuilt from what is left by the `profiles` job), their outbox jobs, ingest errors
        and raw landing rows, and their LanceDB rows. `settle_purges` then rebuilds the indexes."""
        result = PurgeResult(check_id("tenant_id", tenant_id))
        pending = PendingCommit(tenant_id, actor, sha256_json({"purge": tenant_id, "before": cutoff.isoformat()}),
                                f"purge what was retired before {cutoff:%Y-%m-%d %H:%M}")
        now = utcnow()
        with self._db.tx(pending.tenant_id) as con:
            gone = self._retired(con, tenant_id, cutoff)
            if gone.empty:
                return result
            self._purge_rows(con, tenant_id, gone, pending, result.counts)
            write_commit(con, pending, now)
        result.commit_id = pending.commit_id
        self._purge_vectors(tenant_id, list(gone.memories), list(gone.chunks),
                            set(gone.memories.values()) | set(gone.chunks.values()), result.counts)
        return result

    def _retired(self, con: duckdb.DuckDBPyConnection, tenant_id: str, cutoff: datetime) -> _Gone:
        within, params = tenant(tenant_id)
        memories = dict(con.execute(
            f"SELECT memory_id, content_hash FROM memories WHERE {within} AND (deleted_at < ? OR archived_at < ?)",
            [*params, cutoff, cutoff]).fetchall())
        documents = [tuple(r) for r in con.execute(
            f"SELECT document_id, user_id, uri FROM source_documents WHERE {within} AND deleted_at < ?",
            [*params, cutoff]).fetchall()]
        with batch.id_set(con, [d[0] for d in documents]) as docs:
            chunks = dict(con.execute(
                f"SELECT chunk_id, content_hash FROM chunks WHERE {within} AND (deleted_at < ? OR document_id IN {docs})",
                [*params, cutoff]).fetchall())
        return _Gone(memories, documents, chunks)  # type: ignore[arg-type]

    def _purge_rows(
        self, con: duckdb.DuckDBPyConnection, tenant_id: str, gone: _Gone, pending: PendingCommit,
        counts: dict[str, int],
    ) -> None:
        within, params = tenant(tenant_id)
        memories, chunks = list(gone.memories), list(gone.chunks)
        documents = [d[0] for d in gone.documents]
        with batch.id_set(con, memories) as m, batch.id_set(con, chunks + documents) as sources, \
                batch.id_set(con, memories + chunks + documents) as everything, batch.id_set(con, documents) as d:
            users = [r[0] for r in con.execute(
                f"SELECT DISTINCT user_id FROM memories WHERE {within} AND memory_id IN {m}", params).fetchall()]
            purged = {
                "memory_links": _delete(con, "memory_links", f"{within} AND (src IN {m} OR dst IN {m} "
                                        f"OR dst IN {sources})", params, "link_id"),
                "memory_entities": _delete(con, "memory_entities", f"{within} AND memory_id IN {m}", params,
                                           "memory_id || '|' || entity_id"),
                "memory_categories": _delete(con, "memory_categories", f"{within} AND memory_id IN {m}", params,
                                             "memory_id || '|' || category_key"),
                "relations": _delete(con, "relations", f"{within} AND (memory_id IN {m} OR subject IN {m} "
                                     f"OR object IN {m})", params, "relation_id"),
                "memories": _delete(con, "memories", f"{within} AND memory_id IN {m}", params, "memory_id"),
                **purge_rules_of(con, tenant_id, m, pending),
            }
            named = {r.split("|", 1)[1] for r in purged["memory_entities"]}
            filed = {r.split("|", 1)[1] for r in purged["memory_categories"]}
            purged["entities"] = self._unnamed_entities(con, tenant_id, named)
            purged["categories"] = self._unused_categories(con, tenant_id, filed)
            counts["review_queue"] = len(_delete(con, "review_queue", f"{within} AND (src IN {m} OR dst IN {m})",
                                                 params, "review_id"))
            cited, cited_params = tenant(tenant_id, "s")
            counts["summaries"] = len(_delete(
                con, "summaries", f"{within} AND summary_id IN (SELECT s.summary_id FROM summaries s, "
                f"unnest(s.child_ids) AS u(child) WHERE {cited} AND u.child IN {everything})",
                [*params, *cited_params], "summary_id"))
            with batch.registered(con, ["user_id"], [[u] for u in users]) as u:
                counts["profiles"] = len(_delete(con, "profiles", f"{within} AND EXISTS (SELECT 1 FROM {u} b "
                                                 "WHERE b.user_id = profiles.user_id)", params, "user_id"))
            counts["outbox"] = len(_delete(con, "outbox", f"{within} AND (json_extract_string(payload, '$.id') IN "
                                           f"{everything} OR json_extract_string(payload, '$.document_id') IN {d})",
                                           params, "job_key"))
            counts["raw"] = self._purge_landing(con, tenant_id, gone.documents)
            purged["turns"] = _delete(con, "turns", f"{within} AND document_id IN {d}", params, "turn_key")
            purged["chunks"] = _delete(con, "chunks", f"{within} AND chunk_id IN {sources}", params, "chunk_id")
            purged["source_documents"] = _delete(con, "source_documents", f"{within} AND document_id IN {d}", params,
                                                 "document_id")
        for table, ids in purged.items():
            pending.record_purged(table, ids)
            counts[table] = len(ids)
        if purged["memories"]:
            fts.mark_dirty(con, fts.MEMORIES_FTS)
        if purged["chunks"]:
            fts.mark_dirty(con, fts.CHUNKS_FTS)

    @staticmethod
    def _unnamed_entities(con: duckdb.DuckDBPyConnection, tenant_id: str, entity_ids: set[str]) -> list[str]:
        """Of `entity_ids`, those no memory names any more: they go with the last memory naming them."""
        within, params = tenant(tenant_id, "entities")
        with batch.id_set(con, sorted(entity_ids)) as ids:
            named = ("SELECT 1 FROM memory_entities me WHERE me.tenant_id = entities.tenant_id "
                     "AND me.entity_id = entities.entity_id")
            return _delete(con, "entities", f"{within} AND entity_id IN {ids} AND NOT EXISTS ({named})", params,
                           "entity_id")

    @staticmethod
    def _unused_categories(con: duckdb.DuckDBPyConnection, tenant_id: str, keys: set[str]) -> list[str]:
        """Of `keys` and their parents, those no memory is filed under and no category hangs from,
        leaves first."""
        within, params = tenant(tenant_id, "categories")
        wanted = {k.rsplit("/", depth)[0] for k in keys for depth in range(k.count("/") + 1)}
        removed: list[str] = []
        while wanted:
            with batch.id_set(con, sorted(wanted)) as ids:
                filed = ("SELECT 1 FROM memory_categories mc WHERE mc.tenant_id = categories.tenant_id "
                         "AND mc.category_key = categories.category_key")
                parent = ("SELECT 1 FROM categories c WHERE c.tenant_id = categories.tenant_id "
                          "AND c.parent_key = categories.category_key")
                gone = _delete(con, "categories", f"{within} AND category_key IN {ids} AND NOT EXISTS ({filed}) "
                               f"AND NOT EXISTS ({parent})", params, "category_key")
            if not gone:
                break
            removed += gone
            wanted -= set(gone)
        return removed

    @staticmethod
    def _purge_landing(con: duckdb.DuckDBPyConnection, tenant_id: str, documents: list[tuple[str, str, str]]) -> int:
        """Raw landing rows the purged documents were read from: a file's row (its URI, attachments
        aside), or a conversation session's turns (its session in the files it came from)."""
        if not documents:
            return 0
        within, params = tenant(tenant_id)
        with batch.id_set(con, [d[0] for d in documents]) as d:
            sessions = con.execute(f"SELECT DISTINCT user_id, source_uri, session_id FROM turns "
                                   f"WHERE {within} AND document_id IN {d}", params).fetchall()
        files = {(user, uri.split("#attachment=", 1)[0]) for _, user, uri in documents}
        removed = 0
        for schema, table in _tenant_tables(con):
            if not schema.startswith("raw_"):
                continue
            columns = _columns(con, schema, table)
            if not {"user_id", "file_url"} <= columns:
                continue
            keyed = "session_id" in columns
            rows = [list(s) for s in sessions] if keyed else [list(f) for f in files]
            if not rows:
                continue
            names = ["user_id", "file_url", "session_id"] if keyed else ["user_id", "file_url"]
            match = " AND ".join(f'b.{n} = "{table}".{n}' for n in names)
            with batch.registered(con, names, rows) as b:
                removed += len(_delete(con, f'"{schema}"."{table}"', f"{within} AND EXISTS (SELECT 1 FROM {b} b "
                                       f"WHERE {match})", params, "1"))
        return removed

    # ------------------------------------------------------------------ tenants
    def tenant_known(self, tenant_id: str) -> bool:
        """Whether the store holds anything of the tenant: a commit or an API key."""
        within, params = tenant(tenant_id)
        with self._db.read() as con:
            return bool(con.execute(f"SELECT EXISTS (SELECT 1 FROM commits WHERE {within}) OR "
                                    f"EXISTS (SELECT 1 FROM api_keys WHERE {within})", [*params, *params]).fetchone()[0])

    def delete_tenant(self, tenant_id: str, *, actor: str) -> tuple[datetime, int]:
        """Soft deletion, at once: the tenant's keys are revoked, its live memories, documents and
        chunks are marked deleted (one commit) and it waits in `tenant_deletions` for its purge, so
        nothing of it is returned from now on. Returns (when, keys revoked)."""
        now = utcnow()
        within, params = tenant(tenant_id)
        pending = PendingCommit(tenant_id, actor, sha256_json({"delete tenant": tenant_id}), "delete tenant")
        with self._db.tx(pending.tenant_id) as con:
            batch.upsert(con, "tenant_deletions", "tenant_id",
                         {"tenant_id": tenant_id, "requested_at": now, "actor": actor, "purged_at": None})
            revoked = len(batch.update_returning(con, "api_keys", "key_id", "revoked_at = ?",
                                                 f"{within} AND revoked_at IS NULL", [now], params))
            for table in DELETED_MARKS:
                id_col, _ = TRACKED_TABLES[table]
                pending.record(table, "delete", batch.update_returning(
                    con, table, id_col, "deleted_at = ?, commit_id = ?", f"{within} AND deleted_at IS NULL",
                    [now, pending.commit_id], params))
            if not pending.empty:
                write_commit(con, pending, now)
                for spec in fts.FTS_SPECS:
                    fts.mark_dirty(con, spec)
        for spec in (CHUNK_INDEX, MEMORY_INDEX):
            self._index.update(spec, lance_tenant(tenant_id) + " AND NOT deleted", {"deleted": True})
        return now, revoked

    def tenants_awaiting_purge(self) -> list[str]:
        with self._db.read() as con:
            return [r[0] for r in con.execute(
                "SELECT tenant_id FROM tenant_deletions WHERE purged_at IS NULL ORDER BY requested_at").fetchall()]

    def purge_tenant(self, tenant_id: str, *, actor: str) -> PurgeResult:
        """Hard deletion of a deleted tenant: every row of it in every table with a tenant_id (raw
        landing tables included) but the kept ones, its LanceDB rows and the cache vectors only it
        used; one commit. Idempotent: a purge that stopped half-way is finished by running it again."""
        result = PurgeResult(check_id("tenant_id", tenant_id))
        now = utcnow()
        pending = PendingCommit(tenant_id, actor, sha256_json({"purge tenant": tenant_id}), "purge tenant")
        with self._db.tx(pending.tenant_id) as con:
            hashes: set[str] = set()
            for schema, table in _tenant_tables(con):
                if schema == "main" and table in KEPT_TABLES:
                    continue
                where, params = tenant(tenant_id)
                if schema == "main" and table in ("memories", "chunks"):
                    hashes |= {r[0] for r in con.execute(f"SELECT content_hash FROM {table} WHERE {where}",
                                                         params).fetchall()}
                id_col = TRACKED_TABLES[table][0] if schema == "main" and table in TRACKED_TABLES else "1"
                ids = _delete(con, f'"{schema}"."{table}"', where, params, id_col)
                if id_col != "1":
                    pending.record_purged(table, [str(i) for i in ids])
                result.counts[table if schema == "main" else f"{schema}.{table}"] = len(ids)
            if not pending.empty:
                write_commit(con, pending, now)
                result.commit_id = pending.commit_id
            for spec in fts.FTS_SPECS:
                fts.mark_dirty(con, spec)
            deletion, deletion_params = tenant(tenant_id)
            con.execute(f"UPDATE tenant_deletions SET purged_at = ? WHERE {deletion}", [now, *deletion_params])
        self._purge_vectors(tenant_id, [], [], hashes, result.counts, whole_tenant=True)
        return result

    # ------------------------------------------------------------------ LanceDB and the indexes
    def _purge_vectors(
        self, tenant_id: str, memories: list[str], chunks: list[str], hashes: set[str], counts: dict[str, int],
        *, whole_tenant: bool = False,
    ) -> None:
        """The LanceDB rows of what went, and the cache vectors of content no row holds any more."""
        for spec, ids in ((MEMORY_INDEX, memories), (CHUNK_INDEX, chunks)):
            before = self._index.count(spec)
            if whole_tenant:
                self._index.delete(spec, lance_tenant(tenant_id))
            for start in range(0, len(ids), LANCE_ID_BATCH):
                self._index.delete(spec, sql_in(spec.id_column, ids[start:start + LANCE_ID_BATCH]))
            counts[spec.name] = before - self._index.count(spec)
        with self._db.read() as con, batch.id_set(con, sorted(hashes)) as wanted:
            # content, not tenant data: the same text held by anyone keeps its cached vector
            held = {r[0] for r in con.execute(
                f"SELECT content_hash FROM memories WHERE content_hash IN {wanted} UNION "
                f"SELECT content_hash FROM chunks WHERE content_hash IN {wanted}").fetchall()}
        unused = [f"{self._index.model}:{h}" for h in sorted(hashes - held)]
        self._recent.forget(unused)
        before = self._index.count(EMBEDDING_CACHE)
        for start in range(0, len(unused), LANCE_ID_BATCH):
            self._index.delete(EMBEDDING_CACHE, sql_in("cache_key", unused[start:start + LANCE_ID_BATCH]))
        counts[EMBEDDING_CACHE.name] = before - self._index.count(EMBEDDING_CACHE)

    def settle_purges(self) -> None:
        """After purges: rebuild both DuckDB FTS indexes, compact the LanceDB tables dropping every older
        version, so no deleted text stays searchable or readable by time travel, and (unless the settings
        say not to) copy the DuckDB file afresh, so none stays in its free blocks either."""
        now = utcnow()
        with self._db.read() as con:
            for spec in fts.FTS_SPECS:
                fts.rebuild(con, spec, now)
        for spec in (CHUNK_INDEX, MEMORY_INDEX, EMBEDDING_CACHE):
            self._index.forget_history(spec)
        if self._rewrite_after_purge:
            self.rewrite_file()
