"""Search: BM25 (LanceDB's native index online, or DuckDB FTS) and vectors, inside scope and
lifecycle, and the final gate that DuckDB, the system of record, applies before recall returns
anything: an index that lags can lose a hit but never leak one."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from mnemoflow.errors import VectorsUnavailableError
from mnemoflow.storage import batch, fts
from mnemoflow.storage.lance_index import CHUNK_INDEX, EMBEDDING_CACHE, INDEX_OF, MEMORY_INDEX, LanceIndex, sql_in
from mnemoflow.storage.room import Room, Target
from mnemoflow.storage.rows import epoch, lifecycle_sql
from mnemoflow.storage.scope import Scope, lance_visible, owned, visible
from mnemoflow.timeutil import utcnow


log = logging.getLogger("mnemoflow.storage")


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


@dataclass(frozen=True)
class SearchHit:
    target: Target
    id: str
    score: float
    chunk: ChunkHit | None  # a chunk's display data when the index returned it with the hit


def search_hit(target: Target, hit: tuple[str, float, dict[str, str]]) -> SearchHit:
    row_id, score, payload = hit
    if target != "chunks" or payload.get("body") is None:
        return SearchHit(target, row_id, score, None)
    chunk = ChunkHit(row_id, payload["body"], json.loads(payload["locator"] or "{}"), payload["document_id"],
                     payload["uri"], payload["title"], payload["connector"])
    return SearchHit(target, row_id, score, chunk)


def lance_where(scope: Scope, target: Target, include_history: bool = False, only: list[str] | None = None) -> str:
    """The LanceDB prefilter of a search: scope, not deleted (a summary: not retired), for memories the
    lifecycle gate, and `only` these ids when given (a filtered search)."""
    where = lance_visible(scope) + " AND NOT deleted"
    if target == "memories" and not include_history:
        where += f" AND is_latest AND (active_until IS NULL OR active_until > {epoch(utcnow())})"
    if only is not None:
        where += " AND " + sql_in(INDEX_OF[target].id_column, only)
    return where


def mark_deleted(index: LanceIndex, chunks: list[str], memories: list[str]) -> None:
    """Deletions reach LanceDB after their DuckDB transaction (the final gate covers the gap)."""
    if chunks:
        index.update(CHUNK_INDEX, sql_in("chunk_id", chunks), {"deleted": True})
    if memories:
        index.update(MEMORY_INDEX, sql_in("memory_id", memories), {"deleted": True})


class Search(Room):
    def refresh_search_indexes(self, *, lazy: bool = False) -> None:
        """After a batch of writes: fold new rows into LanceDB's indexes (and compact the vector
        cache, whose lookups read every fragment) and rebuild the dirty DuckDB FTS indexes
        (analysts' BM25), once per batch, never per row.

        `lazy`, after a small write (a direct `add`): LanceDB only once writes have piled up
        (`LanceIndex.refresh`); DuckDB FTS left dirty for the next batch, or for the next reader
        that needs it (a DuckDB BM25 search, an analyst's `match_bm25` through `sql`), which
        rebuilds it first. Searches see the write at once either way."""
        if not lazy:
            with self._db.read() as con:
                now = utcnow()
                for spec in fts.FTS_SPECS:
                    fts.ensure_current(con, spec, now)
        try:
            if not lazy:
                self.save_cached_vectors()  # type: ignore[attr-defined]
            for index in (*INDEX_OF.values(), EMBEDDING_CACHE):
                self._index.refresh(index, lazy=lazy)
        except VectorsUnavailableError as exc:  # the bucket is down: the next refresh folds the rows in
            log.warning("search indexes not refreshed: %s", exc)

    def rebuild_fts_index(self, target: Target) -> None:
        """Force a rebuild of the DuckDB FTS index (benchmarks measure what one costs)."""
        with self._db.read() as con:
            fts.rebuild(con, fts.FTS_OF[target], utcnow())

    def searchable(self, scope: Scope, targets: list[Target]) -> list[Target]:
        """The targets holding anything a search inside the scope could return (past versions too,
        never a deleted row), by DuckDB alone: a recall of an empty scope loads neither LanceDB nor
        the model. What it leaves out, DuckDB's final gate would drop anyway."""
        tables = {"memories": ("memories", visible, "deleted_at IS NULL"),
                  "chunks": ("chunks", visible, "deleted_at IS NULL"),
                  "summaries": ("summaries", owned, "retired_at IS NULL")}
        found = []
        with self._db.read() as con:
            for target in targets:
                table, predicate, live = tables[target]
                where, params = predicate(scope)
                if con.execute(f"SELECT 1 FROM {table} WHERE {where} AND {live} LIMIT 1", params).fetchone():
                    found.append(target)
        return found

    def bm25_search(
        self, scope: Scope, target: Target, query: str, k: int, *, include_history: bool = False,
        only: list[str] | None = None,
    ) -> list[SearchHit]:
        """BM25 hits best first, inside scope and lifecycle; LanceDB's index online, or DuckDB FTS.
        `include_history` lifts the lifecycle gate for memories (past versions, expired), never deletion;
        `only` keeps to these ids."""
        if self._bm25_engine == "lancedb":  # LanceDB is thread-safe: no connection lock, so it can run in parallel
            found = self._index.text_search(INDEX_OF[target], query, lance_where(scope, target, include_history, only), k)
            return [search_hit(target, h) for h in found]
        return self.keyword_search(scope, target, query, k, include_history=include_history, only=only)

    def keyword_search(
        self, scope: Scope, target: Target, query: str, k: int, *, include_history: bool = False,
        only: list[str] | None = None,
    ) -> list[SearchHit]:
        """Keyword hits from the system of record itself, as `bm25_search` gives them: DuckDB FTS's BM25 on
        one machine, PostgreSQL's full-text ranking on a shared store (what recall answers from when the
        vectors' bucket cannot be reached)."""
        fts_spec = fts.FTS_OF[target]
        where, params = visible(scope)
        if target == "summaries":
            where += " AND retired_at IS NULL"
        else:
            gate, gate_params = lifecycle_sql(history=target == "chunks" or include_history)
            where, params = where + gate, [*params, *gate_params]
        if self._db.postgres is not None:
            if only is not None:
                if not only:
                    return []
                where += f" AND {fts_spec.id_column} = ANY(?)"
                params = [*params, list(only)]
            found = self._db.postgres.text_search(target, fts_spec.id_column, fts_spec.text_columns[0], query, where,
                                                  params, k)
            return [SearchHit(target, i, score, None) for i, score in found]
        with self._db.read() as con, batch.id_set(con, only or []) as ids:
            if only is not None:
                where += f" AND {fts_spec.id_column} IN {ids}"
            fts.ensure_current(con, fts_spec, utcnow())
            return [SearchHit(target, i, score, None) for i, score in fts.search(con, fts_spec, query, where, params, k)]

    def vector_search(
        self, scope: Scope, target: Target, vector: np.ndarray, k: int, *, include_history: bool = False,
        only: list[str] | None = None,
    ) -> list[SearchHit]:
        """Cosine-similarity hits best first, inside scope and lifecycle (`include_history`, `only`: as
        bm25_search)."""
        found = self._index.vector_search(INDEX_OF[target], vector, lance_where(scope, target, include_history, only), k)
        return [search_hit(target, h) for h in found]

    def vector_search_many(self, scope: Scope, target: Target, vectors: list[np.ndarray], k: int) -> list[list[SearchHit]]:
        """`vector_search` for each of `vectors`, in one query (a generation pass asks for every turn at once)."""
        found = self._index.vector_search_many(INDEX_OF[target], vectors, lance_where(scope, target), k)
        return [[search_hit(target, h) for h in hits] for hits in found]

    def vectors_of(self, scope: Scope, target: Target, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of `ids` inside the scope (normalised, as written), those embedded so far: what
        recall compares two candidates by."""
        if not ids:
            return {}
        spec = INDEX_OF[target]
        found = self._index.lookup(spec, f"{lance_visible(scope)} AND {sql_in(spec.id_column, ids)}",
                                   [spec.id_column, "vector"], None)
        return {row_id: np.asarray(vector, dtype=np.float32) for row_id, vector in
                zip(found.column(spec.id_column).to_pylist(), found.column("vector").to_pylist(), strict=True)
                if vector is not None}

    def live_chunk_ids(self, scope: Scope, chunk_ids: list[str]) -> set[str]:
        """Which of `chunk_ids` DuckDB, the system of record, holds live inside the scope: the final
        gate before recall returns a chunk, so a lagging index can lose a hit but never leak one.
        The ids are found by the key's index first (`batch.key_rows`)."""
        if not chunk_ids:
            return set()
        where, params = visible(scope)
        with self._db.read() as con, batch.key_rows(con, "chunks", "chunk_id", chunk_ids) as rows:
            # a document's deletion soft-deletes its chunks, so the chunk row alone decides
            return {r[0] for r in con.execute(
                f"WITH hit AS MATERIALIZED {rows} SELECT chunk_id FROM hit WHERE {where} AND deleted_at IS NULL",
                params).fetchall()}

    def fetch_chunks(self, scope: Scope, chunk_ids: list[str]) -> dict[str, ChunkHit]:
        """Live chunks among `chunk_ids`, inside the scope, with their documents (for citations)."""
        if not chunk_ids:
            return {}
        where, params = visible(scope, "c")
        with self._db.read() as con, batch.key_rows(con, "chunks", "chunk_id", chunk_ids) as hit:
            rows = con.execute(
                f"WITH hit AS MATERIALIZED {hit} SELECT c.chunk_id, c.text, CAST(c.locator AS VARCHAR), d.document_id, "
                f"d.uri, d.title, d.connector FROM hit c JOIN source_documents d ON d.document_id = c.document_id "
                f"WHERE {where} AND c.deleted_at IS NULL AND d.deleted_at IS NULL",
                params,
            ).fetchall()
        return {r[0]: ChunkHit(r[0], r[1], json.loads(r[2]) if r[2] else {}, r[3], r[4], r[5], r[6]) for r in rows}
