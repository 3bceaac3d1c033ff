"""The unit of memory writes a generation pass goes through (`MemoryWrites`), and what its flush
writes: the memories, their links, reviews, graph rows and embedding jobs, in one transaction and
one commit."""

from __future__ import annotations

import json
import logging
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from mnemoflow.errors import BadInputError, VectorsUnavailableError
from mnemoflow.models import EntityRef, LinkDraft, MemoryDraft, MemoryItem
from mnemoflow.storage import batch, fts, outbox
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.connection import Database
from mnemoflow.storage.graph import draft_graph, write_graph
from mnemoflow.storage.lance_index import MEMORY_INDEX, Hit, LanceIndex, sql_in
from mnemoflow.storage.links import insert_links, live_sources, newer_versions_cte, supersede
from mnemoflow.storage.room import Bm25Engine
from mnemoflow.storage.rows import (
    MEMORY_COLUMNS,
    columns,
    epoch,
    lifecycle_sql,
    memory_content_hash,
    memory_item,
    memory_row,
)
from mnemoflow.storage.scope import SCOPE_COLUMNS, Scope, owned, tenant
from mnemoflow.storage.search import SearchHit, lance_where
from mnemoflow.storage.vectors import embed_job
from mnemoflow.timeutil import utcnow

if TYPE_CHECKING:
    from mnemoflow.storage.store import Store


log = logging.getLogger("mnemoflow.storage")


@dataclass
class NewMemory:
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
    embedded: bool = False  # written with its vector (the index's model): no embedding job


@dataclass(frozen=True)
class Reinforced:
    memory_id: str
    sources: tuple[str, ...]
    at: datetime


