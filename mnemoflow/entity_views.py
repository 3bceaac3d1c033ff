"""What a person asks of one entity, put together from the store's scoped reads: its card (the
entities around it, its recent mentions with citations, its key relations), the memories naming it,
and its evolution: the facts about it in supersedes order, each with the change that replaced it.

Every read goes through the scope, so an entity the scope's memories do not name is not found,
whoever else names it; ids are opaque (names and types come from the store's columns).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from mnemoflow.errors import BadInputError, NotFoundError
from mnemoflow.graph_models import (
    CitedMemory,
    Entity,
    EntityCard,
    EntityEvolution,
    EntityList,
    EntityMemories,
    EvolutionChain,
    EvolutionStep,
    KeyRelation,
    NamedEntity,
    Neighbour,
    RelationNeighbour,
    Replacement,
    SharedNeighbour,
)
from mnemoflow.models import ENTITY_TYPES, MemoryItem
from mnemoflow.recall.citations import citations_of
from mnemoflow.storage import Scope, Store
from mnemoflow.timeutil import naive_utc

MAX_LIMIT = 1000  # entities, memories or facts one answer lists at most
MAX_VERSION_ROUNDS = 64  # how far an evolution follows UPDATES from the memories naming the entity


def check_limit(name: str, value: int) -> int:
    if not 1 <= value <= MAX_LIMIT:
        raise BadInputError(f"{name} must be between 1 and {MAX_LIMIT}; got {value}")
    return value


def check_types(types: Sequence[str] | None) -> list[str]:
    chosen = [t.strip().lower() for t in types or () if t.strip()]
    if bad := [t for t in chosen if t not in ENTITY_TYPES]:
        raise BadInputError(f"entity types are {', '.join(ENTITY_TYPES)}; got {', '.join(map(repr, bad))}")
    return chosen


def check_window(since: datetime | None, until: datetime | None) -> tuple[datetime | None, datetime | None]:
    """[since, until) in the store's time convention (naive UTC); BadInputError for an empty window."""
    since, until = (None if t is None else naive_utc(t) for t in (since, until))
    if since is not None and until is not None and since >= until:
        raise BadInputError(f"since ({since.isoformat()}) must come before until ({until.isoformat()})")
    return since, until


def entity_list(
    store: Store, scope: Scope, *, types: Sequence[str] | None = None, q: str | None = None,
    since: datetime | None = None, until: datetime | None = None, order: str = "mentions", limit: int = 100,
) -> EntityList:
    since, until = check_window(since, until)
    found, _ = store.scoped_entities(scope, types=check_types(types), q=(q or "").strip() or None, since=since,
                                     until=until, order=order, limit=check_limit("limit", limit))
    return EntityList(entities=found)


def visible_entity(store: Store, scope: Scope, entity_id: str) -> Entity:
    """The entity as the scope sees it; NotFoundError when none of the scope's memories name it."""
    found, _ = store.scoped_entities(scope, entity_ids=[entity_id], limit=1)
    if not found:
        raise NotFoundError(f"no entity {entity_id} for {scope}")
    return found[0]


def named(entity: Entity) -> NamedEntity:
    return NamedEntity(entity_id=entity.entity_id, name=entity.name, type=entity.type)


def cited(store: Store, scope: Scope, memory_ids: list[str], *, include_history: bool) -> list[CitedMemory]:
    """The memories (in the order given) with their citations."""
    found = store.fetch_memories(scope, memory_ids, include_history=include_history)
    return [CitedMemory(memory=found[m], citations=citations_of(found[m])) for m in memory_ids if m in found]


def entity_card(store: Store, scope: Scope, entity_id: str, *, size: int = 10) -> EntityCard:
    """The entity, the entities joined to it by relations and by shared memories, its newest mentions
    (past versions too, marked by `is_latest`) and the relations stated about it, `size` of each."""
    entity = visible_entity(store, scope, entity_id)
    relations = store.entity_relations(scope, [entity_id], limit=MAX_LIMIT)
    shared = store.co_mentioned(scope, [entity_id], limit=size)
    names = {e.entity_id: e for e in store.scoped_entities(scope, entity_ids=[n for n, _, _ in shared],
                                                           limit=len(shared))[0]} if shared else {}
    mentions, _ = store.entity_memory_ids(scope, entity_id, include_history=True, limit=size)
    by_relation = relation_neighbours(entity_id, relations)[:size]
    by_memory = [SharedNeighbour(entity=named(names[n]), shared_memories=count, memory_ids=ids)
                 for n, count, ids in shared if n in names]
    return EntityCard(
        entity=entity, neighbours=all_neighbours(by_relation, by_memory), neighbours_by_relation=by_relation,
        neighbours_by_memory=by_memory, recent_mentions=cited(store, scope, mentions, include_history=True),
        key_relations=relations[:size])


def all_neighbours(by_relation: list[RelationNeighbour], by_memory: list[SharedNeighbour]) -> list[Neighbour]:
    found = {n.entity.entity_id: Neighbour(entity=n.entity, predicates=n.predicates) for n in by_relation}
    for n in by_memory:
        known = found.setdefault(n.entity.entity_id, Neighbour(entity=n.entity))
        known.shared_memories = n.shared_memories
    return list(found.values())


