"""The HTTP API over the real service: keys reach their tenant only; events land like transcripts."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mnemoflow.api.http import create_app
from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService

TURNS = [
    {"session_id": "deploy-chat", "turn_id": "1", "speaker": "Ops bot", "role": "assistant",
     "ts": "2024-06-03T08:00:00Z", "text": "Which region should the new cluster run in?"},
    {"session_id": "deploy-chat", "turn_id": "2", "speaker": "Dana", "role": "user",
     "ts": "2024-06-03T08:00:20Z", "text": "Put it in eu-central-1, close to the Frankfurt customers."},
]


@pytest.fixture
def api(tmp_path: Path):
    with MemoryService(load_settings(tmp_path / "home")) as service:
        acme = service.store.create_api_key("acme", "agents")[1]
        globex = service.store.create_api_key("globex")[1]
        yield TestClient(create_app(service)), {"Authorization": f"Bearer {acme}"}, \
            {"Authorization": f"Bearer {globex}"}, service


def test_events_land_like_transcripts_and_are_recalled(api) -> None:
    client, acme, globex, service = api
    posted = client.post("/v1/events", json={"user_id": "dana", "turns": [*TURNS, {"turn_id": "x"}]}, headers=acme)
    assert posted.status_code == 200, posted.text
    body = posted.json()
    assert (body["turns_added"], body["chunks_added"], body["pending_embeddings"]) == (2, 2, 0)
    assert body["errors"] == ["event 3: session_id: Field required"]
    again = client.post("/v1/events", json={"user_id": "dana", "turns": TURNS}, headers=acme).json()
    assert again["turns_added"] == 0  # idempotent, like a re-ingested transcript

    recalled = client.post("/v1/recall", json={"user_id": "dana", "query": "which AWS region for the cluster?",
                                               "k": 2}, headers=acme).json()
    answer = next(i for i in recalled["items"] if "eu-central-1" in i["text"])
    assert answer["citations"][0]["session_id"] == "deploy-chat" and answer["citations"][0]["turn_id"] == "2"
    assert all(isinstance(v, float) for v in answer["scores"].values())  # scores, never vectors

    other_tenant = client.post("/v1/recall", json={"user_id": "dana", "query": "cluster region"}, headers=globex)
    assert other_tenant.json()["items"] == []
    other_user = client.post("/v1/recall", json={"user_id": "sam", "query": "cluster region"}, headers=acme)
    assert other_user.json()["items"] == []


def test_memories_crud_and_tenant_walls(api) -> None:
    client, acme, globex, service = api
    created = client.post("/v1/memories", json={"user_id": "dana", "text": "Dana prefers Terraform over Pulumi"},
                          headers=acme).json()
    memory_id = created["memory"]["id"]
    assert created["created"] and created["memory"]["kind"] == "preference"
    assert client.get(f"/v1/memories/{memory_id}", params={"user_id": "dana"}, headers=acme).status_code == 200
    assert client.get(f"/v1/memories/{memory_id}", params={"user_id": "dana"}, headers=globex).status_code == 404
    assert client.delete(f"/v1/memories/{memory_id}", params={"user_id": "dana"}, headers=globex).status_code == 404
    found = client.post("/v1/search", json={"user_id": "dana", "query": "infrastructure as code tool"},
                        headers=acme).json()
    assert found["results"][0]["id"] == memory_id and found["results"][0]["memory"] == "Dana prefers Terraform over Pulumi"
    assert client.delete(f"/v1/memories/{memory_id}", params={"user_id": "dana"}, headers=acme).status_code == 204
    history = client.get(f"/v1/memories/{memory_id}/history", params={"user_id": "dana"}, headers=acme)
    assert history.status_code == 404  # deletion means gone: no history of its text either


def test_keys_are_required_hashed_and_revocable(api) -> None:
    client, acme, _, service = api
    assert client.post("/v1/recall", json={"user_id": "u", "query": "q"}).status_code == 401
    assert client.post("/v1/recall", json={"user_id": "u", "query": "q"},
                       headers={"Authorization": "Bearer nope"}).status_code == 401
    secret = acme["Authorization"].split()[1]
    stored = service.store.sql("SELECT secret_sha256 FROM api_keys")[1]
    assert all(secret not in row[0] for row in stored)
    key_id = next(k["key_id"] for k in service.store.list_api_keys("acme"))
    service.store.revoke_api_key(key_id)
    assert client.post("/v1/recall", json={"user_id": "u", "query": "q"}, headers=acme).status_code == 401
    assert client.post("/v1/recall", json={"user_id": "bad user!", "query": "q"}, headers=api[2]).status_code == 422


def test_mem0_add_update_search_and_delete_all(api) -> None:
    client, acme, globex, service = api
    added = client.post("/v1/memories", headers=acme, json={
        "user_id": "dana", "agent_id": "ops-bot", "metadata": {"channel": "slack"},
        "messages": [{"role": "assistant", "content": "Which region should the cluster run in?"},
                     {"role": "user", "content": "Put the cluster in eu-central-1."}]}).json()
    assert [e["event"] for e in added["results"]] == ["ADD"] and "eu-central-1" in added["results"][0]["memory"]
    memory_id = added["results"][0]["id"]
    moved = client.put(f"/v1/memories/{memory_id}", headers=acme, json={
        "user_id": "dana", "text": "The cluster runs in eu-west-1 now"}).json()
    assert moved["event"] == "UPDATE" and moved["previous_id"] == memory_id
    assert client.put(f"/v1/memories/{memory_id}", headers=globex, json={"user_id": "dana", "text": "x"}
                      ).status_code == 404
    search = {"query": "cluster region", "filters": {"user_id": "dana", "channel": "slack"}}
    assert [r["memory"] for r in client.post("/v1/search", json=search, headers=acme).json()["results"]] == [
        "The cluster runs in eu-west-1 now"]
    assert client.post("/v1/search", json={**search, "filters": {"user_id": "dana", "channel": "mail"}},
                       headers=acme).json()["results"] == []
    bot_only = client.post("/v1/search", json={"agent_id": "ops-bot", "query": "cluster"}, headers=acme).json()
    assert bot_only["results"] == []  # the agent's own memories: none, Dana's are hers
    assert client.post("/v1/memories", headers=acme, json={"user_id": "dana"}).status_code == 422
    assert client.post("/v1/memories", headers=acme, json={"text": "no owner"}).status_code == 422
    deleted = client.delete("/v1/memories", params={"user_id": "dana"}, headers=acme).json()
    assert set(deleted["deleted"]) == {memory_id, moved["id"]}
    assert client.get("/v1/memories", params={"user_id": "dana"}, headers=acme).json() == {"results": []}
