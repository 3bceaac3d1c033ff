"""The service methods of the entity graph (part of `MemoryService`, so every interface reaches them the
one way): entity lists, cards, memories, capped subgraphs, evolution chains, and the conflicts waiting
for a decision, each read through the memories the scope may see (entity_views, entity_graph)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from mnemoflow.config import Settings
from mnemoflow.graph_models import (
    ConflictDecision, ConflictList, EntityCard, EntityEvolution, EntityGraph, EntityList, EntityMemories,
)
from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:
    from mnemoflow.storage import Store


class GraphMethods:
    settings: Settings
    store: Store

    def entities(
        self, scope: Scope, *, types: list[str] | None = None, q: str | None = None, since: datetime | None = None,
        until: datetime | None = None, order: str = "mentions", limit: int = 100,
    ) -> EntityList:
        """Entities the scope's memories name, with the scope's own mention counts, hotness and times."""
        from mnemoflow.entity_views import entity_list

        return entity_list(self.store, scope, types=types, q=q, since=since, until=until, order=order, limit=limit)

    def entity(self, scope: Scope, entity_id: str) -> EntityCard:
        """An entity's card: neighbours by relation and by shared memories, recent mentions, key relations."""
        from mnemoflow.entity_views import entity_card

        return entity_card(self.store, scope, entity_id)

    def entity_memories(self, scope: Scope, entity_id: str, *, include_history: bool = False,
                        limit: int = 100) -> EntityMemories:
        from mnemoflow.entity_views import entity_memories

        return entity_memories(self.store, scope, entity_id, include_history=include_history, limit=limit)

    def entity_graph(
        self, scope: Scope, entity_id: str | None = None, *, depth: int = 1, max_nodes: int | None = None,
        max_edges: int | None = None, types: list[str] | None = None, since: datetime | None = None,
        until: datetime | None = None,
    ) -> EntityGraph:
        """Cytoscape.js elements: `depth` hops around an entity, or the scope's most mentioned entities;
        bounded by the settings' caps, and saying when it reached one."""
        from mnemoflow.entity_graph import GraphCaps, entity_graph

        caps = GraphCaps(self.settings.graph_max_depth, self.settings.graph_max_nodes, self.settings.graph_max_edges)
        return entity_graph(self.store, scope, caps, entity_id, depth=depth, max_nodes=max_nodes,
                            max_edges=max_edges, types=types, since=since, until=until)

    def entity_evolution(self, scope: Scope, entity_id: str, *, limit: int = 100) -> EntityEvolution:
        """The facts about an entity in supersedes order, each with its time and the change that replaced it."""
        from mnemoflow.entity_views import entity_evolution

        return entity_evolution(self.store, scope, entity_id, limit=limit)

    def conflicts(self, scope: Scope, *, limit: int = 100) -> ConflictList:
        """Pairs of current memories linked CONFLICTS_WITH or MAY_UPDATE that wait for a decision."""
        return ConflictList(conflicts=self.store.open_conflicts(scope, limit=limit))

    def resolve_conflict(self, scope: Scope, link_id: str, keep: str | None = None, *,
                         actor: str = "api") -> ConflictDecision:
        """Keep one memory of a conflict (it UPDATES the other) or, with `keep` None, both."""
        return self.store.resolve_conflict(scope, link_id, keep, actor=actor)
