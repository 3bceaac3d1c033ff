"""LanceDB tables of derived vectors, kept in step with DuckDB by the store.

Each row carries the ids and the columns recall filters on (tenant, user, shared,
lifecycle), so scope and lifecycle are applied as prefilters inside the search,
never after it. One model and dimension per table, recorded in the schema metadata.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa

from mnemoflow.errors import ConfigError


@dataclass(frozen=True)
class VectorTableSpec:
    name: str
    id_column: str
    columns: tuple[tuple[str, pa.DataType], ...]


CHUNK_VECTORS = VectorTableSpec(
    "chunk_vectors",
    "chunk_id",
    (("chunk_id", pa.string()), ("tenant_id", pa.string()), ("user_id", pa.string()), ("shared", pa.bool_()),
     ("document_id", pa.string()), ("deleted", pa.bool_()), ("content_hash", pa.string())),
)
MEMORY_VECTORS = VectorTableSpec(
    "memory_vectors",
    "memory_id",
    (("memory_id", pa.string()), ("tenant_id", pa.string()), ("user_id", pa.string()), ("shared", pa.bool_()),
     ("deleted", pa.bool_()), ("is_latest", pa.bool_()), ("active_until", pa.int64()),
     ("content_hash", pa.string())),
)
EMBEDDING_CACHE = VectorTableSpec(
    "embedding_cache", "cache_key", (("cache_key", pa.string()),)
)


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(sql_string(v) for v in values)})"


class VectorStore:
    """The LanceDB side of the store. Only `storage/` uses it."""

    def __init__(self, path: Path, model: str, dim: int) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self._db = lancedb.connect(str(path))
        self.model = model
        self.dim = dim
        self._tables: dict[str, lancedb.table.Table] = {}

    def _schema(self, spec: VectorTableSpec) -> pa.Schema:
        fields = [pa.field(n, t) for n, t in spec.columns]
        fields.append(pa.field("vector", pa.list_(pa.float32(), self.dim)))
        return pa.schema(fields, metadata={"model": self.model, "dim": str(self.dim)})

    def existing_model(self, spec: VectorTableSpec) -> tuple[str, int] | None:
        if spec.name not in self._db.list_tables().tables:
            return None
        meta = self._db.open_table(spec.name).schema.metadata or {}
        return meta.get(b"model", b"?").decode(), int(meta.get(b"dim", b"0"))

    def table(self, spec: VectorTableSpec) -> lancedb.table.Table:
        table = self._tables.get(spec.name)
        if table is None:
            found = self.existing_model(spec)
            if found is not None and found != (self.model, self.dim):
                raise ConfigError(
                    f"{spec.name} holds {found[0]} ({found[1]}-d) vectors but {self.model} ({self.dim}-d) "
                    "is configured; run `mnemoflow reembed` to rebuild the vectors with it"
                )
            table = self._db.create_table(spec.name, schema=self._schema(spec), exist_ok=True)
            self._tables[spec.name] = table
        return table

    def drop(self, spec: VectorTableSpec) -> None:
        self._tables.pop(spec.name, None)
        if spec.name in self._db.list_tables().tables:
            self._db.drop_table(spec.name)

    def upsert(self, spec: VectorTableSpec, rows: dict[str, list], vectors: np.ndarray) -> None:
        if not len(vectors):
            return
        columns = {name: pa.array(rows[name], type=dtype) for name, dtype in spec.columns}
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
        columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, self.dim)
        data = pa.table(columns, schema=self._schema(spec))
        (
            self.table(spec)
            .merge_insert(spec.id_column)
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(data)
        )

    def search(self, spec: VectorTableSpec, vector: np.ndarray, where: str, k: int) -> list[tuple[str, float]]:
        """Cosine distance, ascending; `where` is applied before the search (prefilter)."""
        table = self.table(spec)
        result = (
            table.search(np.asarray(vector, dtype=np.float32))
            .distance_type("cosine")
            .where(where, prefilter=True)
            .limit(k)
            .select([spec.id_column, "_distance"])
            .to_arrow()
        )
        return list(zip(result.column(spec.id_column).to_pylist(), result.column("_distance").to_pylist()))

    def lookup(self, spec: VectorTableSpec, where: str, columns: list[str], limit: int) -> pa.Table:
        """Plain filtered scan (no vector query), e.g. for the embedding cache."""
        return self.table(spec).search().where(where).select(columns).limit(limit).to_arrow()

    def update(self, spec: VectorTableSpec, where: str, values: dict[str, object]) -> None:
        self.table(spec).update(where=where, values=values)

    def count(self, spec: VectorTableSpec, where: str | None = None) -> int:
        return self.table(spec).count_rows(where)
