"""The MCP server (official `mcp` SDK): memory tools for agents, over streamable HTTP or stdio.

Over HTTP the tenant comes from the bearer key (a tenant API key, verified like the HTTP API's)
and each call names its owner (a user, an agent or a run, optionally a container); over stdio, for
a desktop client on the user's own machine, the scope is fixed by the options the server was
started with. Every tool is a thin call into one `MemoryService` method; results are JSON with no
embeddings.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mnemoflow.errors import MnemoflowError
from mnemoflow.models import MemoryItem
from mnemoflow.recall.config import RecallFilters
from mnemoflow.service import MemoryService
from mnemoflow.storage.scope import Scope

INSTRUCTIONS = (
    "Long-term memory for this user. Call `recall` before answering anything that may depend on what "
    "the user said before (it returns cited context within a token budget); call `add_memory` when the "
    "user states a fact, preference, plan or rule worth keeping; `forget` removes one on request."
)


class TenantKeys:
    """Verifies a bearer token as a tenant API key: the token's client is the tenant it reaches."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service

    async def verify_token(self, token: str) -> AccessToken | None:
        tenant_id = await anyio.to_thread.run_sync(self._service.tenant_for_key, token)
        return AccessToken(token=token, client_id=tenant_id, scopes=[]) if tenant_id else None


def _memory(item: MemoryItem) -> dict[str, Any]:
    return item.model_dump(mode="json", exclude_none=True)


