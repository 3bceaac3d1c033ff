"""Bounded graph expansion: from the top-ranked memories to the memories linked to them.

Breadth first, one batch of storage reads per hop: links (EXTENDS and DERIVES both ways,
UPDATES only towards the newer version) and, optionally, entities shared with the
frontier. Every memory it adds is read back through the store's scope and lifecycle gate
(`fetch_memories`), so expansion can never reach a deleted, superseded or expired memory
(unless history is asked for), nor another tenant's or user's. Bounded by `depth` hops and
`max_items` memories; the nearer, better-ranked seed wins when two reach the same memory.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from mnemoflow.models import MemoryItem
from mnemoflow.recall.config import DEFAULT_GRAPH_LINKS
from mnemoflow.storage import Scope, Store

EXTRACTED_FROM = "EXTRACTED_FROM"
ENTITY_PREFIX = "entity:"


@dataclass(frozen=True)
class Expansion:
    """A memory reached from `from_id` (a seed or an earlier expansion; a chunk for EXTRACTED_FROM).

    `via` is the link type, or the shared entity's id (`entity:<type>:<slug>`). `outgoing` says the
    link runs from `from_id` to this memory (for UPDATES: this memory is the older version)."""

    memory_id: str
    via: str
    from_id: str
    hops: int
    outgoing: bool = False
    memory: MemoryItem | None = field(default=None, compare=False, repr=False)

    @property
    def by_entity(self) -> bool:
        return self.via.startswith(ENTITY_PREFIX)


def expand(
    store: Store,
    scope: Scope,
    seeds: Sequence[str],
    *,
    depth: int = 1,
    max_items: int = 8,
    link_types: Sequence[str] = DEFAULT_GRAPH_LINKS,
    entities: bool = True,
    chunk_seeds: Sequence[str] = (),
    exclude: Collection[str] = (),
    include_history: bool = False,
    ignore_entities: Collection[str] = (),
) -> list[Expansion]:
    """Memories linked to `seeds` (memory ids, best first), in the order they were reached.

    `chunk_seeds` (chunk ids, best first) add the memories extracted from them at hop 1.
    `exclude` are memories not to return (those already candidates); seeds never are.
    `include_history` admits past versions and expired memories, and follows UPDATES both ways.
    `ignore_entities` are entities not followed (ones that nearly every memory names).
    """
    if max_items <= 0 or depth <= 0 or not (seeds or chunk_seeds):
        return []
    types = tuple(dict.fromkeys(link_types))
    seen = {*seeds, *exclude}
    found: list[Expansion] = []
    frontier = list(dict.fromkeys(seeds))
    for hop in range(1, depth + 1):
        proposals = _linked(store, scope, frontier, types, hop, include_history)
        if hop == 1 and chunk_seeds:
            proposals += _extracted(store, scope, list(dict.fromkeys(chunk_seeds)))
        if entities and frontier:
            proposals += _shared_entities(store, scope, frontier, hop, max_items - len(found), seen, ignore_entities)
        first: dict[str, Expansion] = {}  # the first proposal for each memory wins
        for p in proposals:
            if p.memory_id not in seen:
                first.setdefault(p.memory_id, p)
        order = list(first)
        frontier = []
        # read back through the gate a few more than can still be added at a time, not all of them
        step = max(2 * (max_items - len(found)), 8)
        for start in range(0, len(order), step):
            batch = order[start:start + step]
            live = store.fetch_memories(scope, batch, include_history=include_history)
            for memory_id in batch:
                if memory_id not in live:
                    continue
                p = first[memory_id]
                seen.add(memory_id)
                found.append(Expansion(memory_id, p.via, p.from_id, p.hops, p.outgoing, live[memory_id]))
                frontier.append(memory_id)
                if len(found) >= max_items:
                    return found
        if not frontier:
            break
    return found


def _linked(
    store: Store, scope: Scope, frontier: list[str], types: tuple[str, ...], hop: int, include_history: bool,
) -> list[Expansion]:
    """Neighbours over links, ordered by the rank of the frontier memory they were reached from."""
    if not frontier or not types:
        return []
    rank = {memory_id: i for i, memory_id in enumerate(frontier)}
    proposals: list[tuple[int, Expansion]] = []
    for src, dst, link_type in store.linked_memories(scope, frontier, types):
        if dst in rank and src != dst:  # the newer version, the memory extending or derived from it
            proposals.append((rank[dst], Expansion(src, link_type, dst, hop, outgoing=False)))
        if src in rank and src != dst and (link_type != "UPDATES" or include_history):
            proposals.append((rank[src], Expansion(dst, link_type, src, hop, outgoing=True)))
    proposals.sort(key=lambda p: (p[0], p[1].memory_id))
    return [p for _, p in proposals]


def _extracted(store: Store, scope: Scope, chunk_ids: list[str]) -> list[Expansion]:
    """The user's memories extracted from these chunks (links run memory -> chunk)."""
    rank = {chunk_id: i for i, chunk_id in enumerate(chunk_ids)}
    proposals = [(rank[dst], Expansion(src, EXTRACTED_FROM, dst, 1))
                 for src, dst, _ in store.linked_memories(scope, chunk_ids, (EXTRACTED_FROM,)) if dst in rank]
    proposals.sort(key=lambda p: (p[0], p[1].memory_id))
    return [p for _, p in proposals]


def _shared_entities(
    store: Store, scope: Scope, frontier: list[str], hop: int, wanted_count: int, seen: Collection[str],
    ignore: Collection[str] = (),
) -> list[Expansion]:
    """Memories sharing an entity with a frontier memory, each credited to the best-ranked frontier
    memory it shares one with; `via` names the rarest entity they share. Three reads whatever the
    frontier's size. Ordered by that frontier memory's rank, then by the store's order (those
    sharing rarer entities first: an entity everything names, like the user themself, says little)."""
    by_memory = {m: [e for e in ids if e not in ignore]
                 for m, ids in store.memory_entity_ids(scope, frontier).items()}  # rarest first
    wanted = list(dict.fromkeys(e for memory_id in frontier for e in by_memory.get(memory_id, ())))
    if not wanted:
        return []
    members = {*frontier, *seen}
    found = store.memories_with_entities(scope, wanted, limit=wanted_count + len(members))
    neighbours = [n for n in found if n not in members][:wanted_count]
    if not neighbours:
        return []
    their_entities = store.memory_entity_ids(scope, neighbours)
    proposals: list[tuple[int, int, Expansion]] = []
    for position, neighbour in enumerate(neighbours):
        theirs = set(their_entities.get(neighbour) or ())
        for rank, memory_id in enumerate(frontier):
            shared = [e for e in by_memory.get(memory_id, ()) if e in theirs]
            if shared:
                proposals.append((rank, position, Expansion(neighbour, shared[0], memory_id, hop)))
                break
    proposals.sort(key=lambda p: p[:2])
    return [p for *_, p in proposals]
