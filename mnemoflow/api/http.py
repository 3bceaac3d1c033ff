"""The HTTP API (FastAPI, OpenAPI at /docs): per-tenant API keys; a key reaches its tenant only.

Every route is a thin call into `MemoryService`; the tenant comes from the key, the user from
the request, so no request can name another tenant.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Query, Request, status
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from mnemoflow.errors import BadInputError, MnemoflowError, NotFoundError, ScopeError, StoreBusyError
from mnemoflow.models import HistoryEntry, MemoryItem, MemoryKind, Profile, TenantDeletion
from mnemoflow.recall import RecallFilters
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope


class Scoped(BaseModel):
    """A request body that names the user it is about (the tenant comes from the key)."""

    user_id: str


class EventsIn(Scoped):
    turns: list[dict[str, Any]] = Field(description="Turns in the transcript format (session_id, turn_id, speaker, "
                                                    "ts, text, optional role and metadata).")
    wait: bool = Field(True, description="Return once the new turns are embedded.")


class EventsOut(BaseModel):
    turns_added: int
    chunks_added: int
    pending_embeddings: int
    errors: list[str]


class MemoryIn(Scoped):
    text: str
    kind: MemoryKind | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class MemoryOut(BaseModel):
    memory: MemoryItem
    created: bool


class RecallIn(Scoped):
    query: str = Field(min_length=1)
    k: int | None = Field(None, ge=1)
    token_budget: int | None = Field(None, ge=16)
    kinds: list[Literal["memory", "chunk", "summary", "profile"]] | None = None
    include_history: bool = Field(
        False, description="Also return memories that are no longer current (superseded, expired), marked; "
        "deleted memories never.",
    )


class PinIn(Scoped):
    pinned: bool = Field(True, description="False lets decay judge the memory again.")


class SearchIn(Scoped):
    query: str = Field(min_length=1)
    limit: int = Field(10, ge=1, le=100)


_STATUS = {NotFoundError: 404, ScopeError: 422, BadInputError: 422, StoreBusyError: 503}


def status_of(exc: MnemoflowError) -> int:
    """The HTTP status of an error: 404 not in scope, 422 bad input, 503 busy or unavailable, else 500."""
    code = next((c for kind, c in _STATUS.items() if isinstance(exc, kind)), None)
    if code is None:
        code = 503 if exc.transient else 500
    return code
_bearer = HTTPBearer(auto_error=False)


def _tenant(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str:
    """The tenant the presented key belongs to; 401 without a valid, unrevoked key."""
    service: MemoryService = request.app.state.service
    found = service.tenant_for_key(credentials.credentials) if credentials else None
    if found is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "a valid API key is required (Authorization: Bearer ...)",
                            headers={"WWW-Authenticate": "Bearer"})
    return found


Tenant = Annotated[str, Depends(_tenant)]


def _query_scope(tenant_id: Tenant, user_id: str) -> Scope:
    """The scope of a request that names its user in the query string."""
    return Scope(tenant_id, user_id)


def _body_scope(tenant_id: str, body: Scoped) -> Scope:
    """The scope of a request that names its user in its body."""
    return Scope(tenant_id, body.user_id)


QueryScope = Annotated[Scope, Depends(_query_scope)]


def create_app(service: MemoryService, lifespan: Any = None) -> FastAPI:
    app = FastAPI(title="mnemoflow", version="1", description="Per-tenant long-term memory for AI agents.",
                  lifespan=lifespan)
    app.state.service = service

    @app.exception_handler(MnemoflowError)
    def _error(_: Request, exc: MnemoflowError) -> JSONResponse:
        return JSONResponse(status_code=status_of(exc), content={"detail": str(exc)})

    @app.get("/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/events", response_model=EventsOut)
    def post_events(body: EventsIn, tenant_id: Tenant) -> EventsOut:
        outcome = service.post_events(_body_scope(tenant_id, body), body.turns, wait=body.wait)
        r = outcome.report
        return EventsOut(turns_added=r.turns_added, chunks_added=r.chunks_added,
                         pending_embeddings=outcome.pending_embeddings, errors=[e.reason for e in r.errors])

    @app.post("/v1/memories", response_model=MemoryOut)
    def add_memory(body: MemoryIn, tenant_id: Tenant) -> MemoryOut:
        memory, created = service.add(_body_scope(tenant_id, body), body.text, kind=body.kind,
                                      metadata=body.metadata)
        return MemoryOut(memory=memory, created=created)

    @app.get("/v1/memories", response_model=list[MemoryItem])
    def list_memories(scope: QueryScope, limit: Annotated[int, Query(ge=1, le=1000)] = 100):
        return service.get_all(scope, limit=limit)

    @app.get("/v1/memories/{memory_id}", response_model=MemoryItem)
    def get_memory(memory_id: str, scope: QueryScope) -> MemoryItem:
        return service.get(scope, memory_id)

    @app.delete("/v1/memories/{memory_id}", status_code=204)
    def delete_memory(memory_id: str, scope: QueryScope) -> None:
        service.delete(scope, memory_id)

    @app.post("/v1/memories/{memory_id}/pin", response_model=MemoryItem)
    def pin_memory(memory_id: str, body: PinIn, tenant_id: Tenant) -> MemoryItem:
        return service.pin(_body_scope(tenant_id, body), memory_id, pinned=body.pinned)

    @app.delete("/v1/tenant", response_model=TenantDeletion)
    def delete_tenant(tenant_id: Tenant) -> TenantDeletion:
        """Delete the key's own tenant, for good: its keys are revoked (this one included) and every
        memory, document, vector and index entry of it is removed."""
        return service.delete_tenant(tenant_id, actor="api")

    @app.get("/v1/memories/{memory_id}/history", response_model=list[HistoryEntry])
    def history(memory_id: str, scope: QueryScope) -> list[HistoryEntry]:
        return service.history(scope, memory_id)

    @app.get("/v1/profile", response_model=Profile)
    def profile(scope: QueryScope) -> Profile:
        """The user's static and dynamic profile, each line citing its memories (404 before the first build)."""
        return service.profile(scope)

    @app.post("/v1/search", response_model=list[MemoryItem])
    def search(body: SearchIn, tenant_id: Tenant) -> list[MemoryItem]:
        return service.search(_body_scope(tenant_id, body), body.query, limit=body.limit)

    @app.post("/v1/recall")
    def recall(body: RecallIn, tenant_id: Tenant) -> dict[str, Any]:
        result = service.recall(_body_scope(tenant_id, body), body.query, k=body.k, token_budget=body.token_budget,
                                filters=RecallFilters(kinds=body.kinds, include_history=body.include_history))
        return result.public()

    return app