class MemoryWrites:
    """Memory writes decided one after another, each against what the earlier ones left: a generation
    pass. Get one from `Store.memory_writes`.

    A write is searchable at once: its LanceDB row is added when it is decided, since LanceDB's
    full-text search reads the rows its index has not folded in yet, so the next candidate's BM25
    neighbours include it (as when every memory was its own commit; decisions depend on it). Its
    DuckDB rows wait here, seen by the reads of the pass (`fetch_memories`, the same-content check),
    until `flush` writes all of them in one transaction and one commit: some 30 statements for a
    pass instead of some 25 per memory."""

    def __init__(self, store: Store, db: Database, index: LanceIndex, bm25_engine: Bm25Engine, scope: Scope,
                 actor: str) -> None:
        self._store, self._db, self._index, self._bm25_engine = store, db, index, bm25_engine
        self._scope, self._actor = scope, actor
        self._ops: list[NewMemory | Reinforced] = []  # in the order they were decided
        self._new: dict[str, NewMemory] = {}
        self._superseded: dict[str, datetime] = {}  # stored memories made past versions, not flushed yet
        self._retired: set[str] = set()  # every memory made a past version here, flushed or not
        self._ahead: dict[bytes, tuple[list[Hit], bool]] = {}
        self._ahead_k = 0

    # ------------------------------------------------------------------ writes
    def add(
        self, draft: MemoryDraft, *, links: tuple[LinkDraft, ...] = (), review: tuple[LinkDraft, ...] = (),
        vector: np.ndarray | None = None,
    ) -> tuple[MemoryItem, bool]:
        """A memory with its decided relationships: `links` are applied (an UPDATES makes its target a
        past version, is_latest false and valid_to now, with a `supersedes` relation row; the others
        are link rows), `review` links wait in `review_queue` for a person; the draft's entities,
        relations and categories go with it (`graph.write_graph`). The same content the user already
        holds (stored or added here) is returned instead (False) and nothing is written. A `vector`
        (of the content, by the index's model: what generation computed to find its neighbours)
        is written with the row, so the memory needs no embedding job."""
        scope = self._scope
        now = utcnow()
        content_hash = memory_content_hash(draft.content)
        if (held := self._held(content_hash, now)) is not None:
            return held, False
        targets = [link.target_id for link in (*links, *review) if link.target_id not in self._new]
        if missing := sorted(set(targets) - self._owned(targets)):
            raise BadInputError(f"links name memories {scope} does not hold: {', '.join(missing[:5])}")
        memory_id = f"mem_{uuid.uuid4().hex}"
        entities, relations, categories = draft_graph(scope.tenant_id, memory_id, draft)
        memory = MemoryItem(
            id=memory_id, **scope.stamp(), content=draft.content, kind=draft.kind,
            salience=draft.salience, confidence=draft.confidence, is_latest=True, created_at=now, updated_at=now,
            valid_from=now, expires_at=draft.expires_at, observed_at=draft.observed_at or now,
            event_start_at=draft.event_start_at, event_end_at=draft.event_end_at, temporal_text=draft.temporal_text,
            embedding_status="pending" if vector is None else "done",
            metadata=json.loads(json.dumps(draft.metadata)))  # as DuckDB gives it back
        try:
            self._index.append(MEMORY_INDEX, columns([memory_row(scope, memory, content_hash)]),
                               None if vector is None else vector.reshape(1, -1))
        except VectorsUnavailableError as exc:  # the bucket is down: the memory waits for its embedding job,
            log.warning("memory written, its index row waits for the vectors: %s", exc)  # which writes the row
            vector, memory = None, memory.model_copy(update={"embedding_status": "pending"})
        new = NewMemory(memory, content_hash, draft, now, links, review, entities, relations, categories,
                        embedded=vector is not None)
        superseded = [link.target_id for link in links if link.type == "UPDATES"]
        for target in superseded:
            self._supersede(target, now)
        if superseded:
            try:
                self._index.update(MEMORY_INDEX, sql_in("memory_id", superseded), {"is_latest": False})
            except VectorsUnavailableError as exc:  # recall's final gate reads is_latest from the system of record
                log.warning("superseded memories keep a stale index flag until reembed: %s", exc)
        self._new[memory_id] = new
        self._ops.append(new)
        return memory, True

    def reinforce(self, memory_id: str, sources: tuple[str, ...]) -> bool:
        """The same thing said again: count it and cite the new sources; False when the user does not
        hold the memory."""
        if memory_id not in self._new and not self._owned([memory_id]):
            return False
        self._ops.append(Reinforced(memory_id, tuple(sources), utcnow()))
        return True

    def flush(self, completes: tuple[str, ...] = ()) -> None:
        """Write what is waiting in one transaction and one commit, marking the outbox jobs
        `completes` done in it."""
        if not self._ops:
            if completes:
                with self._db.tx() as con:
                    outbox.complete(con, list(completes), utcnow())
            return
        inputs = [op.content_hash if isinstance(op, NewMemory) else
                  sha256_json({"reinforce": op.memory_id, "sources": op.sources}) for op in self._ops]
        pending = PendingCommit(self._scope.tenant_id, self._actor,
                                inputs[0] if len(inputs) == 1 else sha256_json(inputs), _message(self._ops))
        write_pass(self._db, self._index.model, self._scope, self._ops, self._superseded, pending, completes)
        self._ops, self._new, self._superseded = [], {}, {}

    def discard(self) -> None:
        """Take back from LanceDB what waiting writes put there (DuckDB never saw them)."""
        index = self._index
        if self._new:
            index.delete(MEMORY_INDEX, sql_in("memory_id", list(self._new)))
        if self._superseded:
            with self._db.read() as con, batch.id_set(con, list(self._superseded)) as ids:
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
        if self._bm25_engine == "duckdb":
            self.flush()
        return self._store.bm25_search(self._scope, "memories", query, k)

    def search_ahead(self, vectors: list[np.ndarray], k: int) -> None:
        """Vector hits for what the pass will search, in one query: `vector_search` answers from them.
        The hits are of stored memories (the pass's own writes are the caller's to compare with:
        `MemoryGenerator.written`); the writes make stored memories past versions, dropped from the
        hits, so each vector's search takes 2k hits."""
        where = lance_where(self._scope, "memories")
        found = self._index.vector_search_many(MEMORY_INDEX, vectors, where, 2 * k, ("active_until",))
        self._ahead = {v.tobytes(): (hits, len(hits) == 2 * k) for v, hits in zip(vectors, found)}
        self._ahead_k = k

    def vector_search(self, vector: np.ndarray, k: int) -> list[SearchHit]:
        """`Store.vector_search` over the scope's memories, from `search_ahead`'s hits when they still
        hold k current ones (a search of its own otherwise)."""
        ahead = self._ahead.get(vector.tobytes()) if k == self._ahead_k else None
        if ahead is not None:
            hits, more = ahead
            now = epoch(utcnow())
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
        mine, params = owned(self._scope)
        gate, gate_params = lifecycle_sql()
        with self._db.read() as con:
            rows = con.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {mine} AND content_hash = ?{gate}",
                               [*params, content_hash, *gate_params]).fetchall()
        return next((memory_item(r) for r in rows if r[0] not in self._superseded), None)

    def past_version(self, content: str) -> MemoryItem | None:
        """A past version (superseded, not deleted) of the user's with exactly this content, while no active
        memory holds it: what was true before, said again."""
        content_hash = memory_content_hash(content)
        now = utcnow()
        if self._held(content_hash, now) is not None:
            return None
        for n in self._new.values():
            if n.content_hash == content_hash and n.retired_at is not None:
                return n.memory
        mine, params = owned(self._scope)
        with self._db.read() as con:
            rows = con.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {mine} AND content_hash = ? "
                               "AND deleted_at IS NULL ORDER BY valid_to DESC NULLS FIRST", [*params, content_hash]).fetchall()
        past = [memory_item(r) for r in rows]
        return next((m for m in past if not m.is_latest or m.id in self._superseded), None)

    def _owned(self, memory_ids: list[str]) -> set[str]:
        """Which of `memory_ids` the user holds stored, not deleted."""
        if not memory_ids:
            return set()
        mine, params = owned(self._scope)
        with self._db.read() as con, batch.id_set(con, memory_ids) as ids:
            return {r[0] for r in con.execute(
                f"SELECT memory_id FROM memories WHERE {mine} AND deleted_at IS NULL AND memory_id IN {ids}",
                params).fetchall()}


