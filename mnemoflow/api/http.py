"""The HTTP API (FastAPI, OpenAPI at /docs): per-tenant API keys; a key reaches its tenant only.

Every route is a thin call into `MemoryService`; the tenant comes from the key, the user from
the request, so no request can name another tenant. Each key spends from a read and a write budget
(`protect.ratelimit`): over it, 429 with Retry-After. Debug output needs an admin key (403 without).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from mnemoflow.api.schemas import (
    OWNER,
    EventsIn,
    EventsOut,
    IsoTime,
    Mem0Results,
    MemoryIn,
    PinIn,
    RecallIn,
    Scoped,
    SearchIn,
    UpdateIn,
    refusals,
)
from mnemoflow.errors import (
    BadInputError,
    ForbiddenError,
    MnemoflowError,
    NotFoundError,
    RateLimitedError,
    ScopeError,
    StoreBusyError,
)
from mnemoflow.models import ApiKey, HistoryEntry, MemoryItem, MemoryKind, PublicRecall, TenantDeletion
from mnemoflow.protect.ratelimit import Kind, enforce, retry_after
from mnemoflow.recall import RecallFilters
from mnemoflow.results import AddResult, DeleteResult, UpdateResult
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.storage.scope import ID_PATTERN
from mnemoflow.timeutil import iso_utc
from mnemoflow.tree_models import Profile
from mnemoflow.unicode_text import refuse_lone_surrogates

RETRY_AFTER_S = 1  # what a 503 asks a client to wait: the shared store reconnects at its next request
_STATUS = {NotFoundError: 404, ScopeError: 422, BadInputError: 422, ForbiddenError: 403, RateLimitedError: 429,
           StoreBusyError: 503}
_CODES = {NotFoundError: "not_found", ScopeError: "bad_scope", BadInputError: "bad_input", ForbiddenError: "forbidden",
          RateLimitedError: "rate_limited", StoreBusyError: "busy"}


def status_of(exc: MnemoflowError) -> int:
    """The HTTP status of an error: 404 not in scope, 422 bad input, 503 busy or unavailable, else 500."""
    code = next((c for kind, c in _STATUS.items() if isinstance(exc, kind)), None)
    if code is None:
        code = 503 if exc.transient else 500
    return code


def error_body(exc: MnemoflowError) -> dict[str, Any]:
    """What a refusal says: `detail` for people, `code` for programs (and when to retry, once limited)."""
    code = next((c for kind, c in _CODES.items() if isinstance(exc, kind)), "unavailable" if exc.transient else "error")
    body: dict[str, Any] = {"detail": _printable(str(exc)), "code": code}
    if isinstance(exc, RateLimitedError):
        body.update(retry_after_s=exc.retry_after_s, limit=exc.kind)
    return body


_bearer = HTTPBearer(auto_error=False)


def _key(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> ApiKey:
    """The key presented; 401 without a valid, unrevoked one. (Looked up once per request.)"""
    service: MemoryService = request.app.state.service
    found = service.api_key(credentials.credentials) if credentials else None
    if found is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "a valid API key is required (Authorization: Bearer ...)",
                            headers={"WWW-Authenticate": "Bearer"})
    return found


Key = Annotated[ApiKey, Depends(_key)]


def _tenant(key: Key) -> str:
    """The tenant the presented key belongs to."""
    return key.tenant_id


Tenant = Annotated[str, Depends(_tenant)]


def _budget(kind: Kind) -> Any:
    def spend(request: Request, key: Key) -> None:
        """One request of the key's `kind` budget; RateLimitedError (429) when it is spent."""
        enforce(request.app.state.service.rate_limiter, key.key_id, key.tenant_id, kind)
    return spend


_SPEND = {"read": Depends(_budget("read")), "write": Depends(_budget("write"))}


def _once_each(request: Request) -> None:
    """A query parameter given twice is refused: `?user_id=a&user_id=b` names no one scope (FastAPI would
    take the last, a proxy's log the first)."""
    repeated = sorted({k for k, _ in request.query_params.multi_items() if len(request.query_params.getlist(k)) > 1})
    if repeated:
        raise BadInputError(f"each query parameter at most once; repeated: {', '.join(repeated)}")
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


async def _text_body(request: Request) -> None:
    """A body holding a lone surrogate is refused whatever field holds it, one the route ignores included:
    it is not text. Only a body that escapes a surrogate at all is parsed here (a pair is text)."""
    body = await request.body()  # Starlette keeps it for the route
    if _ESCAPED_SURROGATE.search(body):
        try:
            parsed = json.loads(body)
        except ValueError:
            return  # not JSON: the route says so (400)
        refuse_lone_surrogates("the body", parsed)


OwnerId = Annotated[str | None, Query(pattern=ID_PATTERN)]  # the query string's ids, in `Scope`'s alphabet


