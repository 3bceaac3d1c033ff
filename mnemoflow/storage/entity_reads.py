"""The entity graph as one scope sees it: entities, their co-mentions, the relations stated about
them and the memories naming them, read only through the memories the scope may see (the owner's
and the shared ones it may see; deleted ones never).

Entities are tenant-wide rows, so nothing here reads the entity row's own counts, times or hotness:
they would tell one owner about another's memories. Every figure is computed from the scope's
memories instead. Entity ids are opaque: names and types come from their columns.

Counts are plain `count(*)`: a memory names an entity once (memory_entities' key) and states a
triple once (a relation id is the triple and its memory), and DuckDB's distinct counts cost 5x.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import duckdb

from mnemoflow.errors import BadInputError
from mnemoflow.graph_models import Entity, KeyRelation
from mnemoflow.storage import batch
from mnemoflow.storage.graph import HOTNESS_HALF_LIFE_DAYS
from mnemoflow.storage.lance_index import sql_in
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import active_memory_sql, lifecycle_sql
from mnemoflow.storage.scope import Scope, tenant, visible
from mnemoflow.timeutil import utcnow

ENTITY_ORDERS = {"mentions": "a.n DESC, a.heat DESC", "hotness": "a.heat DESC, a.n DESC",
                 "recent": "a.last_at DESC", "name": "lower(e.name)"}
SAID_AT = "coalesce(m.observed_at, m.created_at)"  # when a mention was made
NOT_ABOUT_ENTITIES = ("mentions", "supersedes", "superseded_by")  # predicates whose subject is a memory
SAMPLE = 5  # memory ids shown per neighbour or relation


def _window(since: datetime | None, until: datetime | None) -> tuple[str, list[Any]]:
    sql, params = "", []
    if since is not None:
        sql, params = f" AND {SAID_AT} >= ?", [since]
    if until is not None:
        sql, params = f"{sql} AND {SAID_AT} < ?", [*params, until]
    return sql, params


def _seen(scope: Scope, since: datetime | None, until: datetime | None, only: str = "") -> tuple[str, list[Any]]:
    """A statement of (entity_id, memory_id, said, current): what the scope's live memories name, said in
    [since, until); `only` narrows it further (an ` AND ...` on `me` or `m`)."""
    where, params = visible(scope, "m")
    window, window_params = _window(since, until)
    now = utcnow()
    return (f"SELECT me.entity_id, m.memory_id, {SAID_AT} AS said, ({active_memory_sql('m')}) AS current "
            "FROM memory_entities me JOIN memories m ON m.memory_id = me.memory_id AND m.tenant_id = me.tenant_id "
            f"WHERE {where} AND m.deleted_at IS NULL{window}{only}", [now, now, *params, *window_params])


@contextmanager
def _among(con: duckdb.DuckDBPyConnection, column: str, ids: Sequence[str] | None, *, negate: bool = False,
           ) -> Iterator[str]:
    """` AND column IN (...)` (`negate`: NOT IN), or nothing for None."""
    if ids is None:
        yield ""
        return
    with batch.id_set(con, list(ids)) as found:
        yield f" AND {column} {'NOT IN' if negate else 'IN'} {found}"


class EntityReads(Room):
    def scoped_entities(
        self, scope: Scope, *, entity_ids: Sequence[str] | None = None, types: Sequence[str] = (),
        q: str | None = None, since: datetime | None = None, until: datetime | None = None,
        order: str = "mentions", limit: int = 100,
    ) -> tuple[list[Entity], int]:
        """Entities named by the scope's live memories (said in [since, until)), of `types`, whose name or
        an alias contains `q` (any case), `order`ed; with how many matched before `limit`."""
        if order not in ENTITY_ORDERS:
            raise BadInputError(f"entity order must be one of {', '.join(ENTITY_ORDERS)}; got {order!r}")
        within, within_params = tenant(scope.tenant_id, "e")
        clauses, extra = [], []
        if types:
            clauses.append(sql_in("e.type", types))
        if q:
            clauses.append("(contains(lower(e.name), ?) OR contains(lower(array_to_string(e.aliases, chr(31))), ?))")
            extra = [q.lower(), q.lower()]
        with self._db.read() as con, _among(con, "me.entity_id", entity_ids) as only:
            seen, seen_params = _seen(scope, since, until, only)
            rows = con.execute(
                f"""
                WITH seen AS ({seen}),
                agg AS (SELECT entity_id, count(*) AS n, count(*) FILTER (WHERE current) AS cur,
                               min(said) AS first_at, max(said) AS last_at,
                               sum(pow(0.5, greatest(date_diff('millisecond', said, ?::TIMESTAMP), 0)
                                       / 86400000.0 / ?)) AS heat
                        FROM seen GROUP BY entity_id)
                SELECT e.entity_id, e.name, e.type, e.aliases, a.n, a.cur, a.heat, a.first_at, a.last_at,
                       count(*) OVER () AS total
                FROM agg a JOIN entities e ON e.entity_id = a.entity_id AND {within}
                {"WHERE " + " AND ".join(clauses) if clauses else ""}
                ORDER BY {ENTITY_ORDERS[order]}, e.entity_id LIMIT ?
                """, [*seen_params, utcnow(), HOTNESS_HALF_LIFE_DAYS, *within_params, *extra, limit]).fetchall()
        entities = [Entity(entity_id=r[0], name=r[1], type=r[2], aliases=list(r[3] or []), mention_count=r[4],
                           current_mentions=r[5], hotness=round(float(r[6] or 0.0), 6), first_seen=r[7],
                           last_seen=r[8]) for r in rows]
        return entities, (rows[0][9] if rows else 0)

    def co_mentioned(
        self, scope: Scope, entity_ids: Sequence[str], *, exclude: Sequence[str] = (), types: Sequence[str] = (),
        since: datetime | None = None, until: datetime | None = None, limit: int = 20,
    ) -> list[tuple[str, int, list[str]]]:
        """Entities named in the same live memories of the scope as any of `entity_ids` (none of those
        nor `exclude`; of `types` when given): (entity, memories naming both, the newest few), most
        shared first."""
        if not entity_ids or limit < 1:
            return []
        within, within_params = tenant(scope.tenant_id, "e")
        typed = f" AND b.entity_id IN (SELECT e.entity_id FROM entities e WHERE {within} AND " \
                f"{sql_in('e.type', types)})" if types else ""
        with self._db.read() as con, batch.id_set(con, list(entity_ids)) as ids, \
                _among(con, "b.entity_id", list(exclude) or None, negate=True) as excluded:
            seen, seen_params = _seen(scope, since, until)
            return [(r[0], r[1], list(r[2])) for r in con.execute(
                f"""
                WITH seen AS ({seen}),
                hit AS (SELECT DISTINCT memory_id FROM seen WHERE entity_id IN {ids})
                SELECT b.entity_id, count(*) AS n, max_by(b.memory_id, b.said, {SAMPLE}), max(b.said) AS last_at
                FROM seen b JOIN hit ON hit.memory_id = b.memory_id
                WHERE b.entity_id NOT IN {ids}{excluded}{typed}
                GROUP BY b.entity_id ORDER BY n DESC, last_at DESC, b.entity_id LIMIT ?
                """, [*seen_params, *(within_params if types else []), limit]).fetchall()]

    def co_mention_pairs(
        self, scope: Scope, entity_ids: Sequence[str], *, since: datetime | None = None,
        until: datetime | None = None, limit: int = 1000,
    ) -> list[tuple[str, str, int, bool]]:
        """Pairs of `entity_ids` named together in the scope's live memories: (a, b, memories naming both,
        some of them current), most shared first."""
        if len(entity_ids) < 2 or limit < 1:
            return []
        with self._db.read() as con, _among(con, "me.entity_id", entity_ids) as only:
            seen, seen_params = _seen(scope, since, until, only)
            return [tuple(r) for r in con.execute(
                f"""
                WITH seen AS ({seen})
                SELECT a.entity_id, b.entity_id, count(*) AS n, bool_or(a.current)
                FROM seen a JOIN seen b ON b.memory_id = a.memory_id AND a.entity_id < b.entity_id
                GROUP BY a.entity_id, b.entity_id ORDER BY n DESC, a.entity_id, b.entity_id LIMIT ?
                """, [*seen_params, limit]).fetchall()]

    def entity_relations(
        self, scope: Scope, entity_ids: Sequence[str], *, both_ends: bool = False, since: datetime | None = None,
        until: datetime | None = None, limit: int = 100,
    ) -> list[KeyRelation]:
        """Triples about `entity_ids` (as subject or object; with `both_ends`, between two of them) that
        the scope's live memories state, one per (subject, predicate, object) with how many memories
        state it; those still current first, then the most stated."""
        if not entity_ids or limit < 1:
            return []
        where, params = visible(scope, "m")
        window, window_params = _window(since, until)
        now = utcnow()
        joined = "AND" if both_ends else "OR"
        with self._db.read() as con, batch.id_set(con, list(entity_ids)) as ids:
            rows = con.execute(
                f"""
                SELECT r.subject, se.name, se.type, r.predicate, r.object, oe.name, oe.type,
                       count(*) AS n, max(r.confidence) AS confidence,
                       bool_or(r.superseded_at IS NULL AND {active_memory_sql('m')}) AS cur, min(r.created_at),
                       max_by(r.memory_id, r.created_at, {SAMPLE})
                FROM relations r JOIN memories m ON m.memory_id = r.memory_id AND m.tenant_id = r.tenant_id
                LEFT JOIN entities se ON se.entity_id = r.subject AND se.tenant_id = r.tenant_id
                LEFT JOIN entities oe ON oe.entity_id = r.object AND oe.tenant_id = r.tenant_id
                WHERE {where} AND m.deleted_at IS NULL AND NOT {sql_in('r.predicate', NOT_ABOUT_ENTITIES)}
                  AND (r.subject IN {ids} {joined} r.object IN {ids}){window}
                GROUP BY r.subject, se.name, se.type, r.predicate, r.object, oe.name, oe.type
                ORDER BY cur DESC, n DESC, confidence DESC, r.subject, r.predicate, r.object LIMIT ?
                """, [now, now, *params, *window_params, limit]).fetchall()
        return [KeyRelation(subject=r[0], subject_name=r[1], subject_type=r[2], predicate=r[3], object=r[4],
                            object_name=r[5], object_type=r[6], memories=r[7], confidence=r[8], current=r[9],
                            since=r[10], memory_ids=list(r[11])) for r in rows]

    def entity_memory_ids(
        self, scope: Scope, entity_id: str, *, include_history: bool = False, limit: int = 100,
    ) -> tuple[list[str], bool]:
        """The scope's memories naming the entity, newest said first: current ones, or with
        `include_history` past versions and expired ones too; and whether more than `limit` do."""
        where, params = visible(scope, "m")
        gate, gate_params = lifecycle_sql("m", history=include_history)
        with self._db.read() as con:
            rows = [r[0] for r in con.execute(
                f"""
                SELECT m.memory_id FROM memory_entities me
                JOIN memories m ON m.memory_id = me.memory_id AND m.tenant_id = me.tenant_id
                WHERE {where}{gate} AND me.entity_id = ?
                ORDER BY {SAID_AT} DESC, m.memory_id LIMIT ?
                """, [*params, *gate_params, entity_id, limit + 1]).fetchall()]
        return rows[:limit], len(rows) > limit

    def update_links(self, scope: Scope, memory_ids: Sequence[str]) -> list[tuple[str, str, datetime, str | None,
                                                                                      float, str | None]]:
        """UPDATES links touching `memory_ids` whose both ends are live memories the scope sees:
        (newer, older, when, reason, confidence, decided_by)."""
        if not memory_ids:
            return []
        links, link_params = tenant(scope.tenant_id, "l")
        src, src_params = visible(scope, "s")
        dst, dst_params = visible(scope, "d")
        with self._db.read() as con, batch.id_set(con, list(memory_ids)) as ids:
            return [tuple(r) for r in con.execute(
                f"""
                SELECT l.src, l.dst, l.created_at, l.reason, l.confidence, l.decided_by FROM memory_links l
                JOIN memories s ON s.memory_id = l.src AND s.tenant_id = l.tenant_id
                JOIN memories d ON d.memory_id = l.dst AND d.tenant_id = l.tenant_id
                WHERE {links} AND l.type = 'UPDATES' AND (l.src IN {ids} OR l.dst IN {ids})
                  AND {src} AND {dst} AND s.deleted_at IS NULL AND d.deleted_at IS NULL
                ORDER BY l.created_at, l.src, l.dst
                """, [*link_params, *src_params, *dst_params]).fetchall()]

    def memory_owners(self, tenant_id: str) -> list[tuple[str, int]]:
        """The tenant's users with live memories (past versions count as live) and how many of them are
        current, most first (memories without a user, an agent's or a run's own, are not a user's)."""
        within, params = tenant(tenant_id)
        now = utcnow()
        with self._db.read() as con:
            rows = con.execute(f"SELECT user_id, count(*) FILTER (WHERE {active_memory_sql()}) AS n FROM memories "
                               f"WHERE {within} AND deleted_at IS NULL GROUP BY user_id ORDER BY n DESC, user_id",
                               [now, now, *params]).fetchall()
        return [(user, n) for user, n in rows if user is not None]
