"""Conflicts: pairs of current memories linked CONFLICTS_WITH (two sources disagree) or MAY_UPDATE
(perhaps a change the pipeline could not classify) that wait for a person, and that person's decision.

A pair waits while both memories are current and no one has settled it: a later link of another
type between the two decided by a user (what `resolve_conflict` writes), or a rejected review of the
same proposal, settles it. Deciding keeps one memory, which then UPDATES the other (a past version
from then on), or keeps both with a RELATES_TO link by the user; an open review of the pair is
closed in the same commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from mnemoflow.errors import BadInputError, NotFoundError
from mnemoflow.graph_models import CONFLICT_TYPES, Conflict, ConflictDecision
from mnemoflow.models import LinkDraft
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.lance_index import MEMORY_INDEX, sql_in
from mnemoflow.storage.links import insert_links, supersede
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import active_memory_sql, link_id
from mnemoflow.storage.scope import Scope, owned, tenant, visible
from mnemoflow.timeutil import utcnow

_PAIR = "((r.src = l.src AND r.dst = l.dst) OR (r.src = l.dst AND r.dst = l.src))"


def _waiting(scope: Scope) -> tuple[str, list[Any]]:
    """SELECT of the conflicts the scope sees that wait: link id, ends, type, confidence, reason,
    decided_by, created_at, whether the scope owns both ends, and the pair's open review."""
    links, link_params = tenant(scope.tenant_id, "l")
    src, src_params = visible(scope, "s")
    dst, dst_params = visible(scope, "d")
    mine_s, mine_s_params = owned(scope, "s")
    mine_d, mine_d_params = owned(scope, "d")
    reviews, review_params = owned(scope, "r")
    now = utcnow()
    return (f"""
        SELECT l.link_id, l.src, l.dst, l.type, l.confidence, l.reason, l.decided_by, l.created_at,
               ({mine_s}) AND ({mine_d}) AS decidable,
               (SELECT r.review_id FROM review_queue r WHERE {reviews} AND r.status = 'open' AND {_PAIR}
                ORDER BY r.created_at, r.review_id LIMIT 1) AS review_id
        FROM memory_links l
        JOIN memories s ON s.memory_id = l.src AND s.tenant_id = l.tenant_id
        JOIN memories d ON d.memory_id = l.dst AND d.tenant_id = l.tenant_id
        WHERE {links} AND {sql_in('l.type', CONFLICT_TYPES)} AND {src} AND {dst}
          AND {active_memory_sql('s')} AND {active_memory_sql('d')}
          AND NOT EXISTS (SELECT 1 FROM memory_links r WHERE r.tenant_id = l.tenant_id AND r.decided_by = 'user'
                          AND r.type <> l.type AND r.created_at >= l.created_at AND {_PAIR})
          AND NOT EXISTS (SELECT 1 FROM review_queue r WHERE r.tenant_id = l.tenant_id AND r.status = 'rejected'
                          AND (r.proposed_type = l.type OR (l.type = 'MAY_UPDATE' AND r.proposed_type = 'UPDATES'))
                          AND r.src = l.src AND r.dst = l.dst)""",
            [*mine_s_params, *mine_d_params, *review_params, *link_params, *src_params, *dst_params,
             now, now, now, now])


