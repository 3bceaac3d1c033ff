"""The tenant-scoped store: the only door to DuckDB and LanceDB.

`Store` is the rooms of the storage package together, one per concept (documents, memories,
graph, entity reads, conflicts, reviews, keys, vectors, search, the memory tree's summaries, topics
and profiles, analytics, lifecycle, purge, queue, quality, evals, versions, transfer, procedural rules);
callers see only `Store`. Every method
that reads or writes tenant data takes a `Scope` (or, for tenant-wide operations, a tenant id), and
every tenant or user predicate comes from `scope.py`.
Reads see the user's rows and the tenant's shared rows; writes touch only the user's rows.
Each write is one DuckDB transaction that also appends a commit and enqueues its derived work
in the outbox; LanceDB follows after the transaction (memory writes turn that round: see
`memory_writes.MemoryWrites`).
"""

from __future__ import annotations

import logging
import threading

from mnemoflow.errors import VectorsUnavailableError
from mnemoflow.storage.analytics import Analytics
from mnemoflow.storage.commits import VerifyReport, verify_tenant
from mnemoflow.storage.conflicts import Conflicts
from mnemoflow.storage.connection import Database
from mnemoflow.storage.documents import Documents
from mnemoflow.storage.entity_reads import EntityReads
from mnemoflow.storage.evals import EvalRuns
from mnemoflow.storage.graph import Graph
from mnemoflow.storage.heartbeat import Heartbeat
from mnemoflow.storage.keys import Keys
from mnemoflow.storage.lance_index import LanceIndex
from mnemoflow.storage.lifecycle import Lifecycle
from mnemoflow.storage.memories import Memories
from mnemoflow.storage.memory_writes import MemoryWrites
from mnemoflow.storage.profiles import Profiles
from mnemoflow.storage.purge import Purge
from mnemoflow.storage.quality import QualityData
from mnemoflow.storage.queue import Queue
from mnemoflow.storage.reviews import Reviews
from mnemoflow.storage.room import Bm25Engine, Target
from mnemoflow.storage.rules import Rules
from mnemoflow.storage.rows import memory_content_hash, search_text
from mnemoflow.storage.scope import Scope, owned, tenant, visible
from mnemoflow.storage.search import ChunkHit, Search, SearchHit
from mnemoflow.storage.summaries import Summaries
from mnemoflow.storage.topics import Topics
from mnemoflow.storage.transfer import Transfer
from mnemoflow.storage.vectors import EmbeddingInput, RecentVectors, Vectors
from mnemoflow.storage.versions import Versions

__all__ = ["ChunkHit", "EmbeddingInput", "MemoryWrites", "SearchHit", "Store", "Target", "memory_content_hash",
           "search_text"]


log = logging.getLogger("mnemoflow.storage")


class Store(Documents, Memories, Versions, Transfer, Graph, EntityReads, Conflicts, Reviews, Keys, Vectors, Search,
            Summaries, Topics, Profiles, Analytics, Lifecycle, Purge, Queue, QualityData, EvalRuns, Rules):
    """One DuckDB connection (one unit of work or one long-lived server) plus the LanceDB tables."""

    def __init__(
        self, db: Database, index: LanceIndex, *, max_attempts: int, lease_s: float,
        bm25_engine: Bm25Engine = "lancedb", backoff_s: float = 30.0, backoff_max_s: float = 3600.0,
        access_flush_s: float = 5.0, heartbeat_s: float = 5.0, rewrite_after_purge: bool = True,
        lock_timeout_s: float = 30.0,
    ) -> None:
        self._db = db
        self._index = index
        self._recent = RecentVectors()
        self._bm25_engine = bm25_engine
        self._max_attempts = max_attempts
        self._lease_s = lease_s
        self._landing = threading.RLock()
        self._backoff_s = backoff_s
        self._backoff_max_s = backoff_max_s
        self._access_flush_s = access_flush_s
        self._access_lock = threading.Lock()
        self._accesses = {}
        self._accesses_since = None
        self._rewrite_after_purge = rewrite_after_purge
        self._lock_timeout_s = lock_timeout_s
        self._sql_served: tuple[str, str] | None = None  # the SQL endpoint's (uri, token) while served
        self._heartbeat = Heartbeat(db.postgres, heartbeat_s) if db.postgres is not None else None

    def set_role(self, role: str) -> None:
        """What this process is, as the `workers` table shows it on a shared store (server, worker)."""
        if self._heartbeat is not None:
            self._heartbeat.role = role

    @property
    def shared(self) -> bool:
        """Whether other processes write this store too (PostgreSQL and a bucket, not the home's files)."""
        return self._db.postgres is not None

    def close(self) -> None:
        try:
            self.flush_accesses()
            self.save_cached_vectors()
        except VectorsUnavailableError as exc:  # the vectors wait in the outbox; the cache fills again later
            log.warning("closing with the vectors unavailable: %s", exc)
        finally:
            if self._heartbeat is not None:
                self._heartbeat.stop()
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ integrity and stats
    def verify(self, tenant_id: str) -> VerifyReport:
        with self._db.read() as con:
            return verify_tenant(con, tenant_id)

    def tenants(self) -> list[str]:
        with self._db.read() as con:
            return [r[0] for r in con.execute("SELECT DISTINCT tenant_id FROM commits ORDER BY 1").fetchall()]

    def memory_users(self, tenant_id: str) -> list[str]:
        """The users of a tenant who hold memories (deleted ones too: their tree may need retiring)."""
        within, params = tenant(tenant_id)
        with self._db.read() as con:
            return [r[0] for r in con.execute(
                f"SELECT DISTINCT user_id FROM memories WHERE {within} ORDER BY 1", params).fetchall()]

    def counts(self, scope: Scope) -> dict[str, int]:
        """Live rows per table inside the scope."""
        where, params = visible(scope)
        mine, mine_params = owned(scope)
        with self._db.read() as con:
            return {
                "documents": con.execute(
                    f"SELECT count(*) FROM source_documents WHERE {where} AND deleted_at IS NULL", params).fetchone()[0],
                "chunks": con.execute(
                    f"SELECT count(*) FROM chunks WHERE {where} AND deleted_at IS NULL", params).fetchone()[0],
                "turns": con.execute(f"SELECT count(*) FROM turns WHERE {mine}", mine_params).fetchone()[0],
                "memories": con.execute(
                    f"SELECT count(*) FROM memories WHERE {where} AND deleted_at IS NULL", params).fetchone()[0],
                "pending_embeddings": con.execute(
                    f"SELECT (SELECT count(*) FROM chunks WHERE {where} AND deleted_at IS NULL AND "
                    f"embedding_status = 'pending') + (SELECT count(*) FROM memories WHERE {where} AND "
                    "deleted_at IS NULL AND embedding_status = 'pending')", [*params, *params]).fetchone()[0],
                "ingest_errors": con.execute(
                    f"SELECT count(*) FROM ingest_errors WHERE {mine}", mine_params).fetchone()[0],
            }
