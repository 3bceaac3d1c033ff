"""The graph: entities and categories (tenant-wide rows), what each memory names, states and is
filed under, and the relations between them. A scope sees the graph through the memories that
name it, which follow the usual visibility (the user's own and the tenant's shared ones)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import duckdb

from mnemoflow.errors import BadInputError
from mnemoflow.models import ENTITY_TYPES, PREDICATES, THIS_MEMORY, EntityRef, EntityRow, MemoryDraft, RelationRow
from mnemoflow.storage import batch
from mnemoflow.storage.commits import PendingCommit
from mnemoflow.storage.links import VERSION_PREDICATES
from mnemoflow.storage.room import Room
from mnemoflow.storage.rows import active_memory_sql, lifecycle_sql, relation_id
from mnemoflow.storage.scope import Scope, tenant, visible
from mnemoflow.timeutil import utcnow

if TYPE_CHECKING:
    from mnemoflow.storage.memory_writes import NewMemory

HOTNESS_HALF_LIFE_DAYS = 30.0  # an entity's hotness halves every 30 days without a mention
_ENTITY_ID = re.compile(rf"^entity:({'|'.join(ENTITY_TYPES)}):[0-9a-f]{{24}}$")  # models.entity_id_of: no text
_CATEGORY_KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*(?:/[a-z0-9][a-z0-9_-]*)*$")


def draft_graph(
    tenant_id: str, memory_id: str, draft: MemoryDraft,
) -> tuple[dict[str, EntityRef], dict[str, tuple[str, str, str, float]], list[str]]:
    """A draft's entities (`merged_entities`), the relations it states by relation id (THIS_MEMORY is
    the memory) and its category keys, checked: BadInputError before anything is written."""
    entities = merged_entities(draft.entities)
    relations: dict[str, tuple[str, str, str, float]] = {}
    for r in draft.relations:
        if r.predicate not in PREDICATES:
            raise BadInputError(f"relation predicate must be one of {', '.join(PREDICATES)}; got {r.predicate!r}")
        if r.subject != THIS_MEMORY and not r.subject.startswith("entity:"):
            raise BadInputError(f"a relation's subject is an entity of the memory or the memory; got {r.subject!r}")
        named = [end for end in (r.subject, r.object) if end.startswith("entity:") and end not in entities]
        if named:
            raise BadInputError(f"relation names entities the memory does not: {', '.join(named)}")
        if not r.object.strip() or not 0.0 <= r.confidence <= 1.0:
            raise BadInputError(f"relation needs an object and a confidence in [0, 1]: {r!r}")
        subject = memory_id if r.subject == THIS_MEMORY else r.subject
        obj = memory_id if r.object == THIS_MEMORY else r.object.strip()
        relations[relation_id(tenant_id, subject, r.predicate, obj, memory_id)] = (subject, r.predicate, obj,
                                                                                   r.confidence)
    keys = list(dict.fromkeys(k.strip() for k in draft.categories))
    if bad := [k for k in keys if not _CATEGORY_KEY.match(k)]:
        raise BadInputError(f"category keys are lowercase 'a/b' paths; got {', '.join(map(repr, bad[:5]))}")
    return entities, relations, keys


def merged_entities(refs: tuple[EntityRef, ...]) -> dict[str, EntityRef]:
    """A draft's entities by id, checked (`entity:<type>:<digest>` of its own type, `models.entity_id_of`: an id
    that spells a name is refused, since commits keep ids after the purge), one per id."""
    merged: dict[str, EntityRef] = {}
    for ref in refs:
        match = _ENTITY_ID.match(ref.entity_id)
        if match is None or match.group(1) != ref.type or not ref.name.strip():
            raise BadInputError(f"entity {ref.entity_id!r} ({ref.type}) is not entity:<type>:<digest> with a name")
        first = merged.get(ref.entity_id, ref)
        merged[ref.entity_id] = EntityRef(ref.entity_id, first.name, ref.type,
                                          tuple(merge_aliases(first.name, first.aliases, [ref.name, *ref.aliases])))
    return merged


def merge_aliases(name: str, aliases: list[str] | tuple[str, ...], forms: list[str]) -> list[str]:
    out = [a for a in dict.fromkeys(aliases) if a != name]
    out += [f for f in dict.fromkeys(forms) if f and f != name and f not in out]
    return out



@dataclass(frozen=True)
class _EntityState:
    name: str
    type: str
    aliases: list[str]
    mention_count: int
    first_seen: datetime | None
    last_seen: datetime | None
    hotness: float


def write_graph(
    con: duckdb.DuckDBPyConnection, scope: Scope, new: list[NewMemory], pending: PendingCommit,
) -> None:
    """The new memories' part of the graph, in their commit: their entities (tenant-wide, upserted),
    the memory_entities rows, the relations they state (`draft_graph`; those of a memory superseded in
    the same unit already retired) and their categories (tenant-wide, a key's parents created with
    it) with the memory_categories rows.

    An entity named again counts one more mention, takes the new forms of its name as aliases and
    heats up. Hotness is an exponentially decayed mention rate: each mention adds 1 after the
    previous value has decayed with a half-life of HOTNESS_HALF_LIFE_DAYS,
    `hotness * 0.5 ** (days since last_seen / 30) + 1`; the stored value is the one at last_seen
    and reads decay it to the time of reading (`entities`). The mentions of one unit are folded
    in the order its memories were written, each at its own time."""
    tenant_id, commit = scope.tenant_id, pending.commit_id
    within, within_params = tenant(tenant_id)
    mentions = [(n, ref) for n in new for ref in n.entities.values()]
    if mentions:
        with batch.id_set(con, list(dict.fromkeys(ref.entity_id for _, ref in mentions))) as ids:
            stored = {r[0]: _EntityState(*r[1:]) for r in con.execute(
                f"SELECT entity_id, name, type, aliases, mention_count, first_seen, last_seen, hotness "
                f"FROM entities WHERE {within} AND entity_id IN {ids}", within_params).fetchall()}
        state: dict[str, _EntityState] = {}
        for n, ref in mentions:
            entity = state.get(ref.entity_id) or stored.get(ref.entity_id)
            if entity is None:
                state[ref.entity_id] = _EntityState(ref.name, ref.type, list(ref.aliases), 1, n.at, n.at, 1.0)
                continue
            days = max((n.at - entity.last_seen).total_seconds(), 0.0) / 86400 if entity.last_seen else 0.0
            state[ref.entity_id] = _EntityState(
                entity.name, entity.type, merge_aliases(entity.name, entity.aliases or [], [ref.name, *ref.aliases]),
                entity.mention_count + 1, entity.first_seen, n.at,
                (entity.hotness or 0.0) * 0.5 ** (days / HOTNESS_HALF_LIFE_DAYS) + 1.0)
        fresh = [eid for eid in state if eid not in stored]
        seen_again = [eid for eid in state if eid in stored]
        batch.insert(con, "entities", ["tenant_id", "entity_id", "name", "type", "aliases", "mention_count",
                                       "first_seen", "last_seen", "hotness", "commit_id"],
                     [[tenant_id, eid, e.name, e.type, e.aliases, e.mention_count, e.first_seen, e.last_seen,
                       e.hotness, commit] for eid in fresh for e in (state[eid],)])
        if seen_again:
            named, named_params = tenant(tenant_id, "entities")
            with batch.registered(con, ["entity_id", "aliases", "mention_count", "last_seen", "hotness"],
                                  [[eid, e.aliases, e.mention_count, e.last_seen, e.hotness]
                                   for eid in seen_again for e in (state[eid],)]) as b:
                con.execute(f"UPDATE entities SET aliases = b.aliases, mention_count = b.mention_count, "
                            f"last_seen = b.last_seen, hotness = b.hotness, commit_id = ? FROM {b} b "
                            f"WHERE {named} AND entities.entity_id = b.entity_id", [commit, *named_params])
        pending.record("entities", "insert", fresh)
        pending.record("entities", "update", seen_again)
        batch.insert(con, "memory_entities", ["tenant_id", "memory_id", "entity_id", "commit_id"],
                     [[tenant_id, n.memory.id, ref.entity_id, commit] for n, ref in mentions])
        pending.record("memory_entities", "insert", [f"{n.memory.id}|{ref.entity_id}" for n, ref in mentions])
    relations = [[tenant_id, rid, subject, predicate, obj, n.memory.id, confidence, n.at,
                  n.retired_at if predicate not in VERSION_PREDICATES else None, commit]
                 for n in new for rid, (subject, predicate, obj, confidence) in n.relations.items()]
    batch.insert(con, "relations", ["tenant_id", "relation_id", "subject", "predicate", "object", "memory_id",
                                    "confidence", "created_at", "superseded_at", "commit_id"], relations)
    pending.record("relations", "insert", [r[1] for r in relations])
    paths = list(dict.fromkeys(k.rsplit("/", depth)[0] for n in new for k in n.categories
                               for depth in range(k.count("/"), -1, -1)))
    if paths:
        with batch.id_set(con, paths) as ids:
            held = {r[0] for r in con.execute(
                f"SELECT category_key FROM categories WHERE {within} AND category_key IN {ids}",
                within_params).fetchall()}
        added = [k for k in paths if k not in held]
        batch.insert(con, "categories", ["tenant_id", "category_key", "name", "parent_key", "commit_id"],
                     [[tenant_id, k, k.rsplit("/", 1)[-1], k.rsplit("/", 1)[0] if "/" in k else None, commit]
                      for k in added])
        pending.record("categories", "insert", added)
        batch.insert(con, "memory_categories", ["tenant_id", "memory_id", "category_key", "commit_id"],
                     [[tenant_id, n.memory.id, k, commit] for n in new for k in n.categories])
        pending.record("memory_categories", "insert", [f"{n.memory.id}|{k}" for n in new for k in n.categories])


class Graph(Room):
    def entities(self, scope: Scope, *, limit: int = 50, order: str = "hotness") -> list[EntityRow]:
        """Entities named by a live memory the scope can see, `order`ed by hotness (decayed to now),
        mentions, recent (last seen) or name. Mention counts are the tenant's."""
        orders = {"hotness": "heat DESC", "mentions": "e.mention_count DESC", "recent": "e.last_seen DESC NULLS LAST",
                  "name": "lower(e.name)"}
        if order not in orders:
            raise BadInputError(f"entity order must be one of {', '.join(orders)}; got {order!r}")
        if limit < 1:
            raise BadInputError(f"entity limit must be at least 1; got {limit}")
        where, params = visible(scope, "m")
        within, within_params = tenant(scope.tenant_id, "e")
        with self._db.read() as con:
            rows = con.execute(
                f"""
                SELECT e.entity_id, e.name, e.type, e.aliases, e.mention_count, e.first_seen, e.last_seen,
                       coalesce(e.hotness * pow(0.5, greatest(date_diff('millisecond', e.last_seen, ?), 0)
                                / 86400000.0 / ?), e.hotness) AS heat, e.commit_id
                FROM entities e
                WHERE {within} AND EXISTS (
                    SELECT 1 FROM memory_entities me JOIN memories m
                      ON m.memory_id = me.memory_id AND m.tenant_id = me.tenant_id
                    WHERE me.tenant_id = e.tenant_id AND me.entity_id = e.entity_id AND {where}
                      AND m.deleted_at IS NULL)
                ORDER BY {orders[order]}, e.entity_id LIMIT ?
                """, [utcnow(), HOTNESS_HALF_LIFE_DAYS, *within_params, *params, limit]).fetchall()
        return [EntityRow(r[0], r[1], r[2], tuple(r[3] or ()), r[4], r[5], r[6], float(r[7]), r[8]) for r in rows]

    def memory_entity_ids(self, scope: Scope, memory_ids: list[str]) -> dict[str, list[str]]:
        """The entities each of `memory_ids` names (those the scope can see, deleted ones aside), the
        rarest in the tenant first: the most telling link between two memories comes first."""
        if not memory_ids:
            return {}
        where, params = visible(scope, "m")
        with self._db.read() as con, batch.id_set(con, memory_ids) as ids:
            rows = con.execute(
                f"""
                SELECT me.memory_id, me.entity_id FROM memory_entities me
                JOIN memories m ON m.memory_id = me.memory_id AND m.tenant_id = me.tenant_id
                JOIN entities e ON e.tenant_id = me.tenant_id AND e.entity_id = me.entity_id
                WHERE {where} AND m.deleted_at IS NULL AND me.memory_id IN {ids}
                ORDER BY me.memory_id, e.mention_count, me.entity_id
                """, params).fetchall()
        found: dict[str, list[str]] = {}
        for memory_id, eid in rows:
            found.setdefault(memory_id, []).append(eid)
        return found

    def memories_with_entities(self, scope: Scope, entity_ids: list[str], *, limit: int = 20) -> list[str]:
        """Active, latest memories the scope can see that name any of `entity_ids`, best first: those
        sharing the rarer entities (sum of 1 / mention count), then more of them, then salience, then
        the newest."""
        if not entity_ids or limit < 1:
            return []
        where, params = visible(scope, "m")
        now = utcnow()
        with self._db.read() as con, batch.id_set(con, entity_ids) as ids:
            return [r[0] for r in con.execute(
                f"""
                SELECT m.memory_id FROM memory_entities me
                JOIN memories m ON m.memory_id = me.memory_id AND m.tenant_id = me.tenant_id
                JOIN entities e ON e.tenant_id = me.tenant_id AND e.entity_id = me.entity_id
                WHERE {where} AND {active_memory_sql("m")} AND me.entity_id IN {ids}
                GROUP BY m.memory_id, m.salience, m.created_at
                ORDER BY sum(1.0 / greatest(e.mention_count, 1)) DESC, count(*) DESC, m.salience DESC,
                         m.created_at DESC, m.memory_id
                LIMIT ?
                """, [*params, now, now, limit]).fetchall()]

    def relations_of(self, scope: Scope, entity_id: str, *, include_superseded: bool = False) -> list[RelationRow]:
        """Relations with `entity_id` as subject or object, stated by memories the scope can see, oldest
        first; by default only current ones (not superseded, from an active, latest memory)."""
        where, params = visible(scope, "m")
        gate, gate_params = lifecycle_sql("m", history=include_superseded)
        where, params = where + gate, [*params, *gate_params]
        if not include_superseded:
            where += " AND r.superseded_at IS NULL"
        within, within_params = tenant(scope.tenant_id, "r")
        with self._db.read() as con:
            rows = con.execute(
                f"""
                SELECT r.relation_id, r.subject, r.predicate, r.object, r.memory_id, r.confidence, r.created_at,
                       r.superseded_at, r.commit_id
                FROM relations r JOIN memories m ON m.memory_id = r.memory_id AND m.tenant_id = r.tenant_id
                WHERE {within} AND (r.subject = ? OR r.object = ?) AND {where}
                ORDER BY r.created_at, r.relation_id
                """, [*within_params, entity_id, entity_id, *params]).fetchall()
        return [RelationRow(*r) for r in rows]