class Conflicts(Room):
    def open_conflicts(self, scope: Scope, *, limit: int = 100) -> list[Conflict]:
        """The conflicts that wait, newest first, with both memories."""
        if limit < 1:
            raise BadInputError(f"conflict limit must be at least 1; got {limit}")
        sql, params = _waiting(scope)
        with self._db.read() as con:
            rows = con.execute(f"{sql} ORDER BY l.created_at DESC, l.link_id LIMIT ?", [*params, limit]).fetchall()
        memories = self.fetch_memories(scope, list({m for r in rows for m in r[1:3]}))  # type: ignore[attr-defined]
        return [Conflict(link_id=r[0], src=memories[r[1]], dst=memories[r[2]], type=r[3], confidence=r[4],
                         reason=r[5], decided_by=r[6], created_at=r[7], decidable=r[8], review_id=r[9])
                for r in rows if r[1] in memories and r[2] in memories]

    def waiting_possible_updates(self, scope: Scope, ids: list[str]) -> list[tuple[str, str]]:
        """(newer, older) of the MAY_UPDATE pairs touching `ids` that still wait: recall marks only these, so
        a pair a person settled (a rejected review, a decision either way) is no longer called a possible update."""
        if not ids:
            return []
        sql, params = _waiting(scope)
        with self._db.read() as con:
            return [(r[1], r[2]) for r in con.execute(
                f"{sql} AND l.type = 'MAY_UPDATE' AND ({sql_in('l.src', ids)} OR {sql_in('l.dst', ids)}) "
                f"ORDER BY l.src, l.dst", params).fetchall()]

    def resolve_conflict(self, scope: Scope, conflict_id: str, keep: str | None, *, actor: str) -> ConflictDecision:
        """A person's decision on a waiting conflict, in one commit: `keep` one of its memories (it
        UPDATES the other) or None to keep both. NotFoundError for a conflict the scope does not see
        waiting; BadInputError when the scope does not own both memories or `keep` is neither."""
        now = utcnow()
        sql, params = _waiting(scope)
        with self._db.tx() as con:
            row = con.execute(f"{sql} AND l.link_id = ?", [*params, conflict_id]).fetchone()
            if row is None:
                raise NotFoundError(f"no conflict {conflict_id} waiting for {scope}")
            _, src, dst, kind, _, reason, _, _, decidable, _ = row
            if not decidable:
                raise BadInputError(f"conflict {conflict_id} involves a memory {scope} does not own; its owner decides")
            if keep is not None and keep not in (src, dst):
                raise BadInputError(f"keep names one memory of the conflict ({src} or {dst}), or none to keep both; "
                                    f"got {keep!r}")
            pending = PendingCommit(scope.tenant_id, actor, sha256_json({"conflict": conflict_id, "keep": keep}),
                                    f"conflict {conflict_id} ({kind}) decided: " + (f"kept {keep}" if keep else
                                                                                     "kept both"))
            superseded: list[str] = []
            if keep is not None:
                other = dst if keep == src else src
                why = f"a person kept it over the other side of a {kind} link ({reason or 'no reason given'})"
                insert_links(con, scope, [[keep, other, "UPDATES", 1.0, "user", why, now]], pending)
                supersede(con, scope, [(keep, LinkDraft("UPDATES", other, 1.0, why, decided_by="user"), now)],
                          {other: now}, pending)
                superseded = [other]
            else:
                self._settle_both(con, scope, src, dst, kind, now, pending)
            reviews, review_params = owned(scope)
            closed = [r[0] for r in con.execute(
                f"SELECT review_id FROM review_queue r WHERE {reviews} AND status = 'open' AND "
                f"((src = ? AND dst = ?) OR (src = ? AND dst = ?))",
                [*review_params, src, dst, dst, src]).fetchall()]
            con.execute(
                f"UPDATE review_queue SET status = CASE WHEN src = ? AND proposed_type IN ('UPDATES', 'MAY_UPDATE') "
                f"THEN 'accepted' ELSE 'rejected' END, decided_at = ?, decided_by = 'user' "
                f"WHERE {reviews} AND status = 'open' AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?))",
                [keep or "", now, *review_params, src, dst, dst, src])
            write_commit(con, pending, now)
        if superseded:
            self._index.update(MEMORY_INDEX, sql_in("memory_id", superseded), {"is_latest": False})
        return ConflictDecision(link_id=conflict_id, applied="UPDATES" if keep else "RELATES_TO",
                                kept=[keep] if keep else [src, dst], superseded=superseded,
                                review_id=closed[0] if closed else None, commit_id=pending.commit_id)

    @staticmethod
    def _settle_both(con: duckdb.DuckDBPyConnection, scope: Scope, src: str, dst: str, kind: str, now: datetime,
                     pending: PendingCommit) -> None:
        """Both hold: a RELATES_TO link decided by the user, or the one already there taken over."""
        why = f"a person kept both sides of a {kind} link"
        related = link_id(scope.tenant_id, src, dst, "RELATES_TO")
        within, params = tenant(scope.tenant_id)
        if con.execute(f"SELECT 1 FROM memory_links WHERE {within} AND link_id = ?", [*params, related]).fetchone():
            con.execute(f"UPDATE memory_links SET decided_by = 'user', reason = ?, created_at = ?, commit_id = ? "
                        f"WHERE {within} AND link_id = ?", [why, now, pending.commit_id, *params, related])
            pending.record("memory_links", "update", [related])
        else:
            insert_links(con, scope, [[src, dst, "RELATES_TO", 1.0, "user", why, now]], pending)
