"""The isolation probes' routes through the interfaces users call, each against a running `mnemoflow
serve` (`mnemoflow.eval.isolation` holds the world, the rule and the service's own route):

- `python`: `Memory`, one per tenant (a client of the server), naming the owner as keywords, and
  by a memory's id alone (an instance holds its whole tenant, so that reaches its tenant only);
- `cli`: `mnemoflow recall/search/get/history/forget` as subprocesses (each ~0.5 s through the server);
- `http`: the HTTP API with each tenant's own key, every memory route, and calls with no key or
  a wrong one;
- `mcp`: the MCP tools through the SDK's client over streamable HTTP, each tenant's own key.

A key names its tenant, so a probe from a scope of tenant A about a row of tenant B is a key of A
asking for B's data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Self

import httpx

from mnemoflow.client import OWNER_KEYS, Memory
from mnemoflow.eval.isolation import Question, Route, Row, refused
from mnemoflow.storage import Scope

PROBE_TEXT = "overwritten by a probe"


def owner(scope: Scope) -> dict[str, str]:
    """The owner fields a scope names, as keywords (and JSON, and MCP arguments)."""
    return {k: v for k in OWNER_KEYS if (v := getattr(scope, k)) is not None}


def same_tenant(scope: Scope, row: Row) -> bool:
    return scope.tenant_id == row.owner.tenant_id


def never(scope: Scope, row: Row) -> bool:
    return False


def done(call: Callable[[], Any]) -> bool:
    return refused(call) is not None


# ---------------------------------------------------------------------- Python API
def python_route(memories: dict[str, Memory]) -> Route:
    """`memories`: a `Memory` per tenant."""
    def m(scope: Scope) -> Memory:
        return memories[scope.tenant_id]

    return {
        "recall": Question("find", lambda s, q: [i.text for i in m(s).recall(q, token_budget=4096, **owner(s)).items],
                           documents=True),
        "search": Question("find", lambda s, q: [r.content for r in m(s).search(q, limit=20, **owner(s))]),
        "get": Question("fetch", lambda s, row: refused(lambda: m(s).get(row.key, **owner(s)).content)),
        "get_by_id": Question("fetch", lambda s, row: refused(lambda: m(s).get(row.key).content), allowed=same_tenant),
        "history": Question("fetch", lambda s, row: refused(
            lambda: " ".join(e.new_memory or "" for e in m(s).history(row.key, **owner(s))))),
        "get_all": Question("list", lambda s: [r.content for r in m(s).get_all(limit=10_000, **owner(s))]),
        "update": Question("write", lambda s, row: done(lambda: m(s).update(row.key, PROBE_TEXT, **owner(s)))),
        "delete": Question("write", lambda s, row: done(lambda: m(s).delete(row.key, **owner(s)))),
        "delete_by_id": Question("write", lambda s, row: done(lambda: m(s).delete(row.key)), allowed=same_tenant),
        "delete_all": Question("wipe", lambda s: m(s).delete_all(**owner(s)).deleted),
    }


# ---------------------------------------------------------------------- CLI
def cli_route(home: Path) -> Route:
    """The `mnemoflow` command, as a subprocess, through the home's running server."""
    flags = {"user_id": "--user", "agent_id": "--agent", "run_id": "--run", "container": "--container"}

    def run(verb: str, scope: Scope, *args: str) -> str | None:
        options = [part for key, value in owner(scope).items() for part in (flags[key], value)]
        done = subprocess.run([sys.executable, "-m", "mnemoflow.cli", verb, *args, "--home", str(home),
                               "--tenant", scope.tenant_id, *options],
                              check=False, capture_output=True, text=True, timeout=300)
        if done.returncode == 0:
            return done.stdout
        if done.returncode == 2 or done.stderr.startswith("mnemoflow: no "):  # refused: a scope it cannot serve,
            return None  # or nothing of that id for the scope
        raise RuntimeError(f"mnemoflow {verb} failed ({done.returncode}): {done.stderr.strip()}")

    def recall(scope: Scope, query: str) -> list[str]:
        return [item["text"] for item in json.loads(run("recall", scope, query, "--json") or "")["items"]]

    def search(scope: Scope, query: str) -> list[str]:
        return [found["memory"] for found in json.loads(run("search", scope, query, "--json") or "")["results"]]

    def get(scope: Scope, row: Row) -> str | None:
        shown = run("get", scope, row.key, "--json")
        return None if shown is None else json.loads(shown)["content"]

    def history(scope: Scope, row: Row) -> str | None:
        shown = run("history", scope, row.key)  # its commits (their lines show no content): the row's, if any
        return None if shown is None else row.content if shown.strip() else shown

    return {
        "recall": Question("find", recall, documents=True),
        "search": Question("find", search),
        "get": Question("fetch", get),
        "history": Question("fetch", history),
        "forget": Question("write", lambda scope, row: run("forget", scope, row.key) is not None),
    }


