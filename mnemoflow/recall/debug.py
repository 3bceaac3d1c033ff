"""Debug output of recall: what `why` does not show (the fused score after reranking, each signal's
raw score) and, when asked, the raw vectors of the query and of each item. Only admin keys reach it
over the APIs (`api.debug_routes`), and it stays bounded: at most `debug_max_items` items, vectors
rounded to 5 decimals (384 numbers each for the local model)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from mnemoflow.storage.scope import Scope

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService

DECIMALS = 5
VECTOR_TARGETS = {"memory": "memories", "chunk": "chunks", "summary": "summaries"}


class DebugItem(BaseModel):
    kind: str
    id: str
    score: float = Field(description="The score the item was ranked by (fused, then reranked).")
    scores: dict[str, float]
    why: str
    vector: list[float] | None = Field(None, description="Its stored vector, when asked for.")


class DebugRecall(BaseModel):
    query: str
    model: str
    dimensions: int
    query_vector: list[float] | None = None
    items: list[DebugItem]
    max_items: int = Field(description="The most items a debug answer holds (`debug_max_items`).")


def _rounded(vector: object) -> list[float]:
    return [round(float(x), DECIMALS) for x in vector]  # type: ignore[attr-defined]


def debug_recall(service: MemoryService, scope: Scope, query: str, *, k: int, vectors: bool) -> DebugRecall:
    """Recall's top `k` (at most `debug_max_items`) with their internal scores, and raw vectors if asked."""
    limit = service.settings.debug_max_items
    result = service.recall(scope, query, k=min(k, limit), token_budget=1_000_000)
    items = result.items[:limit]
    stored: dict[str, object] = {}
    query_vector = None
    if vectors:
        query_vector = _rounded(service.embedder.embed_query(result.query))
        for kind, target in VECTOR_TARGETS.items():
            stored |= service.store.stored_vectors(scope, target, [i.id for i in items if i.kind == kind])  # type: ignore[arg-type]
    return DebugRecall(
        query=result.query, model=service.settings.resolved_embedding_model, dimensions=service.embedder.dim,
        query_vector=query_vector, max_items=limit,
        items=[DebugItem(kind=i.kind, id=i.id, score=round(i.score, 6), scores=i.scores, why=i.why,
                         vector=_rounded(stored[i.id]) if i.id in stored else None) for i in items])