def _message(ops: list[NewMemory | Reinforced]) -> str:
    added = sum(isinstance(op, NewMemory) for op in ops)
    reinforced = len(ops) - added
    parts = ["add memory" if added == 1 else f"add {added} memories"] if added else []
    if reinforced:
        parts.append("reinforce memory" if reinforced == 1 else f"reinforce {reinforced} memories")
    return "; ".join(parts)


def _link_rows(op: NewMemory | Reinforced) -> list[list[Any]]:
    """(src, dst, type, confidence, decided_by, reason, created_at) of what one write links: the
    EXTRACTED_FROM links to its sources, then a new memory's decided links."""
    if isinstance(op, Reinforced):
        return [[op.memory_id, dst, "EXTRACTED_FROM", 1.0, "auto", None, op.at] for dst in sorted(set(op.sources))]
    return ([[op.memory.id, dst, "EXTRACTED_FROM", 1.0, "auto", None, op.at] for dst in sorted(set(op.draft.derived_from))]
            + [[op.memory.id, link.target_id, link.type, link.confidence, link.decided_by, link.reason, op.at]
               for link in op.links])


def follow_newer_versions(con: duckdb.DuckDBPyConnection, scope: Scope, new: list[NewMemory],
                          superseded: dict[str, datetime]) -> None:
    """Two writers replacing one memory at once (two servers, two workers): the tenant's write lock
    orders them, and the later one finds its target already a past version. It replaces the version
    that replaced it instead, so the later write wins and the version chain stays one line (never two
    current versions of one memory)."""
    stale = [memory_id for memory_id in superseded if memory_id not in {n.memory.id for n in new}]
    if not stale:
        return
    mine, params = owned(scope, "m")
    links, link_params = tenant(scope.tenant_id, "l")
    with batch.id_rows(con, stale) as ids:
        rows = con.execute(
            f"""
            WITH RECURSIVE {newer_versions_cte(ids, links)}
            SELECT c.origin, c.memory_id FROM chain c JOIN memories m ON m.memory_id = c.memory_id
            WHERE c.hops > 0 AND {mine} AND m.is_latest AND m.deleted_at IS NULL
            ORDER BY c.origin, c.hops
            """, [*link_params, *params]).fetchall()
    newest = dict(rows)  # an origin still current has no newer version: only past ones are in `rows`
    for old, current in newest.items():
        superseded[current] = superseded.pop(old)
        for n in new:
            n.links = tuple(replace(link, target_id=current) if link.type == "UPDATES" and link.target_id == old
                            else link for link in n.links)


