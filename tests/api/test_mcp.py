"""The MCP server, tested with the SDK's own client over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from mnemoflow.config import load_settings
from mnemoflow.remote import connect
from tests.serving import served

TOOLS = {"add_memory", "recall", "search", "get", "forget", "history", "profile", "ingest_text"}


def payload(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def exercise(client: Client, user: dict[str, str]) -> None:
    assert TOOLS <= {t.name for t in (await client.list_tools()).tools}
    added = payload(await client.call_tool("add_memory", {"text": "Noor's locker code is 4471", **user}))
    memory_id = added["memory"]["id"]
    assert added["created"] and added["memory"]["content"] == "Noor's locker code is 4471"
    await client.call_tool("ingest_text", {"text": "# Gym\n\nThe pool closes at 21:00 on Sundays.", **user})
    recalled = payload(await client.call_tool("recall", {"query": "when does the pool close?", **user}))
    assert any("21:00" in item["text"] for item in recalled["items"])
    found = payload(await client.call_tool("search", {"query": "locker", **user}))["memories"]
    assert found[0]["id"] == memory_id
    assert payload(await client.call_tool("get", {"memory_id": memory_id, **user}))["content"].endswith("4471")
    await client.call_tool("forget", {"memory_id": memory_id, **user})
    history = await client.call_tool("history", {"memory_id": memory_id, **user})  # deletion means gone
    assert history.is_error and "no memory" in history.content[0].text
    gone = await client.call_tool("get", {"memory_id": memory_id, **user})
    assert gone.is_error and "no memory" in gone.content[0].text
    unbuilt = await client.call_tool("profile", user)  # the profiles job has not run yet
    assert unbuilt.is_error and "maintain profiles" in unbuilt.content[0].text


def test_stdio_for_a_desktop_client_acts_for_the_scope_it_was_started_for(tmp_path: Path) -> None:
    home = tmp_path / "home"
    command = StdioServerParameters(command=sys.executable, args=[
        "-m", "mnemoflow.cli", "serve", "mcp", "--home", str(home), "--tenant", "acme", "--user", "noor"])

    async def main() -> None:
        async with Client(command) as client:
            await exercise(client, {})
            other = await client.call_tool("recall", {"query": "locker", "user_id": "sam"})
            assert other.is_error and "serves acme/noor only" in other.content[0].text

    anyio.run(main)
    with connect(load_settings(home)) as service:  # what it wrote is in the store, in that scope
        from mnemoflow.storage.scope import Scope

        assert service.counts(Scope("acme", "noor"))["documents"] == 1


@pytest.mark.slow
def test_streamable_http_needs_a_tenant_key_and_names_the_user(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with served(home) as info:
        with connect(load_settings(home)) as service:
            acme_key = service.create_api_key("acme")[1]
            globex_key = service.create_api_key("globex")[1]

        def client(key: str) -> Client:
            return Client(streamable_http_client(f"{info.url}/mcp", http_client=httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {key}"})))

        async def main() -> None:
            async with client(acme_key) as acme:
                await exercise(acme, {"user_id": "noor"})
                unnamed = await acme.call_tool("recall", {"query": "pool"})
                assert unnamed.is_error and "user_id is required" in unnamed.content[0].text
                planner = {"user_id": "noor", "agent_id": "planner"}  # an agent's memories of the user
                added = payload(await acme.call_tool("add_memory", {"text": "Noor's trains leave from Oriente",
                                                                    **planner}))["memory"]
                assert (added["user_id"], added["agent_id"]) == ("noor", "planner")
                found = payload(await acme.call_tool("search", {"query": "trains Oriente", **planner}))["memories"]
                assert [m["id"] for m in found] == [added["id"]]
                scout = payload(await acme.call_tool("search", {"query": "trains Oriente", "user_id": "noor",
                                                                "agent_id": "scout"}))["memories"]
                assert scout == []  # another agent of the same user sees none of it
                await acme.call_tool("add_memory", {"text": "Noor lives in Lisbon", "user_id": "noor"})
                with connect(load_settings(home)) as service:  # through the server, like a scheduled run
                    service.maintain("profiles", tenant_id="acme")
                built = payload(await acme.call_tool("profile", {"user_id": "noor"}))
                assert (built["tenant_id"], built["user_id"], built["version"]) == ("acme", "noor", 1)
            async with client(globex_key) as globex:  # another tenant's key sees nothing of acme
                theirs = payload(await globex.call_tool("recall", {"query": "pool", "user_id": "noor"}))
                assert theirs["items"] == []
                assert (await globex.call_tool("profile", {"user_id": "noor"})).is_error
            with pytest.raises(Exception, match="unhandled errors"):  # noqa: PT011  (the SDK's task group wraps it)
                async with client("mf_not-a-key") as stranger:
                    await stranger.list_tools()

        anyio.run(main)
        for headers in ({"Authorization": "Bearer mf_not-a-key"}, {}):  # what the client was told, on the wire
            refused = httpx2.post(f"{info.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                  headers={**headers, "Accept": "application/json, text/event-stream"})
            assert refused.status_code == 401 and "Bearer" in refused.headers["www-authenticate"]
