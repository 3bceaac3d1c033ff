"""Tenant routes for looking at memory (what the dashboard reads and decides through): the entity
graph, conflicts, the review queue, a memory's citations, the tenant's owners, and the evaluation
and quality-check runs. Each is a thin call into `MemoryService`, with the key's tenant and the
owner the request names, like every tenant route.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Path, Query
from fastapi.responses import HTMLResponse

from mnemoflow.api.http import QueryScope, Tenant, _body_scope
from mnemoflow.api.schemas import ConflictDecisionIn, IsoTime, ReviewDecisionIn, Scoped
from mnemoflow.graph_models import (
    ConflictDecision,
    ConflictList,
    EntityCard,
    EntityEvolution,
    EntityGraph,
    EntityList,
    EntityMemories,
)
from mnemoflow.models import Citation, ReviewItem
from mnemoflow.reports import RunsOverview
from mnemoflow.service import MemoryService

Types = Annotated[str | None, Query(description="Entity types, comma-separated (person, place, organization, ...).")]
Since = Annotated[IsoTime | None, Query(description="Only what was said at or after this time.")]
Until = Annotated[IsoTime | None, Query(description="Only what was said before this time.")]
EntityId = Annotated[str, Path(min_length=1, max_length=512, description="An id from the entity list (opaque).")]
Limit = Annotated[int, Query(ge=1, le=1000)]
Depth = Annotated[int, Query(ge=1, description="Hops; a request above the server's cap (setting graph_max_depth, 3 "
                                               "unless configured) is refused naming the cap.")]


def _types(value: str | None) -> list[str] | None:
    return [t for t in value.split(",") if t.strip()] if value else None


def add_view_routes(app: FastAPI, service: MemoryService, keyed: Callable[..., Callable[[Any], Any]]) -> None:
    @keyed("GET", "/v1/entities", response_model=EntityList)
    def entities(scope: QueryScope, type: Types = None, q: Annotated[str | None, Query(max_length=200)] = None,
                 since: Since = None, until: Until = None,
                 order: Literal["mentions", "hotness", "recent", "name"] = "mentions",
                 limit: Limit = 100) -> EntityList:
        """Entities the owner's memories name, with the owner's own mention counts, hotness and times."""
        return service.entities(scope, types=_types(type), q=q, since=since, until=until, order=order, limit=limit)

    @keyed("GET", "/v1/entities/{entity_id}", response_model=EntityCard, refuses=(404,))
    def entity(entity_id: EntityId, scope: QueryScope) -> EntityCard:
        """The entity's card: neighbours by relation and by shared memories, recent mentions with
        citations, key relations. 404 when none of the owner's memories name it."""
        return service.entity(scope, entity_id)

    @keyed("GET", "/v1/entities/{entity_id}/memories", response_model=EntityMemories, refuses=(404,))
    def entity_memories(entity_id: EntityId, scope: QueryScope, include_history: bool = False,
                        limit: Limit = 100) -> EntityMemories:
        return service.entity_memories(scope, entity_id, include_history=include_history, limit=limit)

    @keyed("GET", "/v1/entities/{entity_id}/graph", response_model=EntityGraph, refuses=(404,))
    def entity_graph(entity_id: EntityId, scope: QueryScope,
                     depth: Depth = 1,
                     max_nodes: Annotated[int | None, Query(ge=1)] = None,
                     max_edges: Annotated[int | None, Query(ge=1)] = None,
                     type: Types = None, since: Since = None, until: Until = None) -> EntityGraph:
        """The N-hop subgraph as Cytoscape.js elements, bounded (`truncated` and `note` say when a cap
        stopped it)."""
        return service.entity_graph(scope, entity_id, depth=depth, max_nodes=max_nodes, max_edges=max_edges,
                                    types=_types(type), since=since, until=until)

    @keyed("GET", "/v1/graph", response_model=EntityGraph)
    def graph(scope: QueryScope, max_nodes: Annotated[int | None, Query(ge=1)] = None,
              max_edges: Annotated[int | None, Query(ge=1)] = None, type: Types = None, since: Since = None,
              until: Until = None) -> EntityGraph:
        """The owner's most mentioned entities and what joins them, as Cytoscape.js elements, bounded."""
        return service.entity_graph(scope, max_nodes=max_nodes, max_edges=max_edges, types=_types(type),
                                    since=since, until=until)

    @keyed("GET", "/v1/entities/{entity_id}/evolution", response_model=EntityEvolution, refuses=(404,))
    def entity_evolution(entity_id: EntityId, scope: QueryScope, limit: Limit = 100) -> EntityEvolution:
        """The facts about the entity in supersedes order, each with its time and the change that replaced it."""
        return service.entity_evolution(scope, entity_id, limit=limit)

    @keyed("GET", "/v1/conflicts", response_model=ConflictList)
    def conflicts(scope: QueryScope, limit: Limit = 100) -> ConflictList:
        """Pairs of current memories linked CONFLICTS_WITH or MAY_UPDATE that wait for a decision."""
        return service.conflicts(scope, limit=limit)

    @keyed("POST", "/v1/conflicts/{link_id}/resolve", response_model=ConflictDecision, refuses=(400, 404))
    def resolve_conflict(link_id: Annotated[str, Path(min_length=1, max_length=512)], body: ConflictDecisionIn,
                         tenant_id: Tenant) -> ConflictDecision:
        """Keep one memory (it UPDATES the other, which becomes a past version) or both."""
        return service.resolve_conflict(_body_scope(tenant_id, body), link_id, body.keep)

    @keyed("GET", "/v1/reviews", response_model=list[ReviewItem])
    def reviews(scope: QueryScope, status: Literal["open", "accepted", "rejected", "all"] = "open",
                limit: Limit = 100) -> list[ReviewItem]:
        """Relationship decisions the pipeline was unsure of, with both memories, oldest first."""
        return service.review_items(scope, status=status, limit=limit)

    @keyed("POST", "/v1/reviews/{review_id}/accept", response_model=ReviewItem, refuses=(400,))
    def accept_review(review_id: Annotated[str, Path(min_length=1, max_length=512)], body: ReviewDecisionIn,
                      tenant_id: Tenant) -> ReviewItem:
        """Apply the queued relationship as an automatic decision would (an UPDATES supersedes)."""
        return service.decide_review(_body_scope(tenant_id, body), review_id, True, link_type=body.as_type)

    @keyed("POST", "/v1/reviews/{review_id}/reject", response_model=ReviewItem, refuses=(400,))
    def reject_review(review_id: Annotated[str, Path(min_length=1, max_length=512)], body: Scoped,
                      tenant_id: Tenant) -> ReviewItem:
        """Drop the queued relationship; both memories stay as they are."""
        return service.decide_review(_body_scope(tenant_id, body), review_id, False)

    @keyed("GET", "/v1/memories/{memory_id}/citations", response_model=list[Citation], refuses=(404,))
    def citations(memory_id: str, scope: QueryScope) -> list[Citation]:
        """Where the memory came from: the conversation turns it was read from, or its document."""
        return service.citations(scope, memory_id)

    @keyed("GET", "/v1/owners", response_model=dict[str, int])
    def owners(tenant_id: Tenant) -> dict[str, int]:
        """The users of the key's tenant who hold memories, and how many current ones each has, most first."""
        return service.owners(tenant_id)

    @keyed("GET", "/v1/runs", response_model=RunsOverview)
    def runs(tenant_id: Tenant, limit: Annotated[int, Query(ge=1, le=100)] = 10) -> RunsOverview:
        """The latest evaluation runs (scratch stores: no tenant's data) and this tenant's quality checks."""
        return service.runs(tenant_id, limit=limit)

    @keyed("GET", "/v1/runs/{run_id}/report", refuses=(404,), responses={
        200: {"description": "The report page.", "content": {"text/html": {"schema": {"type": "string"}}}}})
    def run_report(run_id: Annotated[str, Path(min_length=1, max_length=128)], _: Tenant) -> HTMLResponse:
        """An evaluation run's self-contained HTML report page (no script, nothing from the network)."""
        return HTMLResponse(service.run_report(run_id))