def write_pass(
    db: Database, model: str, scope: Scope, ops: list[NewMemory | Reinforced], superseded: dict[str, datetime],
    pending: PendingCommit, completes: tuple[str, ...] = (),
) -> None:
    """The DuckDB side of `MemoryWrites.flush`, in one transaction with set-based statements: the
    new memories (those superseded by a later one of the same unit already as past versions),
    reinforcements, EXTRACTED_FROM and decided links with what an UPDATES does to a stored target
    (`superseded`), reviews, graph rows, embedding jobs (of memories written without their vector), the
    outbox jobs the pass completes, the commit."""
    stamp, commit = list(scope.stamp().values()), pending.commit_id
    new = [op for op in ops if isinstance(op, NewMemory)]
    reinforced = [op for op in ops if isinstance(op, Reinforced)]
    counts = Counter(r.memory_id for r in reinforced)
    with db.tx(pending.tenant_id) as con:
        follow_newer_versions(con, scope, new, superseded)
        wanted = {s for op in ops for s in (op.draft.derived_from if isinstance(op, NewMemory) else op.sources)}
        if missing := sorted(wanted - live_sources(con, scope, wanted)):
            raise BadInputError(f"derived_from names what {scope} does not hold: {', '.join(missing[:5])}")
        batch.insert(
            con, "memories",
            ["memory_id", *SCOPE_COLUMNS, "shared", "content", "content_hash", "kind", "salience",
             "confidence", "is_latest", "valid_from", "valid_to", "expires_at", "observed_at", "event_start_at",
             "event_end_at", "temporal_text", "tier", "metadata", "embedding_status", "embedding_model",
             "created_at", "updated_at", "commit_id", "reinforcement"],
            [[m.id, *stamp, False, m.content, n.content_hash, m.kind, m.salience, m.confidence,
              m.is_latest, m.valid_from, m.valid_to, m.expires_at, m.observed_at, m.event_start_at, m.event_end_at,
              m.temporal_text, "L0", json.dumps(n.draft.metadata), m.embedding_status, model if n.embedded else None,
              m.created_at, m.updated_at, commit, counts.get(m.id, 0)] for n in new for m in (n.memory,)],
        )
        pending.record("memories", "insert", [n.memory.id for n in new])
        written = {n.memory.id for n in new}
        if stored := [[mid, times] for mid, times in counts.items() if mid not in written]:
            with batch.registered(con, ["memory_id", "times"], stored) as b:
                con.execute(f"UPDATE memories SET reinforcement = coalesce(reinforcement, 0) + b.times FROM {b} b "
                            "WHERE memories.memory_id = b.memory_id")
        insert_links(con, scope, [row for op in ops for row in _link_rows(op)], pending)
        supersede(con, scope, [(n.memory.id, link, n.at) for n in new for link in n.links if link.type == "UPDATES"],
                  superseded, pending)
        batch.insert(con, "review_queue", ["review_id", *SCOPE_COLUMNS, "src", "dst", "proposed_type",
                                           "confidence", "reason", "status", "created_at"],
                     [[f"rev_{uuid.uuid4().hex}", *stamp, n.memory.id, link.target_id, link.type,
                       link.confidence, link.reason, "open", n.at] for n in new for link in n.review])
        write_graph(con, scope, new, pending)
        waiting = [n for n in new if not n.embedded]
        outbox.enqueue(con, [embed_job(model, scope, "memories", n.memory.id, n.content_hash) for n in waiting],
                       [n.at for n in waiting])
        outbox.complete(con, list(completes), utcnow())
        if new:
            fts.mark_dirty(con, fts.MEMORIES_FTS)
        if not pending.empty:
            write_commit(con, pending, utcnow())
