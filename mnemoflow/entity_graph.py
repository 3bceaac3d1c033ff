"""The entity graph as Cytoscape.js elements, bounded: the N-hop neighbourhood of one entity, or the
scope's most mentioned entities, with the relations between them and their co-mentions.

Hard caps (settings `graph_max_depth`, `graph_max_nodes`, `graph_max_edges`): a request above one is
refused naming it, and a graph that reaches one stops there and says so, however large the store.
Breadth first, one read per hop, each asking only for as many neighbours as still fit (plus one, to
know whether the cap cut it), the most shared first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mnemoflow.entity_views import check_types, check_window, visible_entity
from mnemoflow.errors import BadInputError
from mnemoflow.graph_models import Edge, EdgeData, Elements, Entity, EntityGraph, Node, NodeData
from mnemoflow.storage import Scope, Store


@dataclass(frozen=True)
class GraphCaps:
    max_depth: int
    max_nodes: int
    max_edges: int


def _within(name: str, value: int | None, cap: int, setting: str) -> int:
    if value is None:
        return cap
    if value < 1:
        raise BadInputError(f"{name} must be at least 1; got {value}")
    if value > cap:
        raise BadInputError(f"{name} {value} is above the cap of {cap} ({setting})")
    return value


def entity_graph(
    store: Store, scope: Scope, caps: GraphCaps, entity_id: str | None = None, *, depth: int = 1,
    max_nodes: int | None = None, max_edges: int | None = None, types: Sequence[str] | None = None,
    since: datetime | None = None, until: datetime | None = None,
) -> EntityGraph:
    """Around `entity_id` (`depth` hops over shared memories), or without one the scope's most mentioned
    entities; `types` and [since, until) narrow the nodes and the memories that join them."""
    if depth < 1 or depth > caps.max_depth:
        raise BadInputError(f"depth must be between 1 and {caps.max_depth} (the cap, graph_max_depth); got {depth}")
    nodes_cap = _within("max_nodes", max_nodes, caps.max_nodes, "graph_max_nodes")
    edges_cap = _within("max_edges", max_edges, caps.max_edges, "graph_max_edges")
    chosen = check_types(types)
    since, until = check_window(since, until)
    if entity_id is not None:
        seed = visible_entity(store, scope, entity_id)
        hops, cut = _neighbourhood(store, scope, seed, depth, nodes_cap, chosen, since, until)
    else:
        top, total = store.scoped_entities(scope, types=chosen, since=since, until=until, limit=nodes_cap)
        hops, cut = {e.entity_id: 0 for e in top}, total > nodes_cap
    ids = list(hops)
    details = {e.entity_id: e for e in store.scoped_entities(scope, entity_ids=ids, since=since, until=until,
                                                             limit=len(ids))[0]} if ids else {}
    if missing := [i for i in ids if i not in details]:  # the seed, when it was not named in the window
        details.update({e.entity_id: e for e in store.scoped_entities(scope, entity_ids=missing,
                                                                      limit=len(missing))[0]})
    nodes = [Node(data=NodeData(id=i, label=details[i].name, type=details[i].type, mentions=details[i].mention_count,
                                hotness=details[i].hotness, hops=hops[i])) for i in ids if i in details]
    edges, edges_cut = _edges(store, scope, ids, edges_cap, since, until)
    notes = []
    if cut:
        notes.append(f"stopped at {nodes_cap} nodes (the cap; more entities are connected)")
    if edges_cut:
        notes.append(f"stopped at {edges_cap} edges (the cap)")
    return EntityGraph(elements=Elements(nodes=nodes, edges=edges), depth=depth, max_nodes=nodes_cap,
                       max_edges=edges_cap, truncated=cut or edges_cut, note="; ".join(notes) or None)


def _neighbourhood(
    store: Store, scope: Scope, seed: Entity, depth: int, cap: int, types: list[str], since: datetime | None,
    until: datetime | None,
) -> tuple[dict[str, int], bool]:
    """Entity id -> hops from the seed, breadth first, at most `cap` of them; and whether the cap cut it."""
    hops = {seed.entity_id: 0}
    frontier = [seed.entity_id]
    for hop in range(1, depth + 1):
        room = cap - len(hops)
        found = store.co_mentioned(scope, frontier, exclude=list(hops), types=types, since=since, until=until,
                                   limit=room + 1)
        if len(found) > room:
            return {**hops, **{n: hop for n, _, _ in found[:room]}}, True
        hops.update({n: hop for n, _, _ in found})
        frontier = [n for n, _, _ in found]
        if not frontier:
            break
    return hops, False


def _edges(
    store: Store, scope: Scope, ids: list[str], cap: int, since: datetime | None, until: datetime | None,
) -> tuple[list[Edge], bool]:
    """Relations between the nodes first (labelled by predicate), then co-mentions of pairs no relation
    joins; at most `cap`, and whether more were left out."""
    relations = store.entity_relations(scope, ids, both_ends=True, since=since, until=until, limit=cap + 1)
    edges = [Edge(data=EdgeData(id=f"rel|{r.subject}|{r.predicate}|{r.object}", source=r.subject, target=r.object,
                                label=r.predicate, kind="relation", weight=r.memories, current=r.current))
             for r in relations if r.subject != r.object]
    joined = {frozenset((e.data.source, e.data.target)) for e in edges}
    for a, b, count, current in store.co_mention_pairs(scope, ids, since=since, until=until, limit=cap + 1):
        if frozenset((a, b)) not in joined:
            edges.append(Edge(data=EdgeData(id=f"co|{a}|{b}", source=a, target=b, label="co-mentioned",
                                            kind="co-mention", weight=count, current=current)))
    return edges[:cap], len(edges) > cap
