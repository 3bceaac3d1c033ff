"""The HTTP API (FastAPI, OpenAPI at /docs): per-tenant API keys; a key reaches its tenant only.

Every route is a thin call into `MemoryService`; the tenant comes from the key, the user from
the request, so no request can name another tenant.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Query, Request, status
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from mnemoflow.errors import BadInputError, MnemoflowError, NotFoundError, ScopeError, StoreBusyError
from mnemoflow.models import HistoryEntry, MemoryItem, MemoryKind
from mnemoflow.recall import RecallFilters
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope


class EventsIn(BaseModel):
    user_id: str
    turns: list[dict[str, Any]] = Field(description="Turns in the transcript format (session_id, turn_id, speaker, "
                                                    "ts, text, optional role and metadata).")
    wait: bool = Field(True, description="Return once the new turns are embedded.")


class EventsOut(BaseModel):
    turns_added: int
    chunks_added: int
    pending_embeddings: int
    errors: list[str]


class MemoryIn(BaseModel):
    user_id: str
    text: str
    kind: MemoryKind | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class MemoryOut(BaseModel):
    memory: MemoryItem
    created: bool


class RecallIn(BaseModel):
    user_id: str
    query: str = Field(min_length=1)
    k: int | None = Field(None, ge=1)
    token_budget: int | None = Field(None, ge=16)
    kinds: list[Literal["memory", "chunk"]] | None = None
    include_history: bool = Field(
        False, description="Also return memories that are no longer current (superseded, expired), marked; "
        "deleted memories never.",
    )


class SearchIn(BaseModel):
    user_id: str
    query: str = Field(min_length=1)
    limit: int = Field(10, ge=1, le=100)


_STATUS = {NotFoundError: 404, ScopeError: 422, BadInputError: 422, StoreBusyError: 503}
_bearer = HTTPBearer(auto_error=False)


def _tenant(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
    """The tenant the presented key belongs to; 401 without a valid, unrevoked key."""
    service: MemoryService = request.app.state.service
    found = service.store.tenant_for_key(credentials.credentials) if credentials else None
    if found is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "a valid API key is required (Authorization: Bearer ...)",
                            headers={"WWW-Authenticate": "Bearer"})
    return found


Tenant = Annotated[str, Depends(_tenant)]


def create_app(service: MemoryService) -> FastAPI:
    app = FastAPI(title="mnemoflow", version="1", description="Per-tenant long-term memory for AI agents.")
    app.state.service = service
    landing = threading.Lock()  # dlt runs one pipeline at a time per scope; events are landed in turn

    @app.exception_handler(MnemoflowError)
    def _error(_: Request, exc: MnemoflowError) -> JSONResponse:
        code = next((c for kind, c in _STATUS.items() if isinstance(exc, kind)), 500)
        return JSONResponse(status_code=code, content={"detail": str(exc)})

    @app.get("/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/events", response_model=EventsOut)
    def post_events(body: EventsIn, tenant_id: Tenant) -> EventsOut:
        with landing:
            outcome = service.post_events(Scope(tenant_id, body.user_id), body.turns, wait=body.wait)
        r = outcome.report
        return EventsOut(turns_added=r.turns_added, chunks_added=r.chunks_added,
                         pending_embeddings=outcome.pending_embeddings, errors=[e.reason for e in r.errors])

    @app.post("/v1/memories", response_model=MemoryOut)
    def add_memory(body: MemoryIn, tenant_id: Tenant) -> MemoryOut:
        memory, created = service.add(Scope(tenant_id, body.user_id), body.text, kind=body.kind,
                                      metadata=body.metadata)
        return MemoryOut(memory=memory, created=created)

    @app.get("/v1/memories", response_model=list[MemoryItem])
    def list_memories(tenant_id: Tenant, user_id: str, limit: Annotated[int, Query(ge=1, le=1000)] = 100):
        return service.get_all(Scope(tenant_id, user_id), limit=limit)

    @app.get("/v1/memories/{memory_id}", response_model=MemoryItem)
    def get_memory(memory_id: str, tenant_id: Tenant, user_id: str) -> MemoryItem:
        return service.get(Scope(tenant_id, user_id), memory_id)

    @app.delete("/v1/memories/{memory_id}", status_code=204)
    def delete_memory(memory_id: str, tenant_id: Tenant, user_id: str) -> None:
        service.delete(Scope(tenant_id, user_id), memory_id)

    @app.get("/v1/memories/{memory_id}/history", response_model=list[HistoryEntry])
    def history(memory_id: str, tenant_id: Tenant, user_id: str) -> list[HistoryEntry]:
        return service.history(Scope(tenant_id, user_id), memory_id)

    @app.post("/v1/search", response_model=list[MemoryItem])
    def search(body: SearchIn, tenant_id: Tenant) -> list[MemoryItem]:
        return service.search(Scope(tenant_id, body.user_id), body.query, limit=body.limit)

    @app.post("/v1/recall")
    def recall(body: RecallIn, tenant_id: Tenant) -> dict[str, Any]:
        result = service.recall(Scope(tenant_id, body.user_id), body.query, k=body.k, token_budget=body.token_budget,
                                filters=RecallFilters(kinds=body.kinds, include_history=body.include_history))
        return result.public()

    return app