def relation_neighbours(entity_id: str, relations: list[KeyRelation]) -> list[RelationNeighbour]:
    """The entities at the other end of the relations (literals and memories are not entities), each
    with every predicate joining them, current ones first."""
    grouped: dict[str, list[tuple[KeyRelation, str]]] = defaultdict(list)
    for r in relations:
        if r.subject == entity_id and r.object_name is not None and r.object != entity_id:
            grouped[r.object].append((r, "out"))
        elif r.object == entity_id and r.subject_name is not None and r.subject != entity_id:
            grouped[r.subject].append((r, "in"))
    found = []
    for other, joined in grouped.items():
        first, direction = joined[0]
        directions = {d for _, d in joined}
        found.append(RelationNeighbour(
            entity=NamedEntity(entity_id=other, name=(first.object_name if direction == "out" else first.subject_name)
                               or other, type=(first.object_type if direction == "out" else first.subject_type) or ""),
            predicates=list(dict.fromkeys(r.predicate for r, _ in joined)),
            direction="both" if len(directions) > 1 else direction, current=any(r.current for r, _ in joined),
            memory_ids=list(dict.fromkeys(m for r, _ in joined for m in r.memory_ids))[:5]))
    return sorted(found, key=lambda n: (not n.current, n.entity.name.lower()))


def entity_memories(
    store: Store, scope: Scope, entity_id: str, *, include_history: bool = False, limit: int = 100,
) -> EntityMemories:
    entity = visible_entity(store, scope, entity_id)
    ids, more = store.entity_memory_ids(scope, entity_id, include_history=include_history,
                                        limit=check_limit("limit", limit))
    return EntityMemories(entity=named(entity), include_history=include_history, truncated=more,
                          memories=cited(store, scope, ids, include_history=include_history))


def entity_evolution(store: Store, scope: Scope, entity_id: str, *, limit: int = 100) -> EntityEvolution:
    """The newest `limit` memories naming the entity, past versions included, with every version their
    UPDATES links reach (a newer version need not name it again), grouped into chains."""
    entity = visible_entity(store, scope, entity_id)
    ids, more = store.entity_memory_ids(scope, entity_id, include_history=True, limit=check_limit("limit", limit))
    members, frontier = set(ids), list(ids)
    links: dict[tuple[str, str], tuple] = {}
    for _ in range(MAX_VERSION_ROUNDS):
        if not frontier:
            break
        for link in store.update_links(scope, frontier):
            links.setdefault((link[0], link[1]), link)
        frontier = [m for pair in links for m in pair if m not in members]
        members.update(frontier)
    memories = store.fetch_memories(scope, list(members), include_history=True)
    found = chains(memories, list(links.values()))
    return EntityEvolution(entity=named(entity), chains=found, facts=[s for c in found for s in c.steps],
                           truncated=more)


def _said(memory: MemoryItem) -> datetime:
    return memory.observed_at or memory.created_at


def chains(memories: dict[str, MemoryItem], links: list[tuple]) -> list[EvolutionChain]:
    """The memories grouped by the UPDATES links between them, each group oldest first (every version
    after those it replaced); groups that changed come first, latest change first, then single facts,
    newest first."""
    links = [link for link in links if link[0] in memories and link[1] in memories and link[0] != link[1]]
    parent = {m: m for m in memories}

    def root(m: str) -> str:
        while parent[m] != m:
            parent[m] = parent[parent[m]]
            m = parent[m]
        return m

    for newer, older, *_ in links:
        parent[root(newer)] = root(older)
    groups: dict[str, list[str]] = defaultdict(list)
    for m in memories:
        groups[root(m)].append(m)
    replaced_by: dict[str, list[tuple]] = defaultdict(list)
    for link in links:
        replaced_by[link[1]].append(link)
    found = []
    for members in groups.values():
        steps = [_step(memories[m], [(memories[link[0]], link) for link in replaced_by[m]])
                 for m in _in_version_order(members, links, memories)]
        changed = max((r.at for s in steps for r in s.replaced_by), default=None)
        found.append((changed, EvolutionChain(steps=steps)))
    found.sort(key=lambda c: (c[0] is None, -(c[0] or _said(memories[c[1].steps[-1].memory_id])).timestamp()))
    return [c for _, c in found]


def _in_version_order(members: list[str], links: list[tuple], memories: dict[str, MemoryItem]) -> list[str]:
    """Older versions before the ones that replaced them (Kahn's order), ties by when they were said."""
    inside = set(members)
    waiting = {m: 0 for m in members}
    newer: dict[str, list[str]] = defaultdict(list)
    for src, dst, *_ in links:
        if src in inside and dst in inside:
            waiting[src] += 1
            newer[dst].append(src)
    key = lambda m: (_said(memories[m]), memories[m].created_at, m)  # noqa: E731
    ready = sorted((m for m, n in waiting.items() if n == 0), key=key)
    order: list[str] = []
    while ready:
        m = ready.pop(0)
        order.append(m)
        for n in newer[m]:
            waiting[n] -= 1
            if waiting[n] == 0:
                ready = sorted([*ready, n], key=key)
    return order + sorted((m for m in members if m not in order), key=key)  # a cycle, should one exist


def _step(memory: MemoryItem, replacements: list[tuple[MemoryItem, tuple]]) -> EvolutionStep:
    return EvolutionStep(
        memory_id=memory.id, content=memory.content, kind=memory.kind, said_at=_said(memory),
        valid_from=memory.valid_from, valid_to=memory.valid_to, is_latest=memory.is_latest,
        replaced_by=[Replacement(memory_id=new.id, content=new.content, at=link[2], reason=link[3],
                                 confidence=link[4], decided_by=link[5]) for new, link in replacements])
