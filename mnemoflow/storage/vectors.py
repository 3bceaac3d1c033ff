"""Vectors: embedding jobs in the outbox, the content-addressed vector cache, and writing vectors
to LanceDB with their DuckDB rows marked done. Also the claims of the memory generation jobs,
which share the outbox's leases and attempts."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from cachetools import LRUCache

from mnemoflow.models import TurnRecord
from mnemoflow.storage import batch, outbox
from mnemoflow.storage.commits import sha256_json
from mnemoflow.storage.lance_index import CHUNK_INDEX, EMBEDDING_CACHE, INDEX_OF, MEMORY_INDEX, SUMMARY_INDEX, sql_in
from mnemoflow.storage.outbox import Job
from mnemoflow.storage.room import Room, Target
from mnemoflow.storage.rows import (
    CHUNK_INDEX_SELECT,
    MEMORY_COLUMNS,
    active_until,
    chunk_index_row,
    columns,
    memory_item,
    memory_row,
    summary_index_row,
)
from mnemoflow.storage.scope import SCOPE_COLUMNS, Scope, lance_owned, lance_visible, owned, row_scope, stamped
from mnemoflow.timeutil import utcnow

EMBED_JOB = "embed"
GENERATE_JOB = "generate"
RECENT_VECTORS = 10_000  # vectors a process keeps at hand (384-d: 15 MB)
UNSAVED_VECTORS = 64  # new cache vectors held back until this many, then written to LanceDB at once


class RecentVectors:
    """The vectors this process used last, by cache key: a direct `add` compares its candidates with
    memories written moments before, whose vectors a LanceDB lookup would fetch again at the cost of
    a search (~8 ms). New vectors wait here to be written to the LanceDB cache in one append
    (`Vectors.save_cached_vectors`) instead of one per add: the cache is derived, so a process that
    dies loses only the chance to reuse them. Thread-safe: a server's requests and its outbox worker
    share it."""

    def __init__(self, capacity: int = RECENT_VECTORS) -> None:
        self._items: LRUCache[str, np.ndarray] = LRUCache(maxsize=capacity)
        self._unsaved: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> np.ndarray | None:
        with self._lock:
            found = self._items.get(key)
            return self._unsaved.get(key) if found is None else found

    def put(self, key: str, vector: np.ndarray, *, unsaved: bool = False) -> np.ndarray:
        with self._lock:
            self._items[key] = vector
            if unsaved:
                self._unsaved[key] = vector
        return vector

    def waiting(self) -> int:
        with self._lock:
            return len(self._unsaved)

    def take_unsaved(self) -> dict[str, np.ndarray]:
        with self._lock:
            taken, self._unsaved = self._unsaved, {}
        return taken

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._unsaved.clear()

    def forget(self, keys: list[str]) -> None:
        """Content no row holds any more (a purge): its vectors go from memory as from the LanceDB cache."""
        with self._lock:
            for key in keys:
                self._items.pop(key, None)
                self._unsaved.pop(key, None)


@dataclass(frozen=True)
class EmbeddingInput:
    """A row waiting for its vector: what to embed and what LanceDB must carry beside it."""

    job_key: str
    row_id: str
    text: str
    content_hash: str
    columns: dict[str, Any]


def embed_job(model: str, scope: Scope, target: Target, row_id: str, content_hash: str) -> Job:
    """The job that gives a row its vector under `model`; its key names the content, so a changed
    row queues a new job and the old one turns moot."""
    return Job(
        job_key=f"{EMBED_JOB}:{target}:{row_id}:{content_hash[:16]}:{model}",
        scope=scope, kind=EMBED_JOB,
        payload={"target": target, "id": row_id, "content_hash": content_hash, "model": model},
        attempts=0,
    )


def generation_jobs(scope: Scope, turns: list[TurnRecord]) -> list[Job]:
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
            job_key=f"{GENERATE_JOB}:{document_id}:{digest}", scope=scope, kind=GENERATE_JOB, attempts=0,
            payload={"document_id": document_id, "session_id": group[0].session_id,
                     "turn_ids": [t.turn_id for t in group],
                     "first_ts": group[0].ts.isoformat() if group[0].ts else None}))
    return jobs


class Vectors(Room):
    @property
    def embedding_model(self) -> str:
        return self._index.model

    def claim_embedding_jobs(self, limit: int) -> list[Job]:
        return self._claim(EMBED_JOB, limit)

    def claim_generation_jobs(self, limit: int) -> list[Job]:
        """Sessions with turns memory generation has not read, oldest first."""
        return self._claim(GENERATE_JOB, limit)

    def _claim(self, kind: str, limit: int) -> list[Job]:
        """On a shared store PostgreSQL claims (any number of processes take different jobs), and this
        process beats from its first claim on, so that its leases are taken over if it dies."""
        if self._heartbeat is None:
            with self._db.tx() as con:
                return outbox.claim(con, kind, limit, self._lease_s, utcnow())
        self._heartbeat.ensure_started()
        rows = self._db.postgres.claim(kind, limit, self._lease_s, utcnow(), outbox.worker_id(),
                                       self._heartbeat.silent_after_s, one_worker_per_owner=kind == GENERATE_JOB)
        return [outbox.job_of(row) for row in rows]

    def embedding_inputs(self, scope: Scope, target: Target, jobs: list[Job]) -> tuple[list[EmbeddingInput], list[str]]:
        """Rows behind `jobs` that still need this vector, and the keys of jobs that are moot.

        A job is moot when its row was deleted or its content changed since (a newer job exists).
        """
        wanted = {j.payload["id"]: j for j in jobs}
        found = [EmbeddingInput(wanted[row_id].job_key, row_id, *held)
                 for row_id, held in self._index_rows(scope, target, list(wanted)).items()]
        live = [i for i in found if i.content_hash == wanted[i.row_id].payload["content_hash"]]
        live_keys = {i.job_key for i in live}
        return live, [j.job_key for j in jobs if j.job_key not in live_keys]

    def _index_rows(self, scope: Scope, target: Target,
                    row_ids: list[str]) -> dict[str, tuple[str, str, dict[str, Any]]]:
        """Each live row's text, content hash and the columns LanceDB carries beside its vector, as DuckDB
        holds them now."""
        with self._db.read() as con, batch.id_set(con, row_ids) as ids:
            if target == "chunks":
                mine, params = owned(scope, "c")
                rows = con.execute(f"{CHUNK_INDEX_SELECT} WHERE {mine} AND c.deleted_at IS NULL "
                                   f"AND c.chunk_id IN {ids}", params).fetchall()
                return {r[0]: (r[1], r[3], chunk_index_row(scope, *r)) for r in rows}
            if target == "summaries":
                mine, params = owned(scope)
                rows = con.execute(
                    f"SELECT summary_id, content, content_hash, level, subject_kind FROM summaries "
                    f"WHERE {mine} AND retired_at IS NULL AND summary_id IN {ids}", params).fetchall()
                return {r[0]: (r[1], r[2], summary_index_row(r[3], r[4], r[1])) for r in rows}
            mine, params = owned(scope)
            rows = con.execute(
                f"SELECT memory_id, content, content_hash, shared, is_latest, valid_to, expires_at, archived_at "
                f"FROM memories WHERE {mine} AND deleted_at IS NULL AND memory_id IN {ids}", params).fetchall()
            return {r[0]: (r[1], r[2], {"shared": r[3], "is_latest": r[4], "deleted": False,
                                        "active_until": active_until(r[5], r[6], r[7]), "text": r[1]})
                    for r in rows}

    def reset_vectors_for_model(self) -> int:
        """A model change is a re-embed: drop the LanceDB tables, mark every live row pending under the
        configured model, queue its job, and re-seed the search text so BM25 answers meanwhile.
        Returns the rows queued."""
        for spec in (*INDEX_OF.values(), EMBEDDING_CACHE):
            self._index.drop(spec)
        self._recent.clear()
        stamp = ", ".join(SCOPE_COLUMNS)
        with self._db.read() as con:
            scopes = con.execute(
                f"SELECT DISTINCT {stamp} FROM chunks WHERE deleted_at IS NULL UNION "
                f"SELECT DISTINCT {stamp} FROM memories WHERE deleted_at IS NULL UNION "
                f"SELECT DISTINCT {stamp} FROM summaries WHERE retired_at IS NULL").fetchall()
        return sum(self._requeue_scope(row_scope(row)) for row in scopes)

    def _requeue_scope(self, scope: Scope) -> int:
        """The rows stamped exactly `scope` (a narrower scope's rows are its own group)."""
        mine, params = stamped(scope)
        chunks_mine, _ = stamped(scope, "c")
        model, now = self._index.model, utcnow()
        with self._db.tx() as con:
            chunks = con.execute(f"{CHUNK_INDEX_SELECT} WHERE {chunks_mine} AND c.deleted_at IS NULL",
                                 params).fetchall()
            memories = [(memory_item(r[:-2]), *r[-2:]) for r in con.execute(
                f"SELECT {MEMORY_COLUMNS}, content_hash, shared FROM memories WHERE {mine} AND deleted_at IS NULL",
                params).fetchall()]
            summaries = con.execute(
                f"SELECT summary_id, content, content_hash, level, subject_kind FROM summaries "
                f"WHERE {mine} AND retired_at IS NULL", params).fetchall()
            for table in ("chunks", "memories"):
                con.execute(f"UPDATE {table} SET embedding_status = 'pending', embedding_model = NULL "
                            f"WHERE {mine} AND deleted_at IS NULL", params)
            con.execute("UPDATE summaries SET embedding_status = 'pending', embedding_model = NULL "
                        f"WHERE {mine} AND retired_at IS NULL", params)
            outbox.requeue(con, [embed_job(model, scope, "chunks", c[0], c[3]) for c in chunks]
                           + [embed_job(model, scope, "memories", m.id, digest) for m, digest, _ in memories]
                           + [embed_job(model, scope, "summaries", r[0], r[2]) for r in summaries], now)
        self._index.upsert(CHUNK_INDEX, columns([chunk_index_row(scope, *c) for c in chunks]))
        self._index.upsert(MEMORY_INDEX, columns([memory_row(scope, *memory) for memory in memories]))
        self._index.upsert(SUMMARY_INDEX, columns([
            {"summary_id": r[0], **scope.stamp(), "content_hash": r[2],
             **summary_index_row(r[3], r[4], r[1])} for r in summaries]))
        return len(chunks) + len(memories) + len(summaries)

    def cached_vectors(self, content_hashes: list[str]) -> dict[str, np.ndarray]:
        """Vectors already computed by this model for these content hashes (content-addressed, no tenant
        data): those this process used lately from memory, the others from the LanceDB cache."""
        model = self._index.model
        found = {h: v for h in set(content_hashes) if (v := self._recent.get(f"{model}:{h}")) is not None}
        keys = [f"{model}:{h}" for h in set(content_hashes) - set(found)]
        if keys:
            # every row of each key: a key two writers cached at once is held twice (same vector)
            table = self._index.lookup(EMBEDDING_CACHE, sql_in("cache_key", keys), ["cache_key", "vector"], None)
            for key, vec in zip(table.column("cache_key").to_pylist(), table.column("vector").to_pylist()):
                found[key[len(model) + 1:]] = self._recent.put(key, np.asarray(vec, dtype=np.float32))
        return found

    def cache_vectors(self, content_hashes: list[str], vectors: np.ndarray) -> None:
        """Cache the vectors of content `cached_vectors` found no vector for: at hand at once, written
        to LanceDB once UNSAVED_VECTORS wait (a batch's at once; a direct add's every few dozen calls)."""
        for h, vector in zip(content_hashes, vectors):
            self._recent.put(f"{self._index.model}:{h}", np.asarray(vector, dtype=np.float32), unsaved=True)
        if self._recent.waiting() >= UNSAVED_VECTORS:
            self.save_cached_vectors()

    def save_cached_vectors(self) -> None:
        """Write the cache vectors held back to LanceDB: appended, a third of an upsert's cost (which
        looks every key up first)."""
        if unsaved := self._recent.take_unsaved():
            self._index.append(EMBEDDING_CACHE, {"cache_key": list(unsaved)}, np.stack(list(unsaved.values())))

    def store_embeddings(self, scope: Scope, target: Target, inputs: list[EmbeddingInput], vectors: np.ndarray) -> None:
        """Write vectors to LanceDB, then mark the DuckDB rows embedded and their jobs done."""
        if not inputs:
            return
        spec = INDEX_OF[target]
        self._index.upsert(spec, columns([
            {spec.id_column: item.row_id, **scope.stamp(), "content_hash": item.content_hash, **item.columns}
            for item in inputs
        ]), vectors)
        self._settle_index_columns(scope, target, inputs)
        mine, params = owned(scope)
        with self._db.tx() as con, batch.id_set(con, [i.row_id for i in inputs]) as ids:
            con.execute(
                f"UPDATE {target} SET embedding_status = 'done', embedding_model = ? "
                f"WHERE {mine} AND {spec.id_column} IN {ids}", [self._index.model, *params])
            outbox.complete(con, [i.job_key for i in inputs], utcnow())

    def _settle_index_columns(self, scope: Scope, target: Target, written: list[EmbeddingInput]) -> None:
        """Write again the columns a flag change (share, supersede, delete, archive) made while these
        vectors were computed: it wrote DuckDB, then LanceDB, and the upsert above put back what the
        job had read before it. Read after the upsert, DuckDB has every change committed before it, and
        any later one updates LanceDB after the upsert itself, so the row ends as DuckDB holds it."""
        spec = INDEX_OF[target]
        held = self._index_rows(scope, target, [i.row_id for i in written])
        changes: dict[tuple[tuple[str, Any], ...], list[str]] = defaultdict(list)
        for item in written:
            current = held[item.row_id][2] if item.row_id in held else {"deleted": True}
            changed = tuple(sorted((k, v) for k, v in current.items() if item.columns.get(k) != v))
            if changed:
                changes[changed].append(item.row_id)
        for changed, row_ids in changes.items():
            self._index.update(spec, sql_in(spec.id_column, row_ids), dict(changed))

    def complete_jobs(self, keys: list[str]) -> None:
        with self._db.tx() as con:
            outbox.complete(con, keys, utcnow())

    def fail_jobs(self, keys: list[str], error: str) -> None:
        with self._db.tx() as con:
            outbox.fail(con, keys, error, self._max_attempts, utcnow(), base_s=self._backoff_s,
                        max_s=self._backoff_max_s)

    def release_jobs(self, keys: list[str], error: str) -> None:
        with self._db.tx() as con:
            outbox.release(con, keys, error, utcnow())

    def outbox_counts(self) -> dict[str, int]:
        with self._db.read() as con:
            return outbox.counts(con)

    def index_ids(self, target: Target, scope: Scope | None = None) -> list[str]:
        """Ids of the LanceDB rows of the target, all or the scope's own (checks compare them with DuckDB)."""
        spec = INDEX_OF[target]
        where = lance_owned(scope) if scope is not None else "true"
        rows = self._index.count(spec, None if scope is None else where)
        if not rows:
            return []
        return self._index.lookup(spec, where, [spec.id_column], rows).column(spec.id_column).to_pylist()

    def stored_vectors(self, scope: Scope, target: Target, ids: list[str]) -> dict[str, np.ndarray]:
        """The vectors LanceDB holds for these rows of the target, those the scope may see (debug output)."""
        if not ids:
            return {}
        spec = INDEX_OF[target]
        found = self._index.lookup(spec, f"{lance_visible(scope)} AND {sql_in(spec.id_column, ids)}",
                                   [spec.id_column, "vector"], len(ids))
        return {row_id: np.asarray(vector, dtype=np.float32) for row_id, vector in
                zip(found.column(spec.id_column).to_pylist(), found.column("vector").to_pylist(), strict=True)
                if vector is not None}

    def vector_count(self, target: Target) -> int:
        """Rows of the target that carry a vector (all tenants; for benchmarks and checks)."""
        return self._index.count(INDEX_OF[target], "vector IS NOT NULL")