def build_mcp(service: MemoryService, *, scope: Scope | None = None, url: str | None = None) -> MCPServer:
    """The MCP server: with `scope` (stdio) every call acts in it; without, tenant keys decide (HTTP,
    served at `url`, which is where clients are told to authenticate)."""
    if scope is None and url is None:
        raise ValueError("an MCP server needs a fixed scope (stdio) or its URL (HTTP with tenant keys)")
    auth = None if scope is not None else AuthSettings(
        issuer_url=url, resource_server_url=url, validate_token_resource=False)
    server = MCPServer("mnemoflow", instructions=INSTRUCTIONS, auth=auth, log_level="WARNING",
                       token_verifier=TenantKeys(service) if auth else None)

    def scope_of(user_id: str | None, agent_id: str | None = None, run_id: str | None = None,
                 container: str | None = None) -> Scope:
        named = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "container": container}
        if scope is not None:  # stdio: the scope the server was started for, and no other
            if any(value is not None and value != getattr(scope, key) for key, value in named.items()):
                raise ToolError(f"this server serves {scope} only")
            return scope
        token = get_access_token()
        if token is None:
            raise ToolError("a tenant API key is required")
        if not (user_id or agent_id or run_id):
            raise ToolError("user_id is required (or an agent_id or a run_id): whose memory this is")
        try:
            return Scope(token.client_id, **named)
        except MnemoflowError as exc:
            raise ToolError(str(exc)) from None

    async def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
        except MnemoflowError as exc:
            raise ToolError(str(exc)) from None

    # every tool names whose memory it is about as the HTTP API does: a user_id, an agent_id or a run_id
    # (over HTTP; over stdio the server's own scope), optionally narrowed by a container
    @server.tool()
    async def add_memory(text: str, kind: str | None = None, metadata: dict[str, Any] | None = None,
                         user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                         container: str | None = None) -> dict[str, Any]:
        """Remember one self-contained statement about the user (a fact, preference, plan or rule).
        An exact repeat is recognised and not stored twice."""
        owner = scope_of(user_id, agent_id, run_id, container)
        memory, created = await run(service.add, owner, text, kind=kind, metadata=metadata)
        return {"memory": _memory(memory), "created": created}

    @server.tool()
    async def recall(query: str, token_budget: int = 1024, include_history: bool = False,
                     user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                     container: str | None = None) -> dict[str, Any]:
        """Cited context for a question, packed within a token budget: memories and source passages,
        each with why it was chosen and where it comes from."""
        result = await run(service.recall, scope_of(user_id, agent_id, run_id, container), query,
                           token_budget=token_budget, filters=RecallFilters(include_history=include_history))
        return result.public()

    @server.tool()
    async def search(query: str, limit: int = 10, user_id: str | None = None, agent_id: str | None = None,
                     run_id: str | None = None, container: str | None = None) -> dict[str, Any]:
        """Memories only, best first, each with its score."""
        found = await run(service.search, scope_of(user_id, agent_id, run_id, container), query, limit=limit)
        return {"memories": [_memory(m) for m in found]}

    @server.tool()
    async def get(memory_id: str, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                  container: str | None = None) -> dict[str, Any]:
        """One memory by id."""
        return _memory(await run(service.get, scope_of(user_id, agent_id, run_id, container), memory_id))

    @server.tool()
    async def forget(memory_id: str, user_id: str | None = None, agent_id: str | None = None,
                     run_id: str | None = None, container: str | None = None) -> dict[str, Any]:
        """Delete one of the user's memories: recall stops returning it, its history keeps the record."""
        await run(service.delete, scope_of(user_id, agent_id, run_id, container), memory_id)
        return {"forgotten": memory_id}

    @server.tool()
    async def history(memory_id: str, user_id: str | None = None, agent_id: str | None = None,
                      run_id: str | None = None, container: str | None = None) -> dict[str, Any]:
        """The commits that wrote a memory, oldest first."""
        entries = await run(service.history, scope_of(user_id, agent_id, run_id, container), memory_id)
        return {"history": [e.model_dump(mode="json") for e in entries]}

    @server.tool()
    async def profile(user_id: str | None = None) -> dict[str, Any]:
        """The user's static and dynamic profile, each line citing its memories (built by the `profiles` job)."""
        return (await run(service.profile, scope_of(user_id))).model_dump(mode="json")

    @server.tool()
    async def ingest_text(text: str, title: str | None = None, user_id: str | None = None, agent_id: str | None = None,
                          run_id: str | None = None, container: str | None = None) -> dict[str, Any]:
        """Store a note or document (markdown or plain text) as a source the user's recall can cite."""
        outcome = await run(service.ingest_text, scope_of(user_id, agent_id, run_id, container), text, title=title)
        return {"documents_changed": outcome.report.documents_changed, "chunks_added": outcome.report.chunks_added,
                "errors": [e.reason for e in outcome.report.errors]}

    # the entity graph, as the owner's memories show it (ids are opaque: use the names and types)
    @server.tool()
    async def entities(q: str | None = None, types: list[str] | None = None, limit: int = 50,
                       user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                       container: str | None = None) -> dict[str, Any]:
        """Entities (people, places, organizations, ...) the user's memories name, most mentioned first;
        `q` narrows by name, `types` by type."""
        found = await run(service.entities, scope_of(user_id, agent_id, run_id, container), types=types, q=q,
                          limit=limit)
        return found.model_dump(mode="json")

    @server.tool()
    async def entity(entity_id: str, user_id: str | None = None, agent_id: str | None = None,
                     run_id: str | None = None, container: str | None = None) -> dict[str, Any]:
        """One entity's card: neighbours by relation and by shared memories, recent mentions with
        citations, key relations."""
        return (await run(service.entity, scope_of(user_id, agent_id, run_id, container), entity_id)).model_dump(
            mode="json", exclude_none=True)

    @server.tool()
    async def entity_memories(entity_id: str, include_history: bool = False, limit: int = 50,
                              user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                              container: str | None = None) -> dict[str, Any]:
        """The memories naming an entity, newest first (with `include_history` the superseded ones too)."""
        found = await run(service.entity_memories, scope_of(user_id, agent_id, run_id, container), entity_id,
                          include_history=include_history, limit=limit)
        return found.model_dump(mode="json", exclude_none=True)

    @server.tool()
    async def entity_graph(entity_id: str | None = None, depth: int = 1, max_nodes: int | None = None,
                           user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                           container: str | None = None) -> dict[str, Any]:
        """The entities within `depth` hops of one (or the most mentioned ones) and what joins them, as
        Cytoscape.js elements, bounded by the server's caps."""
        found = await run(service.entity_graph, scope_of(user_id, agent_id, run_id, container), entity_id,
                          depth=depth, max_nodes=max_nodes)
        return found.model_dump(mode="json")

    @server.tool()
    async def entity_evolution(entity_id: str, user_id: str | None = None, agent_id: str | None = None,
                               run_id: str | None = None, container: str | None = None) -> dict[str, Any]:
        """How the facts about an entity changed: each fact, oldest first, with when it was said and the
        change that replaced it."""
        found = await run(service.entity_evolution, scope_of(user_id, agent_id, run_id, container), entity_id)
        return found.model_dump(mode="json")

    @server.tool()
    async def conflicts(user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                        container: str | None = None) -> dict[str, Any]:
        """Pairs of current memories that contradict each other (CONFLICTS_WITH) or may be an update of
        one another (MAY_UPDATE), waiting for a person's decision."""
        found = await run(service.conflicts, scope_of(user_id, agent_id, run_id, container))
        return found.model_dump(mode="json", exclude_none=True)

    return server
