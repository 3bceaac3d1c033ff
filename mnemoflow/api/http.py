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
from mnemoflow.models import HistoryEntry, MemoryItem, Profile, TenantDeletion
from mnemoflow.recall import RecallFilters
from mnemoflow.results import AddResult, DeleteResult, Message, UpdateResult
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope


class Scoped(BaseModel):
    """A request body that names whose memories it is about (the tenant comes from the key): a user,
    an agent or a run, optionally narrowed by a container (see README, "Scopes")."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    container: str | None = None


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
    messages: str | list[Message] | None = Field(
        None, description="A statement, or a conversation: {role, content, optional name and timestamp} turns.")
    text: str | None = Field(None, description="A statement (the same as a string in `messages`).")
    metadata: dict[str, Any] = Field(default_factory=dict)
    infer: bool = Field(True, description="Read the messages into memories like an ingested conversation "
                                          "(relationships decided); false keeps each message as written.")


class UpdateIn(Scoped):
    text: str | None = Field(None, description="The new text: a new version that UPDATES the memory.")
    metadata: dict[str, Any] | None = None


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
    filters: dict[str, Any] | None = Field(
        None, description="mem0's filters: metadata, time and kind conditions with eq/ne/gt/gte/lt/lte/in/nin/"
        "contains/icontains/*, AND/OR/NOT; user_id, agent_id, run_id given here name the scope too.")
    threshold: float | None = Field(None, ge=0, le=1, description="Least cosine similarity to the query.")


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


def _query_scope(tenant_id: Tenant, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None, container: str | None = None) -> Scope:
    """The scope of a request that names its owner in the query string."""
    return Scope(tenant_id, user_id, agent_id, run_id, container)


def _body_scope(tenant_id: str, body: Scoped, filters: dict[str, Any] | None = None) -> Scope:
    """The scope of a request that names its owner in its body (or, as mem0's search does, in its filters)."""
    named = {k: getattr(body, k) for k in ("user_id", "agent_id", "run_id", "container")}
    for key, value in (filters or {}).items():
        if key in named and isinstance(value, str) and named[key] is None:
            named[key] = value
    return Scope(tenant_id, **named)


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

    @app.post("/v1/memories", response_model=AddResult)
    def add_memory(body: MemoryIn, tenant_id: Tenant) -> AddResult:
        """mem0's add: every memory touched comes back in `results` with its event (ADD, UPDATE, NONE)."""
        if (body.messages is None) == (body.text is None):
            raise BadInputError("give the memory as `messages` (a string or a list of turns) or as `text`")
        messages = body.messages if body.messages is not None else body.text
        return service.add_messages(_body_scope(tenant_id, body), messages,  # type: ignore[arg-type]
                                    metadata=body.metadata, infer=body.infer)

    @app.get("/v1/memories", response_model=list[MemoryItem])
    def list_memories(scope: QueryScope, limit: Annotated[int, Query(ge=1, le=1000)] = 100):
        return service.get_all(scope, limit=limit).results

    @app.delete("/v1/memories", response_model=DeleteResult)
    def delete_all(scope: QueryScope) -> DeleteResult:
        """Every memory of the owner named (soft; the retention policy removes them for good)."""
        return service.delete_all(scope)

    @app.put("/v1/memories/{memory_id}", response_model=UpdateResult)
    def update_memory(memory_id: str, body: UpdateIn, tenant_id: Tenant) -> UpdateResult:
        return service.update(_body_scope(tenant_id, body), memory_id, body.text, metadata=body.metadata)

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

    @app.post("/v1/search")
    def search(body: SearchIn, tenant_id: Tenant) -> dict[str, Any]:
        """mem0's search: `{"results": [{id, memory, hash, metadata, score, created_at, ...}]}`, best first."""
        found = service.search(_body_scope(tenant_id, body, body.filters), body.query, limit=body.limit,
                               filters=body.filters, threshold=body.threshold)
        return found.mem0()

    @app.post("/v1/recall")
    def recall(body: RecallIn, tenant_id: Tenant) -> dict[str, Any]:
        result = service.recall(_body_scope(tenant_id, body), body.query, k=body.k, token_budget=body.token_budget,
                                filters=RecallFilters(kinds=body.kinds, include_history=body.include_history))
        return result.public()

    return app
