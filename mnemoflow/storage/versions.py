"""Versions: a memory's history (its commits and those of the versions it replaced) and a person's
update, which writes a new version that UPDATES the current one rather than editing it in place.

Content never changes in place (vectors and citations stay true to it); an update is a new row,
linked UPDATES to the one it replaces, which becomes a past version (is_latest false, valid_to set):
recall answers with the new one, `history` and `recall --history` still show the old.

Every version keeps its own id (commits, links and citations name it), and any of them names the
memory: `memory_head` follows the UPDATES chain from one to the newest version, which is what the
by-id verbs (get, update, delete, history, pin) act on, as mem0's do with its one id. Deleting a
memory deletes every version of it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mnemoflow.models import HistoryEntry, LinkDraft, MemoryDraft, MemoryItem
from mnemoflow.storage import batch
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import MEMORY_COLUMNS, memory_content_hash, memory_item
from mnemoflow.storage.scope import Scope, owned, tenant, visible
from mnemoflow.timeutil import utcnow

if TYPE_CHECKING:
    from mnemoflow.storage.store import Store

MAX_VERSIONS = 64  # how far back a history follows UPDATES


class Versions(Room):
    def memory_history(self: Store, scope: Scope, memory_id: str) -> list[HistoryEntry]:  # type: ignore[misc]
        """The commits that wrote this memory and the versions before it (its UPDATES links followed
        back inside the scope), oldest first; empty when the scope does not see the memory."""
        if self.get_memory(scope, memory_id) is None:
            return []
        links = _update_links(self, scope, [memory_id], back=True)
        chain = {memory_id, *(dst for _, dst, _ in links)}
        successors = _update_links(self, scope, [memory_id], back=False)  # what replaced the memory itself
        where, params = visible(scope)
        commits, commit_params = tenant(scope.tenant_id, "c")
        with self._db.read() as con, batch.id_set(con, [*chain, *(src for src, _, _ in successors)]) as shown, \
                batch.id_set(con, list(chain)) as ids:
            found = con.execute(f"SELECT memory_id, content, created_at FROM memories WHERE {where} "
                                f"AND memory_id IN {shown}", params).fetchall()
            rows = con.execute(
                f"""
                SELECT c.commit_id, c.created_at, c.actor, c.message, r.row[2], r.row[3], c.seq
                FROM commits c, unnest(from_json(c.diff_json->'rows', '["VARCHAR[]"]')) AS r(row)
                WHERE {commits} AND r.row[1] = 'memories' AND r.row[3] IN {ids}
                """, commit_params).fetchall()
        content = {r[0]: r[1] for r in found}
        born = {r[0]: r[2] for r in found}
        # in commit order; inside one commit (an import writes a whole chain) the older versions first,
        # and the half of an update that marks the old version before the new version's row
        rank = {"update": 0, "insert": 1}
        rows = [r[:6] for r in sorted(rows, key=lambda r: (r[6], born.get(r[5]) or r[1], rank.get(r[4], 2), r[5]))]
        inserted = {r[5]: r[0] for r in rows if r[4] == "insert"}
        newer = {dst: (src, commit) for src, dst, commit in [*links, *successors]}  # a past version -> its successor
        older = {src: (dst, commit) for src, dst, commit in links}
        entries = []
        for commit_id, created_at, actor, message, op, mid in rows:
            event, old, new = _event(op, mid, commit_id, content, inserted, newer, older)
            entries.append(HistoryEntry(commit_id=commit_id, created_at=created_at, actor=actor, message=message,
                                        op=op, memory_id=mid, event=event, old_memory=old, new_memory=new))
        return entries

    def memory_head(self: Store, scope: Scope, memory_id: str) -> MemoryItem | None:  # type: ignore[misc]
        """The newest version of the memory `memory_id` is a version of (itself when nothing replaced it),
        as the scope sees it, deleted or not; None when the scope sees no such memory. When a version
        was replaced twice (the chain forks), the current one wins, then the newer."""
        where, params = visible(scope, "m")
        links, link_params = tenant(scope.tenant_id, "l")
        with self._db.read() as con:
            row = con.execute(
                f"""
                WITH RECURSIVE chain(memory_id, hops) AS (
                    SELECT ?, 0
                    UNION ALL
                    SELECT l.src, c.hops + 1 FROM chain c
                    JOIN memory_links l ON l.dst = c.memory_id AND l.type = 'UPDATES' AND {links}
                    WHERE c.hops < {MAX_VERSIONS}
                )
                SELECT {MEMORY_COLUMNS} FROM (
                    SELECT m.*, c.hops FROM (SELECT memory_id, max(hops) AS hops FROM chain GROUP BY memory_id) c
                    JOIN memories m ON m.memory_id = c.memory_id WHERE {where}
                ) ORDER BY deleted_at IS NULL AND is_latest DESC, hops DESC, created_at DESC, memory_id LIMIT 1
                """, [memory_id, *link_params, *params]).fetchone()
        return memory_item(row) if row else None

    def memory_versions(self: Store, scope: Scope, memory_id: str) -> list[str]:  # type: ignore[misc]
        """The ids of every version of the owner's memory `memory_id` (its head and every version before
        it, deleted ones included), newest first; empty when the owner holds no such memory."""
        head = self.memory_head(scope, memory_id)
        if head is None or head.id not in self.owned_memory_ids(scope, [head.id]):
            return []
        return list(dict.fromkeys([head.id, *(older for _, older, _ in _update_links(self, scope, [head.id],
                                                                                       back=True))]))

    def owned_memory_ids(self: Store, scope: Scope, memory_ids: list[str]) -> set[str]:  # type: ignore[misc]
        """Which of `memory_ids` the owner of `scope` wrote (deleted or not)."""
        mine, params = owned(scope)
        with self._db.read() as con, batch.id_set(con, memory_ids) as ids:
            return {r[0] for r in con.execute(f"SELECT memory_id FROM memories WHERE {mine} AND memory_id IN {ids}",
                                              params).fetchall()}

    def update_memory(  # type: ignore[misc]
        self: Store, scope: Scope, memory_id: str, draft: MemoryDraft, *, actor: str,
    ) -> tuple[MemoryItem, MemoryItem] | None:
        """A person's new version of one of the owner's memories: `draft` UPDATES its current version
        (followed from a past one), decided by 'user'. Returns (new, replaced); the same content again
        changes only the metadata, in place, and returns (current, current). None when the owner
        holds no such memory (deleted, or not theirs)."""
        stored = self.get_memory(scope, memory_id)
        mine, params = owned(scope)
        with self._db.read() as con:
            held = con.execute(f"SELECT 1 FROM memories WHERE {mine} AND memory_id = ? AND deleted_at IS NULL",
                               [*params, memory_id]).fetchone()
        if stored is None or held is None:
            return None
        current = stored if stored.is_latest else self.current_versions(scope, [memory_id]).get(memory_id)
        if current is None:  # its newer version was deleted or has lapsed: nothing current to replace
            return None
        if memory_content_hash(draft.content) == memory_content_hash(current.content):
            if draft.metadata and draft.metadata != current.metadata:
                current = _set_metadata(self, scope, current, draft.metadata, actor)
            return current, current
        link = LinkDraft("UPDATES", current.id, 1.0, "replaced by the caller", decided_by="user")
        with self.memory_writes(scope, actor=actor) as writes:
            new, _ = writes.add(draft, links=(link,))
        return new, current


def _update_links(store: Store, scope: Scope, start: list[str], *, back: bool) -> list[tuple[str, str, str]]:
    """(newer, older, commit) of the UPDATES links between the owner's memories: followed back from
    `start` through every older version, or (not `back`) only those that replaced `start`."""
    found: list[tuple[str, str, str]] = []
    frontier, seen = list(start), set(start)
    src, src_params = owned(scope, "s")
    dst, dst_params = owned(scope, "d")
    links, link_params = tenant(scope.tenant_id, "l")
    end = "l.src" if back else "l.dst"
    while frontier and len(seen) < MAX_VERSIONS:
        with store._db.read() as con, batch.id_set(con, frontier) as ids:
            rows = con.execute(
                f"SELECT l.src, l.dst, l.commit_id FROM memory_links l "
                f"JOIN memories s ON s.memory_id = l.src JOIN memories d ON d.memory_id = l.dst "
                f"WHERE {links} AND l.type = 'UPDATES' AND {end} IN {ids} AND {src} AND {dst}",
                [*link_params, *src_params, *dst_params]).fetchall()
        found += [tuple(r) for r in rows]
        frontier = [older for _, older, _ in rows if older not in seen] if back else []
        seen.update(frontier)
    return found


def _event(
    op: str, memory_id: str, commit_id: str, content: dict[str, str], inserted: dict[str, str],
    newer: dict[str, tuple[str, str]], older: dict[str, tuple[str, str]],
) -> tuple[Any, str | None, str | None]:
    """(event, old_memory, new_memory) of one history row in mem0's terms."""
    text = content.get(memory_id)
    if op == "insert":
        replaced = older.get(memory_id)
        if replaced is not None and replaced[1] == commit_id:
            return "UPDATE", content.get(replaced[0]), text
        return "ADD", None, text
    if op == "delete":
        return "DELETE", text, None
    successor = newer.get(memory_id)
    if successor is not None and successor[1] == commit_id:
        # the commit that made this a past version: when the history shows its successor's insert in
        # the same commit, that row tells the UPDATE; otherwise this one does
        return (None, None, None) if inserted.get(successor[0]) == commit_id else \
            ("UPDATE", text, content.get(successor[0]))
    return "UPDATE", text, text


def _set_metadata(store: Store, scope: Scope, memory: MemoryItem, metadata: dict[str, Any],
                  actor: str) -> MemoryItem:
    """Replace a memory's metadata in place, in a commit of its own (metadata is not what recall
    matches or cites, so it needs no new version)."""
    now = utcnow()
    pending = PendingCommit(scope.tenant_id, actor, sha256_json({"metadata": memory.id, "value": metadata}),
                            "update memory metadata")
    mine, params = owned(scope)
    with store._db.tx(pending.tenant_id) as con:
        con.execute(f"UPDATE memories SET metadata = ?, updated_at = ?, commit_id = ? WHERE {mine} AND memory_id = ?",
                    [json.dumps(metadata), now, pending.commit_id, *params, memory.id])
        pending.record("memories", "update", [memory.id])
        write_commit(con, pending, now)
    return memory.model_copy(update={"metadata": json.loads(json.dumps(metadata)), "updated_at": now})
