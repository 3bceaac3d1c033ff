"""A public service's protections, against a real `mnemoflow serve`: per-key rate limits (HTTP 429 with
Retry-After, an MCP error that says when to retry, one tenant's burst leaving another alone), PII
redaction on every write path (no original in any file of the home, recall still finds the memory),
and debug output for admin keys only."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mnemoflow.config import load_settings
from mnemoflow.remote import ServerInfo, connect
from mnemoflow.rules.model import RuleSpec
from mnemoflow.storage.scope import Scope
from tests.serving import start_server, stop_server, wait_until_serving

pytestmark = pytest.mark.slow


@contextmanager
def serving(home: Path, env: dict[str, str]) -> Iterator[ServerInfo]:
    process = start_server(home, "--no-schedules", env=env, log=home.parent / "serve.log")
    try:
        yield wait_until_serving(home, process)
    finally:
        if process.poll() is None:
            stop_server(process)


def keyed(info: ServerInfo, secret: str) -> httpx.Client:
    return httpx.Client(base_url=info.url, headers={"Authorization": f"Bearer {secret}"}, timeout=120)


def key_id(home: Path, secret: str) -> str:
    """The id of a key (the server names it as the actor of what it moves)."""
    with connect(load_settings(home)) as service:
        found = service.api_key(secret)
    assert found is not None
    return found.key_id


# ---------------------------------------------------------------------- rate limits and debug output
def test_rate_limits_per_key_and_debug_output_for_admins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"MNEMOFLOW_RATE_LIMIT_PER_S": "2", "MNEMOFLOW_RATE_LIMIT_BURST": "5",
           "MNEMOFLOW_TENANTS__BULK__RATE_LIMIT_PER_S": "0",  # a tenant of its own: no limit
           "MNEMOFLOW_DEBUG_MAX_ITEMS": "3"}
    with serving(home, env) as info:
        with connect(load_settings(home)) as service:  # the operator, through the server
            busy, quiet, bulk = (service.create_api_key(t)[1] for t in ("busy", "quiet", "bulk"))
            admin = service.create_api_key("quiet", "ops", admin=True)[1]
        hammer, calm, unlimited = keyed(info, busy), keyed(info, quiet), keyed(info, bulk)
        for client, user in ((hammer, "lena"), (calm, "otto")):
            assert client.post("/v1/memories", json={"user_id": user, "text": "The staging database is db-7 in "
                                                     "Frankfurt", "infer": False}).status_code == 200
        recall = {"user_id": "lena", "query": "where is the staging database?"}

        answers = [hammer.post("/v1/recall", json=recall) for _ in range(15)]
        others = [calm.post("/v1/recall", json={**recall, "user_id": "otto"}) for _ in range(4)]  # mid-burst
        answers += [hammer.post("/v1/recall", json=recall) for _ in range(15)]
        limited = [a for a in answers if a.status_code == 429]
        assert len(limited) >= 15 and {a.status_code for a in answers} == {200, 429}
        for answer in limited:
            assert int(answer.headers["Retry-After"]) >= 1
            body = answer.json()
            assert body["code"] == "rate_limited" and body["limit"] == "read" and 0 < body["retry_after_s"] <= 0.5
        assert [o.status_code for o in others] == [200] * 4  # one tenant's burst leaves another alone
        assert "staging database is db-7" in others[0].json()["items"][0]["text"]
        write = hammer.post("/v1/memories", json={"user_id": "lena", "text": "Lena owns the release checklist",
                                                  "infer": False})
        assert write.status_code == 200  # reads and writes have budgets of their own
        assert all(unlimited.post("/v1/recall", json={**recall, "user_id": "kim"}).status_code == 200
                   for _ in range(12))  # the tenant's own setting

        async def over_mcp() -> list[str]:
            said = []
            async with Client(streamable_http_client(f"{info.url}/mcp", http_client=httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {busy}"}))) as client:
                for _ in range(8):
                    result = await client.call_tool("recall", {"query": "staging", "user_id": "lena"})
                    said.append(result.content[0].text if result.is_error else "ok")
            return said

        time.sleep(3)  # the bucket refills (at most 5)
        said = anyio.run(over_mcp)
        assert "ok" in said and any("rate limit" in s and "retry in" in s for s in said)

        with connect(load_settings(home)) as operator:  # rules through the operator's RPC, as the CLI sends them
            scope = Scope("quiet", "otto")
            rule = operator.add_rule(scope, RuleSpec.from_pairs(["env=staging"], ["tool.deny=psql"]), state="shadow")
            operator.set_rule_state(scope, rule.rule_id, "active", actor="cli:tester")
            assert operator.evaluate_rules(scope, {"env": "staging"}).applied == {"tool.deny": ["psql"]}
        moved = calm.post(f"/v1/rules/{rule.rule_id}/state", json={"user_id": "otto", "state": "shadow"}).json()
        assert [t["actor"] for t in moved["transitions"]] == ["api", "cli:tester", f"key:{key_id(home, quiet)}"]
        picked = calm.post("/v1/tools/select", json={"user_id": "otto", "context": {"env": "staging"},
                                                     "candidates": ["psql", "grafana"]}).json()
        assert picked["selected"] == ["psql", "grafana"] and picked["shadow"]["denied"] == ["psql"]
        rated = calm.post(f"/v1/tools/selections/{picked['selection_id']}/feedback",
                          json={"user_id": "otto", "rating": "positive"}).json()
        assert rated["rules"][0]["stats"]["positive"] == 1
        assert calm.get(f"/v1/rules/{rule.rule_id}", params={"user_id": "lena"}).status_code == 404

        debug = {"user_id": "otto", "query": "staging database", "k": 50, "vectors": True}
        refused = calm.post("/v1/debug/recall", json=debug)
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
        shown = keyed(info, admin).post("/v1/debug/recall", json=debug)
        assert shown.status_code == 200, shown.text
        body = shown.json()
        assert len(body["query_vector"]) == body["dimensions"] == 384 and body["max_items"] == 3
        assert 1 <= len(body["items"]) <= 3 and len(body["items"][0]["vector"]) == 384
        assert "fused" in body["items"][0]["scores"] and body["items"][0]["why"]


# ---------------------------------------------------------------------- redaction
CARD, EMAIL, PHONE, IBAN = "4012 8888 8888 1881", "t.okafor@quayside-labs.example", "+1 206 555 0143", \
    "NL91 ABNA 0417 1643 00"
SPELLINGS = [CARD, CARD.replace(" ", ""), EMAIL, PHONE, "206 555 0143", "2065550143", IBAN, IBAN.replace(" ", "")]


def test_redaction_leaves_no_original_in_the_home_and_recall_still_finds_it(tmp_path: Path) -> None:
    home, inputs = tmp_path / "home", tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "billing.md").write_text(f"# Billing contacts\n\nInvoices go to {EMAIL}; the account is {IBAN}.\n")
    (inputs / "call.jsonl").write_text("".join(json.dumps(t) + "\n" for t in [
        {"session_id": "c1", "turn_id": "1", "speaker": "Tomi", "ts": "2025-09-01T10:00:00Z",
         "text": f"Charge the deposit to my card {CARD} please.", "role": "user"},
        {"session_id": "c1", "turn_id": "2", "speaker": "Tomi", "ts": "2025-09-01T10:01:00Z",
         "text": f"If anything fails, text me on {PHONE}.", "role": "user"}]))
    env = {"MNEMOFLOW_REDACT_PII": "true", "MNEMOFLOW_TENANTS__OPEN__REDACT_PII": "false"}
    with serving(home, env) as info:
        with connect(load_settings(home)) as service:
            secret, open_secret = service.create_api_key("quay")[1], service.create_api_key("open")[1]
        client = keyed(info, secret)
        added = client.post("/v1/memories", json={"user_id": "tomi", "text": f"Tomi's card on file is {CARD}"})
        assert added.status_code == 200, added.text
        listed = client.post("/v1/memories", json={"user_id": "tomi", "infer": False, "metadata": {"reach": EMAIL},
                                                   "messages": [{"role": "user", "content": f"My IBAN is {IBAN}"}]})
        memory_id = listed.json()["results"][0]["id"]
        updated = client.put(f"/v1/memories/{memory_id}", json={"user_id": "tomi", "metadata": {"phone": PHONE},
                                                                "text": f"Tomi's IBAN is {IBAN}, phone {PHONE}"})
        assert updated.status_code == 200, updated.text
        events = client.post("/v1/events", json={"user_id": "tomi", "turns": [
            {"session_id": "e1", "turn_id": "1", "speaker": EMAIL, "ts": "2025-09-02T08:00:00Z",
             "text": f"My new email is {EMAIL} and my phone {PHONE}", "metadata": {"card": CARD}}]})
        assert events.status_code == 200 and events.json()["turns_added"] == 1
        rule = client.post("/v1/rules", json={"user_id": "tomi", "if": {"contact": EMAIL},
                                              "then": {"notify.to": PHONE}})
        assert rule.status_code == 200 and rule.json()["if"] == {"contact": "[EMAIL]"}
        ingested = subprocess.run(
            [sys.executable, "-m", "mnemoflow.cli", "ingest", str(inputs), "--home", str(home), "--tenant", "quay",
             "--user", "tomi"], capture_output=True, text=True, timeout=600)
        assert ingested.returncode == 0, ingested.stderr

        found = client.post("/v1/recall", json={"user_id": "tomi", "query": "which card is on file for Tomi?"})
        texts = [i["text"] for i in found.json()["items"]]
        assert any("[CARD]" in t for t in texts), texts
        iban = client.post("/v1/search", json={"user_id": "tomi", "query": "Tomi's IBAN"}).json()["results"]
        assert iban and "[IBAN]" in iban[0]["memory"] and "[PHONE]" in iban[0]["memory"]
        kept = keyed(info, open_secret).post("/v1/memories", json={"user_id": "ray", "infer": False,
                                                                   "text": "Ray's email is ray@open.example"})
        assert "ray@open.example" in kept.json()["results"][0]["memory"]  # a tenant that does not redact
    files = [f for f in home.rglob("*") if f.is_file()]
    assert any(f.suffix == ".duckdb" for f in files) and any("lancedb" in f.parts for f in files)
    assert any("dlt" in f.relative_to(home).parts for f in files)
    leaks = {spelling: [str(f.relative_to(home)) for f in files if spelling.encode() in f.read_bytes()]
             for spelling in SPELLINGS}
    assert leaks == {spelling: [] for spelling in SPELLINGS}
    assert any(b"ray@open.example" in f.read_bytes() for f in files)  # the grep would have seen one
