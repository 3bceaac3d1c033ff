"""What the quality checks read and where their results land.

Each frame is one table (or one LanceDB table) of a tenant, or of the whole store, with the
columns the expectations look at and flag columns computed by joins: does the commit a row
names exist, does its source or target row exist, does a done row have its vector, does a
vector have its row. `row_key` (`tenant:id`) names a row in results. No text is read.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from mnemoflow.storage import batch
from mnemoflow.storage.lance_index import CHUNK_INDEX, MEMORY_INDEX, IndexSpec
from mnemoflow.storage.room import Room
from mnemoflow.storage.scope import lance_tenant, tenant

QualityFrames = dict[str, pa.Table]


def _commit_found(alias: str) -> str:
    return (f"EXISTS (SELECT 1 FROM commits c WHERE {alias}.commit_id = c.commit_id "
            f"AND {alias}.tenant_id = c.tenant_id) AS commit_found")


def _key(alias: str, id_sql: str) -> str:
    return f"{alias}.tenant_id || ':' || {id_sql} AS row_key"


# suite -> the SELECT of its frame (a WHERE with the scope predicate of alias `x` follows)
_FRAMES: dict[str, str] = {
    "memories": f"""
        SELECT {_key('x', 'x.memory_id')}, x.memory_id, x.kind, x.tier, x.embedding_status, x.salience, x.confidence,
               x.is_latest, x.valid_from, x.valid_to, x.expires_at, x.deleted_at, x.archived_at, x.pinned,
               x.created_at, x.content_hash, {_commit_found('x')}
        FROM memories x""",
    "chunks": f"""
        SELECT {_key('x', 'x.chunk_id')}, x.chunk_id, x.embedding_status, x.deleted_at, x.content_hash,
               EXISTS (SELECT 1 FROM source_documents d WHERE d.document_id = x.document_id
                       AND d.tenant_id = x.tenant_id) AS document_found, {_commit_found('x')}
        FROM chunks x""",
    "source_documents": f"""
        SELECT {_key('x', 'x.document_id')}, x.document_id, x.deleted_at, {_commit_found('x')}
        FROM source_documents x""",
    "turns": f"""
        SELECT {_key('x', 'x.turn_key')}, x.turn_key,
               EXISTS (SELECT 1 FROM source_documents d WHERE d.document_id = x.document_id
                       AND d.tenant_id = x.tenant_id) AS document_found, {_commit_found('x')}
        FROM turns x""",
    "memory_links": f"""
        SELECT {_key('x', 'x.link_id')}, x.link_id, x.type, x.decided_by, x.confidence,
               EXISTS (SELECT 1 FROM memories m WHERE m.memory_id = x.src AND m.tenant_id = x.tenant_id) AS src_found,
               (EXISTS (SELECT 1 FROM memories m WHERE m.memory_id = x.dst AND m.tenant_id = x.tenant_id)
                OR (x.type IN ('EXTRACTED_FROM', 'DERIVED_FROM') AND (
                    EXISTS (SELECT 1 FROM chunks c WHERE c.chunk_id = x.dst AND c.tenant_id = x.tenant_id)
                    OR EXISTS (SELECT 1 FROM source_documents d WHERE d.document_id = x.dst
                               AND d.tenant_id = x.tenant_id)))) AS dst_found,
               {_commit_found('x')}
        FROM memory_links x""",
    "entities": f"""
        SELECT {_key('x', 'x.entity_id')}, x.entity_id, x.type, x.mention_count,
               EXISTS (SELECT 1 FROM memory_entities me WHERE me.entity_id = x.entity_id
                       AND me.tenant_id = x.tenant_id) AS named, {_commit_found('x')}
        FROM entities x""",
    "memory_entities": f"""
        SELECT {_key('x', "x.memory_id || '|' || x.entity_id")},
               EXISTS (SELECT 1 FROM memories m WHERE m.memory_id = x.memory_id AND m.tenant_id = x.tenant_id)
                   AS memory_found,
               EXISTS (SELECT 1 FROM entities e WHERE e.entity_id = x.entity_id AND e.tenant_id = x.tenant_id)
                   AS entity_found, {_commit_found('x')}
        FROM memory_entities x""",
    "relations": f"""
        SELECT {_key('x', 'x.relation_id')}, x.relation_id, x.predicate, x.confidence,
               (x.memory_id IS NULL OR EXISTS (SELECT 1 FROM memories m WHERE m.memory_id = x.memory_id
                                               AND m.tenant_id = x.tenant_id)) AS memory_found,
               {_commit_found('x')}
        FROM relations x""",
    "categories": f"""
        SELECT {_key('x', 'x.category_key')}, x.category_key,
               (x.parent_key IS NULL OR EXISTS (SELECT 1 FROM categories p WHERE p.category_key = x.parent_key
                                                AND p.tenant_id = x.tenant_id)) AS parent_found,
               {_commit_found('x')}
        FROM categories x""",
    "memory_categories": f"""
        SELECT {_key('x', "x.memory_id || '|' || x.category_key")},
               EXISTS (SELECT 1 FROM memories m WHERE m.memory_id = x.memory_id AND m.tenant_id = x.tenant_id)
                   AS memory_found,
               EXISTS (SELECT 1 FROM categories c WHERE c.category_key = x.category_key
                       AND c.tenant_id = x.tenant_id) AS category_found, {_commit_found('x')}
        FROM memory_categories x""",
    "outbox": f"SELECT {_key('x', 'x.job_key')}, x.job_key, x.kind, x.status, x.attempts FROM outbox x",
}


@dataclass(frozen=True)
class QualityResult:
    """One expectation of one run, as `quality_runs` holds it."""

    suite: str
    expectation: str
    success: bool
    observed_value: Any
    unexpected_count: int | None
    failing_ids: list[str]


class QualityData(Room):
    def quality_frames(self, tenant_id: str | None = None) -> QualityFrames:
        """Every suite's frame, of one tenant or (None) of the whole store, with the LanceDB rows of
        both vector tables and whether each has its DuckDB row."""
        where, params = tenant(tenant_id, "x") if tenant_id is not None else ("true", [])
        lance_where = lance_tenant(tenant_id) if tenant_id is not None else "true"
        with self._db.read() as con:
            frames = {suite: con.execute(f"{sql} WHERE {where}", params).fetch_arrow_table()
                      for suite, sql in _FRAMES.items()}
            vectors = {spec.name: self._vectors(spec, lance_where) for spec in (MEMORY_INDEX, CHUNK_INDEX)}
            frames["memories"] = self._with_vectors(con, frames["memories"], vectors[MEMORY_INDEX.name], "memory_id")
            frames["chunks"] = self._with_vectors(con, frames["chunks"], vectors[CHUNK_INDEX.name], "chunk_id")
            frames[MEMORY_INDEX.name] = self._vector_rows(
                con, vectors[MEMORY_INDEX.name], "memories", "memory_id",
                lambda m: f"(v.deleted = ({m}.deleted_at IS NOT NULL) AND v.is_latest = {m}.is_latest)")
            frames[CHUNK_INDEX.name] = self._vector_rows(
                con, vectors[CHUNK_INDEX.name], "chunks", "chunk_id", lambda c: f"v.deleted = ({c}.deleted_at IS NOT NULL)")
        return frames

    def _vectors(self, spec: IndexSpec, where: str) -> pa.Table:
        flags = {"id": spec.id_column, "tenant_id": "tenant_id", "deleted": "deleted",
                 "has_vector": "vector IS NOT NULL"}
        if spec is MEMORY_INDEX:
            flags["is_latest"] = "is_latest"
        rows = self._index.count(spec, None if where == "true" else where)
        return self._index.lookup(spec, where, flags, max(rows, 1))

    @staticmethod
    def _with_vectors(con: duckdb.DuckDBPyConnection, frame: pa.Table, vectors: pa.Table, id_column: str) -> pa.Table:
        """The frame with `vector_found`: the row's LanceDB row carries a vector."""
        with_vector = vectors.filter(vectors.column("has_vector")).select(["id"])
        with batch.arrow(con, frame) as f, batch.arrow(con, with_vector) as v:
            return con.execute(f"SELECT f.*, f.{id_column} IN (SELECT id FROM {v}) AS vector_found "
                               f"FROM {f} f").fetch_arrow_table()

    @staticmethod
    def _vector_rows(
        con: duckdb.DuckDBPyConnection, vectors: pa.Table, table: str, id_column: str,
        flags_match: Callable[[str], str],
    ) -> pa.Table:
        """LanceDB rows with `row_found` (DuckDB holds the row, in the same tenant) and `flags_match`
        (its filter columns say what the row says)."""
        with batch.arrow(con, vectors) as v:
            return con.execute(
                f"SELECT v.tenant_id || ':' || v.id AS row_key, v.id, v.has_vector, r.{id_column} IS NOT NULL "
                f"AS row_found, coalesce({flags_match('r')}, false) AS flags_match FROM {v} v "
                f"LEFT JOIN {table} r ON r.{id_column} = v.id AND r.tenant_id = v.tenant_id").fetch_arrow_table()

    def record_quality_run(self, tenant_id: str | None, results: list[QualityResult], run_at: datetime) -> str:
        """Store one run's results in `quality_runs` (one row per expectation); returns the run id."""
        run_id = f"qr_{uuid.uuid4().hex}"
        with self._db.tx() as con:
            batch.insert(con, "quality_runs",
                         ["run_id", "run_at", "tenant_id", "suite", "expectation", "success", "observed_value",
                          "unexpected_count", "failing_ids"],
                         [[run_id, run_at, tenant_id, r.suite, r.expectation, r.success,
                           json.dumps(r.observed_value, default=str), r.unexpected_count, r.failing_ids]
                          for r in results])
        return run_id
