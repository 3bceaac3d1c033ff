"""LanceDB: the online search index (BM25 full text and vectors), kept in step with DuckDB.

One table per target holds the searchable text, the columns recall filters on
(tenant, user, shared, lifecycle) and the vector. Rows are written with the DuckDB
write, their vector left empty for the outbox worker to fill (a generated memory,
whose vector generation already computed, comes with it). So full-text search
answers at once (also while the embedder is down) and vector search sees a row
as soon as it is embedded. Scope and lifecycle are prefilters inside each search,
served by bitmap indexes. One model and dimension per table, recorded in its schema.

The full-text index reads words as Tantivy's simple tokenizer splits them, which leaves a run of
Chinese, Japanese or Korean as one token (a whole sentence, dropped past 40 bytes). So the indexed
text has each CJK run written as its characters and their adjacent pairs, and a query as its pairs
(`tokens.cjk_index_text`, `cjk_query_text`): a word matches inside a sentence. English is untouched.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from mnemoflow.errors import ConfigError, UnreachableError
from mnemoflow.storage.lance_commits import (
    commit_conflict,
    object_store_reason,
    panicked,
    reachable,
    retried_writes,
)
from mnemoflow.storage.lance_import import import_lancedb
from mnemoflow.storage.scope import BOUNDARIES
from mnemoflow.tokens import cjk_index_text, cjk_query_text

if TYPE_CHECKING:
    import lancedb


@dataclass(frozen=True)
class IndexSpec:
    name: str
    id_column: str
    columns: tuple[tuple[str, pa.DataType], ...]
    # bitmap-indexed so scope and lifecycle prefilters never fall back to a scan
    filter_columns: tuple[str, ...] = ("tenant_id", "user_id", "shared", "deleted", *BOUNDARIES)
    text_column: str | None = "text"
    # returned with each hit, so recall needs no second read of the row's content
    payload: tuple[str, ...] = ()
    vector_search: bool = True  # whether rows are found by vector (a vector index once large enough)
    key_index: bool = False  # a BTree on the id column, for tables read by key (100k keys: 3 ms, not 19)


# a scope's second-level boundaries (storage/scope.py); a table built before them gains them in place
_BOUNDARY_COLUMNS = tuple((name, pa.string()) for name in BOUNDARIES)

CHUNK_INDEX = IndexSpec(
    "chunk_vectors",
    "chunk_id",
    (("chunk_id", pa.string()), ("tenant_id", pa.string()), ("user_id", pa.string()), ("shared", pa.bool_()),
     ("document_id", pa.string()), ("deleted", pa.bool_()), ("content_hash", pa.string()), ("text", pa.string()),
     ("body", pa.string()), ("locator", pa.string()), ("title", pa.string()), ("uri", pa.string()),
     ("connector", pa.string()), *_BOUNDARY_COLUMNS),
    payload=("body", "locator", "document_id", "title", "uri", "connector"),
)
MEMORY_INDEX = IndexSpec(
    "memory_vectors",
    "memory_id",
    (("memory_id", pa.string()), ("tenant_id", pa.string()), ("user_id", pa.string()), ("shared", pa.bool_()),
     ("deleted", pa.bool_()), ("is_latest", pa.bool_()), ("active_until", pa.int64()),
     ("content_hash", pa.string()), ("text", pa.string()), *_BOUNDARY_COLUMNS),
    filter_columns=("tenant_id", "user_id", "shared", "deleted", "is_latest", *BOUNDARIES),
)
SUMMARY_INDEX = IndexSpec(
    "summary_vectors",
    "summary_id",
    (("summary_id", pa.string()), ("tenant_id", pa.string()), ("user_id", pa.string()), ("shared", pa.bool_()),
     ("deleted", pa.bool_()), ("level", pa.string()), ("subject_kind", pa.string()), ("content_hash", pa.string()),
     ("text", pa.string()), *_BOUNDARY_COLUMNS),
)
# what each searchable target of the store is indexed as
INDEX_OF: dict[str, IndexSpec] = {"chunks": CHUNK_INDEX, "memories": MEMORY_INDEX, "summaries": SUMMARY_INDEX}
EMBEDDING_CACHE = IndexSpec(
    "embedding_cache", "cache_key", (("cache_key", pa.string()),), filter_columns=(), text_column=None,
    vector_search=False, key_index=True,
)


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(sql_string(v) for v in values)})"


Hit = tuple[str, float, dict[str, Any]]  # (id, score, payload)
SMALL_TABLE_ROWS = 50_000  # below this a full optimize is cheap; above it only when much is unindexed
# A small write (a direct `add`) is a LanceDB commit, a fragment of a row or two, and every search
# pays ~0.2 ms per fragment (bench/README.md): a lazy refresh compacts once this many have piled up
# (~15 ms), and folds rows into the indexes once LAZY_UNINDEXED_ROWS wait outside them.
LAZY_FRAGMENTS = 20
LAZY_UNINDEXED_ROWS = 1_000
# A compaction short of an optimize merges fragments below this size only: the rows of one are
# rewritten a few times at most. What compactions replaced is deleted once a minute old, at most once
# a minute (listing the versions costs ~0.1 ms each); only this process reads the tables, in searches
# of milliseconds (an optimize keeps old versions 10 minutes).
COMPACT_TARGET_ROWS = 256
COMPACTED_KEPT = timedelta(minutes=1)
HNSW_EF = 300  # measured at 100k chunks: recall@200 0.99 against exact search, ~10 ms


class LanceIndex:
    """The LanceDB side of the store. Only `storage/` uses it."""

    def __init__(self, location: Path | str, model: str, dim: int, *, vector_index_min_rows: int = 50_000,
                 storage_options: dict[str, str] | None = None, read_consistency_s: float | None = None,
                 connect_timeout_s: float = 10.0,
                 creation_lock: Callable[[], AbstractContextManager[None]] = nullcontext) -> None:
        """`location`: a folder, or a bucket URL (`s3://...`, reached with `storage_options`) that other
        processes write too: then this one re-reads a table's latest version when `read_consistency_s`
        has passed since it last looked, and gives up on an unreachable bucket after a few retries
        (recall answers from the system of record meanwhile) rather than LanceDB's three minutes.
        A folder is connected when first used (LanceDB's import costs a cold command ~1 s); a bucket at
        once, so that one out of reach is said before any work starts. `creation_lock`: what processes
        sharing the bucket take turns on to create a table (a PostgreSQL advisory lock on a shared store)."""
        remote = isinstance(location, str) and "://" in location
        if not remote:
            Path(location).mkdir(parents=True, exist_ok=True)
        options = dict(storage_options or {})
        if remote:
            options.setdefault("connect_timeout", f"{max(1, round(connect_timeout_s))}s")
            options.setdefault("timeout", "60s")
            options.setdefault("client_max_retries", "2")
            options.setdefault("client_retry_timeout", f"{max(1, round(connect_timeout_s))}")
        self._options = options or None
        self._consistency = None if read_consistency_s is None else timedelta(seconds=read_consistency_s)
        self.location = str(location)
        self.remote = remote
        self._connection: lancedb.DBConnection | None = None
        self.model = model
        self.dim = dim
        self.vector_index_min_rows = vector_index_min_rows
        self._tables: dict[str, lancedb.table.Table] = {}
        self._text_indexed: set[str] = set()
        self._vector_indexed: set[str] = set()
        self._settled: dict[str, int] = {}  # fragments of each table when this process last compacted it
        self._appends: dict[str, int] = {}  # appends to each table since this process last refreshed it
        self._cleaned: dict[str, float] = {}  # when this process last deleted what compactions replaced
        self._writers: dict[str, threading.RLock] = {}
        self._writers_guard = threading.Lock()
        self._creation_lock = creation_lock
        if remote:  # a bucket out of reach is said before any work starts
            self._connection = self._connect()

    @property
    def _db(self) -> lancedb.DBConnection:
        with self._writers_guard:
            if self._connection is None:
                self._connection = self._connect()
            return self._connection

    def _connect(self) -> lancedb.DBConnection:
        try:
            db = import_lancedb().connect(self.location, storage_options=self._options,
                                          read_consistency_interval=self._consistency)
            if self.remote:
                db.list_tables()
        except Exception as exc:  # noqa: BLE001  (object_store, IO and auth errors alike: say what failed)
            if not self.remote:
                raise
            raise UnreachableError(f"cannot reach the vectors at {self.location}: {object_store_reason(exc)}") from None
        return db

    def _writer(self, spec: IndexSpec) -> threading.RLock:
        with self._writers_guard:
            return self._writers.setdefault(spec.name, threading.RLock())

    def _schema(self, spec: IndexSpec) -> pa.Schema:
        fields = [pa.field(n, t) for n, t in spec.columns]
        fields.append(pa.field("vector", pa.list_(pa.float32(), self.dim), nullable=True))
        return pa.schema(fields, metadata={"model": self.model, "dim": str(self.dim)})

    @reachable
    @retried_writes
    def drop(self, spec: IndexSpec) -> None:
        self._tables.pop(spec.name, None)
        self._settled.pop(spec.name, None)
        self._text_indexed.discard(spec.name)
        self._vector_indexed.discard(spec.name)
        if spec.name in self._db.list_tables().tables:
            self._db.drop_table(spec.name)

    def table(self, spec: IndexSpec) -> lancedb.table.Table:
        table = self._tables.get(spec.name)
        if table is not None:
            return table
        # Under the table's writer lock: a read may be the first to touch a table, and two threads
        # creating it at once commit an Overwrite that fails the other's next Append.
        with self._writer(spec):
            return self._tables.get(spec.name) or self._open_or_create(spec)

    def _open_or_create(self, spec: IndexSpec) -> lancedb.table.Table:
        """The table, checked against the configured model and columns, or a new empty one."""
        table = self._opened(spec) or self._created(spec)
        schema = table.schema
        meta = schema.metadata or {}
        found = (meta.get(b"model", b"?").decode(), int(meta.get(b"dim", b"0")))
        if found != (self.model, self.dim):
            raise ConfigError(
                f"{spec.name} holds {found[0]} ({found[1]}-d) vectors but {self.model} ({self.dim}-d) is "
                "configured; run `mnemoflow reembed` to rebuild the vectors with it"
            )
        if added := [name for name in BOUNDARIES if name not in schema.names and name in dict(spec.columns)]:
            # rows written before scopes had these boundaries carry none: NULL is their stamp
            table.add_columns({name: "CAST(NULL AS STRING)" for name in added})
            schema = table.schema
        missing = sorted(set(self._schema(spec).names) - set(schema.names))
        if missing:
            raise ConfigError(
                f"{spec.name} was built by an older mnemoflow (no {', '.join(missing)} columns); "
                "run `mnemoflow reembed` to rebuild it from the DuckDB store"
            )
        self._tables[spec.name] = table
        if any(ix.columns == ["vector"] for ix in table.list_indices()):
            self._vector_indexed.add(spec.name)
        return table

    def _created(self, spec: IndexSpec) -> lancedb.table.Table:
        """A new empty table, or the one another process created while this one waited for its turn."""
        with self._creation_lock():
            return self._opened(spec) or self._db.create_table(spec.name, schema=self._schema(spec), exist_ok=True)

    def _opened(self, spec: IndexSpec) -> lancedb.table.Table | None:
        """The table if it has a version to open; None when it is not listed, or listed with no version yet
        (its folder is there before its creator commits the first one, or its creator died in between)."""
        if spec.name not in self._db.list_tables().tables:
            return None
        try:
            return self._db.open_table(spec.name)
        except ValueError as exc:
            if "was not found" not in str(exc):
                raise
            return None

    def _data(self, spec: IndexSpec, rows: dict[str, list], vectors: np.ndarray | None) -> pa.Table:
        n = len(rows[spec.id_column])
        columns = {name: pa.array(self._indexed(spec, name, rows[name]), type=dtype) for name, dtype in spec.columns}
        vector_type = pa.list_(pa.float32(), self.dim)
        if vectors is None:
            columns["vector"] = pa.nulls(n, type=vector_type)
        else:
            flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
            columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, self.dim)
        return pa.table(columns, schema=self._schema(spec))

    @staticmethod
    def _indexed(spec: IndexSpec, name: str, values: list) -> list:
        """The full-text column as the index reads it (CJK runs spelled out); other columns as given."""
        if name != spec.text_column:
            return values
        return [cjk_index_text(v) if isinstance(v, str) else v for v in values]

    @reachable
    @retried_writes
    def upsert(self, spec: IndexSpec, rows: dict[str, list], vectors: np.ndarray | None = None) -> None:
        """Insert or replace rows by id; without `vectors` the rows wait for theirs (vector null)."""
        if not rows.get(spec.id_column):
            return
        (
            self.table(spec).merge_insert(spec.id_column)
            .when_matched_update_all().when_not_matched_insert_all()
            .execute(self._data(spec, rows, vectors), on_bad_vectors="null" if vectors is None else "error")
        )

    @reachable
    @retried_writes
    def append(self, spec: IndexSpec, rows: dict[str, list], vectors: np.ndarray | None = None) -> None:
        """Add rows whose ids the table does not hold, with their vectors or waiting for them (null):
        a third of an upsert's cost, which must first look every id up. Each append is a fragment,
        and a generation pass appends every memory as it decides it (its next search must find it):
        every LAZY_FRAGMENTS appends the table gets a lazy refresh, or a long pass's searches would
        read hundreds of fragments (a BM25 search at 325 fragments: 76 ms, after compaction 7 ms)."""
        if rows.get(spec.id_column):
            self.table(spec).add(self._data(spec, rows, vectors), on_bad_vectors="null" if vectors is None else "error")
            self._appends[spec.name] = self._appends.get(spec.name, 0) + 1
            if self._appends[spec.name] >= LAZY_FRAGMENTS:
                self.refresh(spec, lazy=True)

    @reachable
    @retried_writes
    def delete(self, spec: IndexSpec, where: str) -> None:
        self.table(spec).delete(where)

    @reachable
    @retried_writes
    def update_columns(self, spec: IndexSpec, rows: dict[str, list]) -> None:
        """Set some columns of existing rows by id (one value per row); the vector is kept."""
        if rows.get(spec.id_column):
            types = dict(spec.columns)
            data = pa.table({name: pa.array(self._indexed(spec, name, values), type=types[name])
                             for name, values in rows.items()})
            self.table(spec).merge_insert(spec.id_column).when_matched_update_all().execute(data)

    def vector_search(self, spec: IndexSpec, vector: np.ndarray, where: str, k: int,
                      columns: tuple[str, ...] = ()) -> list[Hit]:
        """(id, cosine similarity, payload and `columns`), best first; rows without a vector are not candidates."""
        return self.vector_search_many(spec, [vector], where, k, columns)[0]

    @reachable
    def vector_search_many(self, spec: IndexSpec, vectors: list[np.ndarray], where: str, k: int,
                           columns: tuple[str, ...] = ()) -> list[list[Hit]]:
        """`vector_search` for each of `vectors`, in one query (one pass over the table's fragments)."""
        if not vectors:
            return []
        asked = [np.asarray(v, dtype=np.float32) for v in vectors]
        query = (
            self.table(spec).search(asked[0] if len(asked) == 1 else asked, vector_column_name="vector")
            .distance_type("cosine").where(where, prefilter=True).limit(k)
        )
        if spec.name in self._vector_indexed:
            query = query.ef(max(k, HNSW_EF))
        result = query.select([spec.id_column, *spec.payload, *columns, "_distance"]).to_arrow()
        hits = self._hits(spec, result, [1.0 - d for d in result.column("_distance").to_pylist()], columns)
        found: list[list[Hit]] = [[] for _ in vectors]
        positions = result.column("query_index").to_pylist() if len(asked) > 1 else [0] * len(hits)
        for position, hit in zip(positions, hits):
            found[position].append(hit)
        return found

    @reachable
    def text_search(self, spec: IndexSpec, query: str, where: str, k: int) -> list[Hit]:
        """(id, BM25 score, payload), best first, from the native full-text index."""
        if not query.strip():
            return []
        table = self.table(spec)
        if spec.name not in self._text_indexed:
            if not any(ix.index_type == "FTS" for ix in table.list_indices()):
                if table.count_rows() == 0:
                    return []
                self.refresh(spec)  # first search before any batch refresh: build the indexes now
            self._text_indexed.add(spec.name)
        result = (
            table.search(cjk_query_text(query), query_type="fts").where(where, prefilter=True).limit(k)
            .select([spec.id_column, *spec.payload, "_score"]).to_arrow()
        )
        return self._hits(spec, result, result.column("_score").to_pylist())

    @staticmethod
    def _hits(spec: IndexSpec, result: pa.Table, scores: list[float], columns: tuple[str, ...] = ()) -> list[Hit]:
        ids = result.column(spec.id_column).to_pylist()
        payload = {name: result.column(name).to_pylist() for name in (*spec.payload, *columns)}
        return [(row_id, score, {name: values[i] for name, values in payload.items()})
                for i, (row_id, score) in enumerate(zip(ids, scores))]

    @reachable
    def lookup(self, spec: IndexSpec, where: str, columns: list[str] | dict[str, str], limit: int | None) -> pa.Table:
        """Plain filtered scan (no vector query), e.g. for the embedding cache; `columns` may name SQL
        expressions ({"has_vector": "vector IS NOT NULL"}); `limit` None: every matching row."""
        return self.table(spec).search().where(where).select(columns).limit(limit).to_arrow()

    @reachable
    @retried_writes
    def update(self, spec: IndexSpec, where: str, values: dict[str, object]) -> None:
        self.table(spec).update(where=where, values=values)

    @reachable
    def count(self, spec: IndexSpec, where: str | None = None) -> int:
        return self.table(spec).count_rows(where)

    @reachable
    @retried_writes
    def forget_history(self, spec: IndexSpec) -> None:
        """After a hard deletion: rewrite every fragment holding a deleted row (LanceDB's own optimize
        leaves a fragment alone below 10% deleted rows, the text still in its file), fold the indexes
        and remove every older version, so nothing deleted stays in a data or index file, searchable
        or readable by time travel. Only the store's owner process may run it (a reader of an older
        version would fail)."""
        table = self.table(spec)
        table.to_lance().optimize.compact_files(materialize_deletions=True, materialize_deletions_threshold=0.0)
        table.checkout_latest()
        with warnings.catch_warnings():  # that older versions go is the point (LanceDB warns about it)
            warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)")
            table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
        self._settled.pop(spec.name, None)

    @reachable
    @retried_writes
    def refresh(self, spec: IndexSpec, *, lazy: bool = False) -> None:
        """Fold new rows into the indexes, creating them when first useful.

        Full-text and bitmap indexes exist from the first row. The vector index (IVF-HNSW-SQ)
        is built once a table holds `vector_index_min_rows` vectors: below that an exact
        search is fast enough (bench/README.md). A full optimize (compaction, index deltas)
        runs while a table is small or once a tenth of it is unindexed; until then new rows
        are searched exactly beside the index, which costs a few ms, while an optimize of a
        100k-row table with a vector index takes tens of seconds; the small fragments they
        came in are merged meanwhile (the indexes and the big fragments left as they are).

        `lazy`, after a small write (a direct `add`): searches read the rows the indexes have
        not folded in, so an optimize per write (50-250 ms below 50k rows) would buy nothing
        but speed. Nothing happens until LAZY_FRAGMENTS fragments have piled up since this
        process last compacted the table; then they are merged, and the rows folded into the
        indexes once LAZY_UNINDEXED_ROWS (or a tenth of the table) wait outside them.

        Compacting and indexing are upkeep: when another process's commit comes first (on a shared
        bucket, under load, every few writes), this one stops and the next refresh folds in what is
        left; only data writes are retried until they land.
        """
        try:
            self._fold(spec, lazy=lazy)
        except BaseException as exc:  # noqa: BLE001  (plain errors, Rust panics; only conflicts are upkeep lost)
            if not commit_conflict(exc):
                raise
            self.latest(spec, reopen=panicked(exc))

    def _fold(self, spec: IndexSpec, *, lazy: bool) -> None:
        """The work of `refresh`: indexes first made, new rows compacted and folded in."""
        table = self.table(spec)  # imports LanceDB (storage/lance_import.py) before the line below
        from lancedb.index import FTS, Bitmap, BTree, HnswSq

        self._appends[spec.name] = 0
        if lazy and spec.name in self._settled and self._piled_up(spec, table) < LAZY_FRAGMENTS:
            return
        rows = table.count_rows()
        if rows == 0:
            return
        indexes = list(table.list_indices())
        existing = {tuple(ix.columns) for ix in indexes}
        if spec.text_column and (spec.text_column,) not in existing:
            table.create_index(spec.text_column, config=FTS())
        for column in spec.filter_columns:
            if (column,) not in existing:
                table.create_index(column, config=Bitmap())
        if spec.key_index and (spec.id_column,) not in existing:
            table.create_index(spec.id_column, config=BTree())
        if spec.vector_search and ("vector",) not in existing:
            vectors = table.count_rows("vector IS NOT NULL")
            if vectors >= self.vector_index_min_rows:
                table.create_index("vector", config=HnswSq(distance_type="cosine",
                                                           num_partitions=max(1, vectors // 25_000)))
                self._vector_indexed.add(spec.name)
        unindexed = max((ix.num_unindexed_rows or 0 for ix in indexes), default=0)
        if (rows < SMALL_TABLE_ROWS and not lazy) or unindexed > max(LAZY_UNINDEXED_ROWS if lazy else 10_000,
                                                                     rows // 10):
            table.optimize(cleanup_older_than=timedelta(minutes=10))
        else:
            dataset = table.to_lance()
            dataset.optimize.compact_files(target_rows_per_fragment=COMPACT_TARGET_ROWS)
            if time.monotonic() - self._cleaned.get(spec.name, 0.0) > COMPACTED_KEPT.total_seconds():
                dataset.cleanup_old_versions(older_than=COMPACTED_KEPT)
                self._cleaned[spec.name] = time.monotonic()
            table.checkout_latest()
        self._settled[spec.name] = table.stats()["fragment_stats"]["num_fragments"]

    def latest(self, spec: IndexSpec, *, reopen: bool = False) -> None:
        """Read the table at its newest version (another process committed since); after a Rust panic
        the handle is dropped instead and the next call opens the table afresh, in case the panic left
        its state behind."""
        if reopen:
            self._tables.pop(spec.name, None)
        elif (table := self._tables.get(spec.name)) is not None:
            table.checkout_latest()

    def _piled_up(self, spec: IndexSpec, table: lancedb.table.Table) -> int:
        """Fragments written since this process last compacted the table (reads the manifest only)."""
        return table.stats()["fragment_stats"]["num_fragments"] - self._settled[spec.name]