# ---------------------------------------------------------------------- HTTP
def http_route(client: httpx.Client, keys: dict[str, str]) -> Route:
    """The HTTP API at `client`'s base URL, each scope with its tenant's key from `keys`."""
    def call(method: str, path: str, scope: Scope, *, key: str | None = "", body: dict | None = None,
             params: dict | None = None) -> Any:
        """The answer's JSON (True for an empty success), None where refused (404 not in scope, 422 a
        scope the route cannot serve, 401 without a valid key). The owner goes in the body when there
        is one, else in the query string."""
        key = keys[scope.tenant_id] if key == "" else key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if body is None:
            params = {**owner(scope), **(params or {})}
        response = client.request(method, path, headers=headers, params=params,
                                  json=None if body is None else {**owner(scope), **body})
        if response.status_code in (401, 404, 422):
            return None
        response.raise_for_status()
        return response.json() if response.content else True

    def recall(scope: Scope, query: str) -> list[str]:
        answer = call("POST", "/v1/recall", scope, body={"query": query, "token_budget": 4096})
        return [item["text"] for item in answer["items"]]

    def search(scope: Scope, query: str) -> list[str]:
        return [r["memory"] for r in call("POST", "/v1/search", scope, body={"query": query, "limit": 20})["results"]]

    def get(scope: Scope, row: Row) -> str | None:
        found = call("GET", f"/v1/memories/{row.key}", scope)
        return None if found is None else found["content"]

    def history(scope: Scope, row: Row) -> str | None:
        entries = call("GET", f"/v1/memories/{row.key}/history", scope)
        return None if entries is None else " ".join(e["new_memory"] or "" for e in entries)

    def keyless(scope: Scope, row: Row) -> bool:
        """A read, a search and a write with no key, or a made-up one: anything but a refusal is a leak."""
        key = None if len(row.key) % 2 else "mf_" + row.code
        return any(answer is not None for answer in (
            call("GET", f"/v1/memories/{row.key}", scope, key=key),
            call("POST", "/v1/search", scope, key=key, body={"query": row.code}),
            call("DELETE", f"/v1/memories/{row.key}", scope, key=key)))

    return {
        "recall": Question("find", recall, documents=True),
        "search": Question("find", search),
        "get": Question("fetch", get),
        "history": Question("fetch", history),
        "get_all": Question("list", lambda s: [m["memory"] for m in call("GET", "/v1/memories", s,
                                                                         params={"limit": 1000})["results"]]),
        "update": Question("write", lambda s, row: call("PUT", f"/v1/memories/{row.key}", s,
                                                        body={"text": PROBE_TEXT}) is not None),
        "pin": Question("write", lambda s, row: call("POST", f"/v1/memories/{row.key}/pin", s, body={}) is not None),
        "delete": Question("write", lambda s, row: call("DELETE", f"/v1/memories/{row.key}", s) is not None),
        "delete_all": Question("wipe", lambda s: call("DELETE", "/v1/memories", s)["deleted"]),
        "keyless": Question("write", keyless, allowed=never),
    }


# ---------------------------------------------------------------------- MCP
class McpClients:
    """The SDK's MCP client over streamable HTTP, one session per tenant key, driven from sync code
    through an anyio portal (the client is async)."""

    def __init__(self, url: str, keys: dict[str, str]) -> None:
        import httpx2
        from anyio.from_thread import start_blocking_portal
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        self._stack = ExitStack()
        self._portal = self._stack.enter_context(start_blocking_portal())
        self._clients = {tenant_id: self._stack.enter_context(self._portal.wrap_async_context_manager(Client(
            streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {key}"}, timeout=120)))))
            for tenant_id, key in keys.items()}

    def call(self, scope: Scope, tool: str, **arguments: Any) -> Any:
        """The tool's JSON answer, or None where it refused."""
        result = self._portal.call(self._clients[scope.tenant_id].call_tool, tool, {**arguments, **owner(scope)})
        return None if result.is_error else json.loads(result.content[0].text)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def mcp_route(mcp: McpClients) -> Route:
    def recall(scope: Scope, query: str) -> list[str]:
        return [item["text"] for item in mcp.call(scope, "recall", query=query, token_budget=4096)["items"]]

    def search(scope: Scope, query: str) -> list[str]:
        return [memory["content"] for memory in mcp.call(scope, "search", query=query, limit=20)["memories"]]

    def get(scope: Scope, row: Row) -> str | None:
        found = mcp.call(scope, "get", memory_id=row.key)
        return None if found is None else found["content"]

    def history(scope: Scope, row: Row) -> str | None:
        found = mcp.call(scope, "history", memory_id=row.key)
        return None if found is None else " ".join(e["new_memory"] or "" for e in found["history"])

    return {
        "recall": Question("find", recall, documents=True),
        "search": Question("find", search),
        "get": Question("fetch", get),
        "history": Question("fetch", history),
        "forget": Question("write", lambda scope, row: mcp.call(scope, "forget", memory_id=row.key) is not None),
    }