def _query_scope(tenant_id: Tenant, user_id: Annotated[str | None, Query(pattern=ID_PATTERN, description=OWNER)] = None,
                 agent_id: OwnerId = None, run_id: OwnerId = None, container: OwnerId = None) -> Scope:
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


def _printable(value: Any) -> Any:
    """`value` with every string encodable as UTF-8: a lone surrogate ("\\ud800", which JSON can carry
    and no UTF-8 text can) is shown as its escape, so that a refusal quoting it can be sent at all."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(v) for v in value]
    return value


NOT_TEXT = "not valid Unicode text: it holds a lone surrogate (such as \\ud800), which has no UTF-8 form"


def _json_type(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


def refused_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A request its schema rejects: 400 when the body is not JSON (or is sent as another content type;
    without a content type a body is read as JSON), else FastAPI's 422 `detail` list, with any lone
    surrogate it quotes escaped and named as such."""
    errors = list(exc.errors())
    if bad := next((e for e in errors if e.get("type") == "json_invalid"), None):
        where = bad.get("ctx", {}).get("error", "")
        return JSONResponse(status_code=400, content={
            "detail": f"the body is not JSON ({where} at character {bad['loc'][-1]})" if where else
                      "the body is not JSON"})
    sent = request.headers.get("content-type", "")
    if sent and not _json_type(sent) and any(tuple(e.get("loc", ())) == ("body",) for e in errors):
        return JSONResponse(status_code=400, content={
            "detail": f"the body is read as JSON: send it as application/json (or with no content type), "
                      f"not as {_printable(sent)}"})
    shown = [{**e, "msg": NOT_TEXT} if e.get("type") == "string_unicode" else e for e in errors]
    return JSONResponse(status_code=422, content={"detail": _printable(jsonable_encoder(shown))})


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the request's path takes (of the routes the app holds itself, not
    of routers it includes)."""
    partial = [r for r in request.app.router.routes if r.matches(request.scope)[0] is Match.PARTIAL]
    return sorted({method for route in partial for method in getattr(route, "methods", None) or ()})


def create_app(service: MemoryService, lifespan: Any = None) -> FastAPI:
    # a body with no content type is read as JSON (curl and many clients send none)
    app = FastAPI(title="mnemoflow", version="1", description="Per-tenant long-term memory for AI agents.",
                  lifespan=lifespan, strict_content_type=False)
    app.state.service = service
    def keyed(method: str, path: str, *, refuses: tuple[int, ...] = (), kind: Kind | None = None,
              responses: dict[int | str, Any] | None = None, **route: Any) -> Callable[[Any], Any]:
        """A tenant route: it needs a key, spends from the key's read (GET, and queries sent as POST) or
        write budget, the store may be busy, and it says what else it refuses."""
        spend = _SPEND[kind or ("read" if method == "GET" else "write")]
        declared = {**refusals(401, 422, 429, 503, *refuses), **(responses or {})}
        return app.api_route(path, methods=[method], responses=declared, dependencies=[spend, Depends(_once_each), Depends(_text_body)],
                             **route)

    @app.exception_handler(MnemoflowError)
    def _error(_: Request, exc: MnemoflowError) -> JSONResponse:
        # over its rate: when the bucket refills; a transient failure (the store restarting): a second
        if isinstance(exc, RateLimitedError):
            headers = {"Retry-After": str(retry_after(exc.retry_after_s))}
        else:
            headers = {"Retry-After": str(RETRY_AFTER_S)} if exc.transient else None
        return JSONResponse(status_code=status_of(exc), content=error_body(exc), headers=headers)

    app.add_exception_handler(RequestValidationError, refused_request)  # type: ignore[arg-type]

    @app.exception_handler(StarletteHTTPException)
    async def _refused(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 405 and (allowed := allowed_methods(request)):  # Starlette's Allow names the
            exc.headers = {**(exc.headers or {}), "Allow": ", ".join(allowed)}  # first route of the path only
        if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeError):  # FastAPI's "error parsing the body"
            exc = StarletteHTTPException(400, "the body is not JSON: it is not UTF-8 text")
        return await http_exception_handler(request, exc)

    @app.get("/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @keyed("POST", "/v1/events", response_model=EventsOut, refuses=(400,))
    def post_events(body: EventsIn, tenant_id: Tenant) -> EventsOut:
        outcome = service.post_events(_body_scope(tenant_id, body), body.turns, wait=body.wait)
        r = outcome.report
        return EventsOut(turns_added=r.turns_added, chunks_added=r.chunks_added,
                         pending_embeddings=outcome.pending_embeddings, errors=[e.reason for e in r.errors])

    @keyed("POST", "/v1/memories", response_model=AddResult, refuses=(400,))
    def add_memory(body: MemoryIn, tenant_id: Tenant) -> AddResult:
        """mem0's add: every memory touched comes back in `results` with its event (ADD, UPDATE, NONE)."""
        if (body.messages is None) == (body.text is None):
            raise BadInputError("give the memory as `messages` (a string or a list of turns) or as `text`")
        messages = body.messages if body.messages is not None else body.text
        return service.add_messages(_body_scope(tenant_id, body), messages,  # type: ignore[arg-type]
                                    metadata=body.metadata, infer=body.infer, timestamp=body.timestamp)

    @keyed("GET", "/v1/memories", response_model=Mem0Results, response_model_exclude_none=True)
    def list_memories(scope: QueryScope, limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                      kind: MemoryKind | None = None,
                      since: Annotated[IsoTime | None, Query(description="Written at or after this time.")] = None,
                      until: Annotated[IsoTime | None, Query(description="Written before this time.")] = None,
                      ) -> dict[str, Any]:
        """mem0's get_all: `{"results": [{id, memory, hash, metadata, created_at, ...}]}`, newest first (the
        shape `/v1/search` answers in; `GET /v1/memories/{id}` gives one memory whole), of one kind and
        written in [since, until) when given."""
        window = {op: iso_utc(t) for op, t in (("gte", since), ("lt", until)) if t is not None}
        filters = {**({"kind": kind} if kind else {}), **({"created_at": window} if window else {})}
        return service.get_all(scope, limit=limit, filters=filters or None).mem0()

    @keyed("DELETE", "/v1/memories", response_model=DeleteResult)
    def delete_all(scope: QueryScope) -> DeleteResult:
        """Every memory of the owner named (soft; the retention policy removes them for good)."""
        return service.delete_all(scope)

    @keyed("PUT", "/v1/memories/{memory_id}", response_model=UpdateResult, refuses=(400, 404))
    def update_memory(memory_id: str, body: UpdateIn, tenant_id: Tenant) -> UpdateResult:
        return service.update(_body_scope(tenant_id, body), memory_id, body.text, metadata=body.metadata)

    @keyed("GET", "/v1/memories/{memory_id}", response_model=MemoryItem, refuses=(404,))
    def get_memory(memory_id: str, scope: QueryScope) -> MemoryItem:
        return service.get(scope, memory_id)

    @keyed("DELETE", "/v1/memories/{memory_id}", status_code=204, refuses=(404,))
    def delete_memory(memory_id: str, scope: QueryScope) -> None:
        service.delete(scope, memory_id)

    @keyed("POST", "/v1/memories/{memory_id}/pin", response_model=MemoryItem, refuses=(400, 404))
    def pin_memory(memory_id: str, body: PinIn, tenant_id: Tenant) -> MemoryItem:
        return service.pin(_body_scope(tenant_id, body), memory_id, pinned=body.pinned)

    @keyed("DELETE", "/v1/tenant", response_model=TenantDeletion)
    def delete_tenant(tenant_id: Tenant) -> TenantDeletion:
        """Delete the key's own tenant, for good: its keys are revoked (this one included) and every
        memory, document, vector and index entry of it is removed."""
        return service.delete_tenant(tenant_id, actor="api")

    @keyed("GET", "/v1/memories/{memory_id}/history", response_model=list[HistoryEntry], refuses=(404,))
    def history(memory_id: str, scope: QueryScope) -> list[HistoryEntry]:
        return service.history(scope, memory_id)

    @keyed("GET", "/v1/profile", response_model=Profile, refuses=(404,))
    def profile(scope: QueryScope) -> Profile:
        """The user's static and dynamic profile, each line citing its memories (404 before the first build)."""
        return service.profile(scope)

    @keyed("POST", "/v1/search", response_model=Mem0Results, response_model_exclude_none=True, refuses=(400,),
           kind="read")
    def search(body: SearchIn, tenant_id: Tenant) -> dict[str, Any]:
        """mem0's search: `{"results": [{id, memory, hash, metadata, score, created_at, ...}]}`, best first."""
        found = service.search(_body_scope(tenant_id, body, body.filters), body.query, limit=body.limit,
                               filters=body.filters, threshold=body.threshold)
        return found.mem0()

    @keyed("POST", "/v1/recall", response_model=PublicRecall, response_model_exclude_none=True, refuses=(400,),
           kind="read")
    def recall(body: RecallIn, tenant_id: Tenant) -> dict[str, Any]:
        result = service.recall(_body_scope(tenant_id, body), body.query, k=body.k, token_budget=body.token_budget,
                                filters=RecallFilters(kinds=body.kinds, include_history=body.include_history),
                                config=body.preset)
        return result.public()

    from mnemoflow.api.dashboard import mount_dashboard
    from mnemoflow.api.debug_routes import add_debug_routes  # they use this module's Key and QueryScope
    from mnemoflow.api.rule_routes import add_rule_routes
    from mnemoflow.api.views import add_view_routes

    add_view_routes(app, service, keyed)
    add_rule_routes(keyed)
    add_debug_routes(keyed)
    mount_dashboard(app)
    return app
