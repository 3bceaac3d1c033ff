"""Memories: reading them inside a scope and its lifecycle (the final gate of recall), their
links and versions, deleting one, and the unit of writes a generation pass goes through
(`memory_writes`, see `memory_writes.MemoryWrites`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mnemoflow.filters import Filter
from mnemoflow.models import LinkDraft, MemoryDraft, MemoryItem
from mnemoflow.storage import batch, fts
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.lance_index import MEMORY_INDEX, sql_in
from mnemoflow.storage.links import newer_versions_cte, retire_relations
from mnemoflow.storage.memory_writes import MemoryWrites
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import MEMORY_COLUMNS, active_memory_sql, lifecycle_sql, memory_item
from mnemoflow.storage.memory_filters import filter_sql
from mnemoflow.storage.scope import SCOPE_COLUMNS, Scope, lance_owned, owned, row_scope, tenant, visible
from mnemoflow.timeutil import utcnow


class Memories(Room):
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
    def memory_writes(self, scope: Scope, *, actor: str, completes: tuple[str, ...] = ()) -> Iterator[MemoryWrites]:
        """Memory writes decided one after another (a generation pass), written together when the
        block ends: one transaction, one commit, which also marks the outbox jobs `completes` done
        (the pass is their work: a process that dies after it never does them again). When the
        block fails none of them stays, in DuckDB or in LanceDB."""
        writes = MemoryWrites(self, self._db, self._index, self._bm25_engine, scope, actor)
        try:
            yield writes
            writes.flush(completes)
        except BaseException:
            writes.discard()
            raise

    def drop_unflushed_memories(self, scope: Scope) -> int:
        """Remove the user's LanceDB memory rows that DuckDB does not hold: what `MemoryWrites` added
        for writes whose process died before their flush (a failure short of that takes them back
        itself). Run before a generation job is tried again; returns how many went."""
        mine = lance_owned(scope)
        rows = self._index.count(MEMORY_INDEX, mine)
        if not rows:
            return 0
        ids = self._index.lookup(MEMORY_INDEX, mine, ["memory_id"], rows).column("memory_id").to_pylist()
        with self._db.read() as con, batch.id_set(con, ids) as wanted:
            held = {r[0] for r in con.execute(f"SELECT memory_id FROM memories WHERE memory_id IN {wanted}").fetchall()}
        gone = [i for i in ids if i not in held]
        if gone:
            self._index.delete(MEMORY_INDEX, sql_in("memory_id", gone))
        return len(gone)

    def get_memory(self, scope: Scope, memory_id: str) -> MemoryItem | None:
        where, params = visible(scope)
        with self._db.read() as con:
            row = con.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {where} AND memory_id = ?", [*params, memory_id]
            ).fetchone()
        return memory_item(row) if row else None

    def list_memories(
        self, scope: Scope, *, limit: int = 100, include_inactive: bool = False, where: Filter | None = None,
    ) -> list[MemoryItem]:
        """The scope's memories, newest first: current ones, or with `include_inactive` past versions
        and expired ones too (deleted ones as well); `where` narrows them (`mnemoflow.filters`)."""
        sql, params = visible(scope, "m")
        if not include_inactive:
            now = utcnow()
            sql, params = f"{sql} AND {active_memory_sql('m')}", [*params, now, now]
        if where is not None:
            narrowed, narrowed_params = filter_sql(where, "m")
            sql, params = f"{sql} AND {narrowed}", [*params, *narrowed_params]
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {sql} ORDER BY created_at DESC, memory_id LIMIT ?",
                [*params, limit],
            ).fetchall()
        return [memory_item(r) for r in rows]

    def unembedded_memories(self, scope: Scope) -> list[MemoryItem]:
        """The user's memories waiting for their vector, oldest first: what a vector search cannot
        find yet (memory generation bridges that gap itself, `MemoryGenerator.resume`)."""
        mine, params = owned(scope)
        with self._db.read() as con:
            rows = con.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {mine} AND deleted_at IS NULL "
                "AND embedding_status = 'pending' ORDER BY created_at, memory_id", params).fetchall()
        return [memory_item(r) for r in rows]

    def matching_memory_ids(self, scope: Scope, where: Filter) -> list[str]:
        """Every current memory of the scope that `where` holds for (what a filtered search may return)."""
        sql, params = visible(scope, "m")
        gate, gate_params = lifecycle_sql("m")
        narrowed, narrowed_params = filter_sql(where, "m")
        with self._db.read() as con:
            return [r[0] for r in con.execute(
                f"SELECT m.memory_id FROM memories m WHERE {sql}{gate} AND {narrowed}",
                [*params, *gate_params, *narrowed_params]).fetchall()]

    def memory_owner(self, tenant_id: str, memory_id: str) -> Scope | None:
        """The scope that wrote a memory of the tenant: for calls that name only the memory, as mem0's
        by-id verbs do, made by one who holds the whole tenant (the Python API, a tenant key)."""
        within, params = tenant(tenant_id)
        with self._db.read() as con:
            row = con.execute(f"SELECT {', '.join(SCOPE_COLUMNS)} FROM memories WHERE {within} AND memory_id = ?",
                              [*params, memory_id]).fetchone()
        return row_scope(row) if row else None


    def memory_links(self, scope: Scope) -> list[tuple[str, str, str]]:
        """(src, type, dst) between the user's memories, EXTRACTED_FROM aside."""
        owner, params = owned(scope, "m")
        with self._db.read() as con:
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
        source, source_params = owned(scope, "s")
        target, target_params = owned(scope, "d")
        with self._db.read() as con, batch.id_set(con, ids) as wanted:
            return [tuple(r) for r in con.execute(
                f"""
                SELECT l.src, l.dst, l.type FROM memory_links l
                JOIN memories s ON s.memory_id = l.src AND s.tenant_id = l.tenant_id
                LEFT JOIN memories d ON d.memory_id = l.dst AND d.tenant_id = l.tenant_id
                WHERE {source} AND {sql_in("l.type", types)}
                  AND (({target}) OR (d.memory_id IS NULL AND l.type IN ('EXTRACTED_FROM', 'DERIVED_FROM')))
                  AND (l.src IN {wanted} OR l.dst IN {wanted})
                ORDER BY l.src, l.dst, l.type
                """, [*source_params, *target_params]).fetchall()]

    def memory_source_turns(self, scope: Scope) -> dict[str, list[str]]:
        """The conversation turns each of the user's memories was extracted from."""
        owner, params = owned(scope, "m")
        with self._db.read() as con:
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
        where, params = visible(scope)
        gate, gate_params = lifecycle_sql(history=include_history)
        where, params = where + gate, [*params, *gate_params]
        with self._db.read() as con, batch.id_set(con, memory_ids) as ids:
            rows = con.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {where} AND memory_id IN {ids}", params,
            ).fetchall()
        return {r[0]: memory_item(r) for r in rows}

    def current_versions(self, scope: Scope, memory_ids: list[str]) -> dict[str, MemoryItem]:
        """For each of `memory_ids` that a newer version supersedes: the active memory at the head of
        its UPDATES chain (the nearest one when the chain forks), inside the scope. Lets recall answer
        with what is true now when the query matches the wording of what was true before."""
        if not memory_ids:
            return {}
        where, params = visible(scope, "m")
        gate, gate_params = lifecycle_sql("m")
        links, link_params = tenant(scope.tenant_id, "l")
        with self._db.read() as con, batch.id_rows(con, memory_ids) as ids:
            rows = con.execute(
                f"""
                WITH RECURSIVE {newer_versions_cte(ids, links)}
                SELECT origin, {MEMORY_COLUMNS} FROM (
                    SELECT c.origin, c.hops, m.* FROM chain c JOIN memories m ON m.memory_id = c.memory_id
                    WHERE c.hops > 0 AND {where}{gate}
                ) ORDER BY origin, hops, memory_id
                """, [*link_params, *params, *gate_params]).fetchall()
        found: dict[str, MemoryItem] = {}
        for origin, *memory in rows:
            found.setdefault(origin, memory_item(tuple(memory)))
        return found

    def delete_memory(self, scope: Scope, memory_id: str, *, actor: str) -> bool:
        """Soft-delete one of the owner's memories; False when there is none in scope."""
        return bool(self.delete_memories(scope, [memory_id], actor=actor))

    def delete_memories(self, scope: Scope, memory_ids: list[str] | None, *, actor: str) -> list[str]:
        """Soft-delete the owner's memories among `memory_ids`, or all of them (past versions included)
        with None, in one commit; returns those deleted now. Recall stops at once; the rows stay, with
        their history, until the retention policy removes deleted rows for good."""
        now = utcnow()
        owner, params = owned(scope)
        message = "delete memory" if memory_ids is not None and len(memory_ids) == 1 else "delete memories"
        pending = PendingCommit(scope.tenant_id, actor, sha256_json({"delete": memory_ids, "scope": str(scope)}),
                                message)
        with self._db.tx(pending.tenant_id) as con:
            query = f"SELECT memory_id FROM memories WHERE {owner} AND deleted_at IS NULL"
            if memory_ids is None:
                gone = [r[0] for r in con.execute(query, params).fetchall()]
            else:
                with batch.id_set(con, memory_ids) as ids:
                    gone = [r[0] for r in con.execute(f"{query} AND memory_id IN {ids}", params).fetchall()]
            if not gone:
                return []
            batch.update(con, "memories", "memory_id", ["deleted_at", "updated_at", "commit_id"],
                         [[m, now, now, pending.commit_id] for m in gone])
            pending.record("memories", "delete", gone)
            retire_relations(con, scope, {m: now for m in gone}, pending)
            write_commit(con, pending, now)
            fts.mark_dirty(con, fts.MEMORIES_FTS)
        self._index.update(MEMORY_INDEX, sql_in("memory_id", gone), {"deleted": True})
        return gone
