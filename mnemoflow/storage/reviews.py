"""The review queue: relationship decisions the pipeline was unsure of (confidence 0.5-0.85), shown
to a person with both memories, and applied as an automatic decision would be when accepted."""

from __future__ import annotations

from mnemoflow.errors import BadInputError
from mnemoflow.models import LINK_TYPES, REVIEW_STATUSES, LinkDraft, ReviewItem
from mnemoflow.storage.commits import PendingCommit, sha256_json, write_commit
from mnemoflow.storage.lance_index import MEMORY_INDEX, sql_in
from mnemoflow.storage.links import insert_links, supersede
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import link_id
from mnemoflow.storage.scope import Scope, owned, owned_by
from mnemoflow.timeutil import utcnow

# a review with both memories (of the review's own user) and the link a person accepted
_REVIEW_SELECT = (
    "SELECT r.review_id, r.tenant_id, r.user_id, r.src, r.dst, r.proposed_type, r.confidence, r.reason, r.status, "
    "r.created_at, r.decided_at, r.decided_by, "
    "(SELECT l.type FROM memory_links l WHERE r.status = 'accepted' AND l.tenant_id = r.tenant_id "
    "AND l.src = r.src AND l.dst = r.dst AND l.decided_by = 'user' ORDER BY l.created_at DESC LIMIT 1), "
    "s.content, d.content, coalesce(s.deleted_at IS NULL AND s.is_latest, false), "
    "coalesce(d.deleted_at IS NULL AND d.is_latest, false) "
    "FROM review_queue r "
    f"LEFT JOIN memories s ON s.memory_id = r.src AND {owned_by('s', 'r')} "
    f"LEFT JOIN memories d ON d.memory_id = r.dst AND {owned_by('d', 'r')}"
)


def _review_item(row: tuple) -> ReviewItem:
    return ReviewItem(
        review_id=row[0], tenant_id=row[1], user_id=row[2], src=row[3], dst=row[4], proposed_type=row[5],
        confidence=row[6], reason=row[7], status=row[8], created_at=row[9], decided_at=row[10], decided_by=row[11],
        applied_type=row[12], src_content=row[13], dst_content=row[14], src_current=row[15], dst_current=row[16])


class Reviews(Room):
    def review_items(self, scope: Scope, *, status: str = "open", limit: int = 100) -> list[ReviewItem]:
        """The user's relationship decisions in `review_queue` with `status` (open, accepted, rejected or
        all), oldest first, each with the contents of both memories so a person can judge it."""
        if status != "all" and status not in REVIEW_STATUSES:
            raise BadInputError(f"review status must be open, accepted, rejected or all; got {status!r}")
        if limit < 1:
            raise BadInputError(f"review limit must be at least 1; got {limit}")
        where, params = owned(scope, "r")
        if status != "all":
            where, params = f"{where} AND r.status = ?", [*params, status]
        with self._db.read() as con:
            rows = con.execute(f"{_REVIEW_SELECT} WHERE {where} ORDER BY r.created_at, r.review_id LIMIT ?",
                               [*params, limit]).fetchall()
        return [_review_item(r) for r in rows]

    def decide_review(
        self, scope: Scope, review_id: str, accept: bool, *, actor: str, link_type: str | None = None,
    ) -> ReviewItem:
        """A person's decision on a queued relationship, in one commit. Accepting applies the link as an
        automatic decision would (`_supersede`: an UPDATES supersedes its target), decided by 'user',
        as `link_type` when the person chose another relation; rejecting applies nothing.

        BadInputError for a review the scope does not hold (another scope's id looks just the same),
        one already decided, or, when accepting, a memory since deleted or no longer the latest."""
        chosen = None
        if link_type is not None:
            if not accept:
                raise BadInputError("a link type applies only when accepting a review")
            chosen = link_type.strip().upper()
            if chosen not in LINK_TYPES:
                raise BadInputError(f"link type must be one of {', '.join(LINK_TYPES)}; got {link_type!r}")
        now = utcnow()
        where, params = owned(scope, "r")
        mine, mine_params = owned(scope)
        superseded: list[str] = []
        with self._db.tx(scope.tenant_id) as con:
            row = con.execute(f"{_REVIEW_SELECT} WHERE {where} AND r.review_id = ?", [*params, review_id]).fetchone()
            if row is None:
                raise BadInputError(f"no review {review_id} for {scope}")
            item = _review_item(row)
            if item.status != "open":
                raise BadInputError(f"review {review_id} was already {item.status}")
            verdict = "accepted" if accept else "rejected"
            applied = chosen or item.proposed_type
            pending = PendingCommit(
                scope.tenant_id, actor,
                sha256_json({"review": review_id, "decision": verdict, "type": applied if accept else None}),
                f"review {review_id} {verdict}: {item.src} {applied} {item.dst}")
            if accept:
                if applied not in LINK_TYPES:
                    raise BadInputError(f"review {review_id} proposes {applied!r}, not a link type; "
                                        f"accept it as one of {', '.join(LINK_TYPES)}")
                state = {r[0]: (r[1], r[2]) for r in con.execute(
                    f"SELECT memory_id, deleted_at IS NOT NULL, is_latest FROM memories "
                    f"WHERE {mine} AND memory_id IN (?, ?)", [*mine_params, item.src, item.dst]).fetchall()}
                for role, memory_id in (("new", item.src), ("existing", item.dst)):
                    deleted, latest = state.get(memory_id, (True, False))
                    if deleted or not latest:
                        since = "deleted" if deleted else "superseded by a newer version"
                        raise BadInputError(f"cannot accept review {review_id}: the {role} memory {memory_id} "
                                            f"has been {since} since it was queued")
                if con.execute("SELECT 1 FROM memory_links WHERE link_id = ?",
                               [link_id(scope.tenant_id, item.src, item.dst, applied)]).fetchone():
                    raise BadInputError(f"cannot accept review {review_id}: {item.src} is already linked "
                                        f"to {item.dst} as {applied}")
                insert_links(con, scope, [[item.src, item.dst, applied, item.confidence, "user", item.reason,
                                                 now]], pending)
                if applied == "UPDATES":
                    superseded = [item.dst]
                    link = LinkDraft(applied, item.dst, item.confidence, item.reason)
                    supersede(con, scope, [(item.src, link, now)], {item.dst: now}, pending)
            con.execute("UPDATE review_queue SET status = ?, decided_at = ?, decided_by = 'user' WHERE review_id = ?",
                        [verdict, now, review_id])
            write_commit(con, pending, now)
            row = con.execute(f"{_REVIEW_SELECT} WHERE {where} AND r.review_id = ?", [*params, review_id]).fetchone()
        if superseded:
            self._index.update(MEMORY_INDEX, sql_in("memory_id", superseded), {"is_latest": False})
        return _review_item(row)
