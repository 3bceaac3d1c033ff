"""What a running `mnemoflow serve` makes of bodies a new user sends by mistake, and the rules every
interface shares: a lone surrogate is a 4xx, a body that is not JSON a 400 as documented, JSON without a
content type is read; an empty turn, an unknown role or preset and an empty query are refused with the
allowed values named; lists come in mem0's `{"results": [...]}`; an updated memory keeps the id the
caller holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mnemoflow import Memory
from mnemoflow.config import load_settings
from mnemoflow.errors import BadInputError
from mnemoflow.remote import RemoteService, connect
from tests.serving import served

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, httpx.Client]]:
    home = tmp_path_factory.mktemp("rules") / "home"
    with served(home) as info, connect(load_settings(home)) as service:
        assert isinstance(service, RemoteService)
        key = service.create_api_key("acme")[1]
        with httpx.Client(base_url=info.url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as client:
            yield home, client


def send(client: httpx.Client, path: str, raw: bytes, content_type: str | None = "application/json") -> httpx.Response:
    return client.post(path, content=raw, headers={"Content-Type": content_type} if content_type else {})


@pytest.mark.parametrize(("path", "raw"), [
    ("/v1/memories", rb'{"user_id": "ines", "text": "Ines keeps her spare key at \ud83d the neighbours"}'),
    ("/v1/memories", rb'{"user_id": "ines", "text": "Ines keeps bees", "metadata": {"note": "\udfff"}}'),
    ("/v1/memories", rb'{"user_id": "ines", "messages": [{"role": "user", "content": "hi \ud800"}]}'),
    ("/v1/search", rb'{"user_id": "ines", "query": "\udc00 key"}'),
    ("/v1/search", rb'{"user_id": "ines", "query": "key", "filters": {"\ud800": "x"}}'),
    ("/v1/recall", rb'{"user_id": "ines\ud800", "query": "key"}'),
    ("/v1/events", rb'{"user_id": "ines", "turns": [{"session_id": "s", "turn_id": "1", "speaker": "Ines", '
                   rb'"ts": "2025-02-01T09:00:00Z", "text": "my gate code is \udbff"}]}'),
])
def test_a_lone_surrogate_is_refused_with_a_4xx_that_says_so(server: tuple[Path, httpx.Client], path: str,
                                                             raw: bytes) -> None:
    _, client = server
    answer = send(client, path, raw)
    assert 400 <= answer.status_code < 500, answer.text
    assert "surrogate" in answer.text
    assert client.get("/v1/health").json() == {"status": "ok"}


def test_a_body_that_is_not_json_is_a_400_and_json_without_a_content_type_is_read(
        server: tuple[Path, httpx.Client]) -> None:
    _, client = server
    for raw in (b"user_id=ines&text=hello", b'{"user_id": "ines", "text": ', b"\xff\xfe not json"):
        for content_type in ("application/json", None):
            answer = send(client, "/v1/memories", raw, content_type)
            assert answer.status_code == 400 and "not JSON" in answer.json()["detail"], answer.text
    as_text = send(client, "/v1/memories", b'{"user_id": "ines", "text": "Ines cycles to work"}', "text/plain")
    assert as_text.status_code == 400 and "application/json" in as_text.json()["detail"]
    bare = send(client, "/v1/memories", b'{"user_id": "ines", "text": "Ines cycles to work", "infer": false}', None)
    assert bare.status_code == 200 and bare.json()["results"][0]["memory"] == "Ines cycles to work"
    schema = client.get("/openapi.json").json()
    assert "400" in schema["paths"]["/v1/memories"]["post"]["responses"]


def test_junk_is_refused_naming_what_is_allowed(server: tuple[Path, httpx.Client]) -> None:
    home, client = server
    empty = client.post("/v1/memories", json={"user_id": "ines", "messages": [{"role": "user", "content": " "}]})
    assert empty.status_code == 422
    wizard = client.post("/v1/memories", json={"user_id": "ines", "messages": [{"role": "wizard",
                                                                                "content": "I live in Porto"}]})
    assert wizard.status_code == 422 and all(r in wizard.text for r in ("user", "assistant", "system", "tool"))
    preset = client.post("/v1/recall", json={"user_id": "ines", "query": "where", "preset": "turbo"})
    assert preset.status_code == 422 and all(p in preset.text for p in ("default", "summaries", "bm25", "rrf"))
    assert client.post("/v1/recall", json={"user_id": "ines", "query": "where", "preset": "bm25"}).status_code == 200
    for query in ("", "   "):
        assert client.post("/v1/search", json={"user_id": "ines", "query": query}).status_code == 422
    # the same rules through the Python API (here a client of the same server)
    with Memory(home=home, tenant_id="acme") as m:
        with pytest.raises(BadInputError, match="content is empty"):
            m.add([{"role": "user", "content": ""}], user_id="ines")
        with pytest.raises(BadInputError, match="user, assistant, system, tool"):
            m.add([{"role": "wizard", "content": "I live in Porto"}], user_id="ines")
        with pytest.raises(BadInputError, match="default, summaries, bm25, rrf"):
            m.recall("where", user_id="ines", preset="turbo")
        for query in ("", "   "):
            with pytest.raises(BadInputError, match="query is empty"):
                m.search(query, user_id="ines")
        with pytest.raises(BadInputError, match="surrogate"):
            m.add("Ines keeps her spare key at \udc00 the neighbours", user_id="ines")
        kept = m.add("Ines drinks rooibos", user_id="ines", infer=False, metadata={"channel": "sms"})
        assert m.get(kept.results[0].id).metadata == {"channel": "sms"}  # nothing added to the caller's


def test_lists_come_as_results_and_an_updated_memory_keeps_its_id(server: tuple[Path, httpx.Client]) -> None:
    _, client = server
    added = client.post("/v1/memories", json={"user_id": "tomas", "text": "Tomas's gym locker is number 41",
                                              "infer": False}).json()["results"][0]
    listed = client.get("/v1/memories", params={"user_id": "tomas"}).json()
    found = client.post("/v1/search", json={"user_id": "tomas", "query": "gym locker"}).json()
    assert set(listed) == set(found) == {"results"}  # one shape for lists, mem0's
    assert [m["memory"] for m in listed["results"]] == [m["memory"] for m in found["results"]] == [
        "Tomas's gym locker is number 41"]
    assert set(listed["results"][0]) == set(found["results"][0]) - {"score"}
    changed = client.put(f"/v1/memories/{added['id']}", json={"user_id": "tomas",
                                                              "text": "Tomas's gym locker is number 17"})
    assert changed.status_code == 200
    got = client.get(f"/v1/memories/{added['id']}", params={"user_id": "tomas"}).json()
    assert got["content"] == "Tomas's gym locker is number 17"
    history = client.get(f"/v1/memories/{added['id']}/history", params={"user_id": "tomas"}).json()
    assert [h["memory_id"] for h in history if h["op"] == "insert"] == [added["id"], changed.json()["id"]]
    assert client.delete(f"/v1/memories/{added['id']}", params={"user_id": "tomas"}).status_code == 204
    assert client.get(f"/v1/memories/{changed.json()['id']}", params={"user_id": "tomas"}).status_code == 404
    assert client.get(f"/v1/memories/{added['id']}/history", params={"user_id": "tomas"}).status_code == 404
