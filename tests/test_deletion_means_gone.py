"""Deletion means gone (issue 16): after `forget`, a file deleted at its source, a tenant deletion and
an expiry, no read path returns what went (on both BM25 engines), and the hard deletion that follows
leaves no trace in LanceDB, either BM25 index or any DuckDB table, the commits recording it aside.
The read paths and trace checks live in `tests/deletion_proof.py`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mnemoflow.api.http import create_app
from mnemoflow.config import load_settings
from mnemoflow.memory.relate.entities import entity_id
from mnemoflow.models import EntityRef, LinkDraft
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.timeutil import utcnow
from tests.conftest import turn, write_transcript
from tests.deletion_proof import assert_no_trace, assert_not_returned, returned_by_every_read_path

WORD = "zorblax"  # in nothing but what gets deleted (its Porter stem is itself)
SCOPE = Scope("acme", "lena")
NEIGHBOUR = Scope("acme", "ruth")
OTHER_TENANT = Scope("globex", "lena")
ENGINES = ["lancedb", "duckdb"]
LENA = EntityRef(entity_id("person", "lena"), "Lena", "person")


def _service(tmp_path: Path, engine: str) -> MemoryService:
    return MemoryService(load_settings(tmp_path / "home", bm25_engine=engine, retention_days=0))


def _hashes(service: MemoryService, ids: set[str]) -> set[str]:
    quoted = ", ".join(f"'{i}'" for i in ids)
    return {r[0] for r in service.store.sql(f"SELECT content_hash FROM memories WHERE memory_id IN ({quoted}) UNION "
                                            f"SELECT content_hash FROM chunks WHERE chunk_id IN ({quoted})")[1]}


def _bystanders(service: MemoryService) -> dict[Scope, str]:
    """What other users and tenants hold, which no deletion may touch."""
    held = {}
    for scope, text in ((NEIGHBOUR, "Ruth cycles to the office along the river every morning"),
                        (OTHER_TENANT, "Lena from globex keeps bees on the roof of the warehouse")):
        held[scope] = service.add(scope, text)[0].id
    return held


def _bystanders_intact(service: MemoryService, held: dict[Scope, str]) -> None:
    for scope, memory_id in held.items():
        assert service.get(scope, memory_id).deleted_at is None
        assert memory_id in {i.id for i in service.recall(scope, service.get(scope, memory_id).content).items}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_forgotten_memory_is_gone_from_every_path_then_from_every_store(tmp_path: Path, engine: str) -> None:
    with _service(tmp_path, engine) as service:
        held = _bystanders(service)
        store = service.store
        old, _ = store.write_memory(SCOPE, _draft("Lena lives in Hamburg near the old harbour"), actor="test")
        new, _ = store.write_memory(SCOPE, _draft(f"Lena moved to Munich next to the {WORD} brewery"), actor="test",
                                    links=(LinkDraft("UPDATES", old.id, 0.95, "moved"),))
        extends, _ = store.write_memory(SCOPE, _draft("Lena's flat in Munich has a sunny balcony"), actor="test",
                                        links=(LinkDraft("EXTENDS", new.id, 0.9, "her new flat"),))
        service.drain()
        queries = [WORD, "Where does Lena live?", "Lena flat balcony Munich"]
        # before: every kind of path reaches it (a test that could not fail would prove nothing)
        before = returned_by_every_read_path(service, SCOPE, "Where does Lena live in Hamburg?")
        assert new.id in before["recall"]  # the current version standing in for the Hamburg one
        assert new.id in before["graph and versions"]
        client = TestClient(create_app(service))
        key = {"Authorization": f"Bearer {store.create_api_key('acme')[1]}"}
        assert client.get(f"/v1/memories/{new.id}", params={"user_id": "lena"}, headers=key).status_code == 200

        service.delete(SCOPE, new.id)
        assert_not_returned(service, SCOPE, {new.id}, queries)
        assert client.get(f"/v1/memories/{new.id}", params={"user_id": "lena"}, headers=key).status_code == 404
        recalled = client.post("/v1/recall", json={"user_id": "lena", "query": WORD}, headers=key).json()
        assert new.id not in {i["id"] for i in recalled["items"]}
        listed = client.get("/v1/memories", params={"user_id": "lena"}, headers=key).json()["results"]
        assert new.id not in {m["id"] for m in listed} and extends.id in {m["id"] for m in listed}

        hashes = _hashes(service, {new.id, old.id})
        report = service.maintain("decay")  # the memory went with its past version (Hamburg)
        assert report.counts["purged memories"] == 2 and report.counts["purged memory_links"] == 2
        assert_no_trace(service, WORD, {new.id, old.id}, hashes)
        assert extends.id in {i.id for i in service.recall(SCOPE, "Lena balcony").items}
        _bystanders_intact(service, held)


def _draft(text: str):
    draft = draft_memory(text)
    return type(draft)(**{**draft.__dict__, "entities": (LENA,)})


@pytest.mark.parametrize("engine", ENGINES)
def test_a_file_deleted_at_its_source_is_gone_with_what_was_drawn_from_it(tmp_path: Path, engine: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "brewery.md").write_text(f"# Brewery\n\nThe {WORD} brewery opens at noon on Saturdays.\n")
    (docs / "parking.md").write_text("# Parking\n\nVisitor parking is behind building C.\n")
    settings = load_settings(tmp_path / "home", bm25_engine=engine, retention_days=0, sources={"notes": {
        "kind": "filesystem", "tenant_id": "acme", "user_id": "lena", "location": str(docs), "globs": ["*.md"]}})
    with MemoryService(settings) as service:
        held = _bystanders(service)
        service.sync("notes")
        hit = next(i for i in service.recall(SCOPE, "when does the brewery open", token_budget=4000).items
                   if WORD in i.text)
        drawn, _ = service.add(SCOPE, f"Lena meets friends at the {WORD} brewery on Saturdays",
                               derived_from=[hit.citations[0].document_id])
        chunk_ids = {r[0] for r in service.store.sql(
            "SELECT chunk_id FROM chunks WHERE document_id = ?", [hit.citations[0].document_id])[1]}
        gone = chunk_ids | {drawn.id}

        (docs / "brewery.md").unlink()
        report = service.sync("notes")
        assert (report.documents_deleted, report.memories_deleted) == (1, 1)
        assert_not_returned(service, SCOPE, gone, [WORD, "when does the brewery open on Saturdays"])

        hashes = _hashes(service, gone)
        purged = service.maintain("decay").counts
        assert purged["purged source_documents"] == 1 and purged["purged raw"] >= 1  # its landing rows (and staging)
        assert_no_trace(service, WORD, gone | {hit.citations[0].document_id}, hashes)
        assert "building C" in service.recall(SCOPE, "where do visitors park", k=1).items[0].text
        _bystanders_intact(service, held)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_deleted_tenant_is_gone_at_once_everywhere(tmp_path: Path, engine: str) -> None:
    chat = write_transcript(tmp_path / "chat.jsonl", [
        turn("s1", "1", "Lena", "2025-01-06T09:00:00Z", f"I started brewing {WORD} beer in my garage."),
        turn("s1", "2", "Lena", "2025-01-06T09:01:00Z", "My sister Ines helps me bottle it on Sundays."),
    ])
    (tmp_path / "recipe.md").write_text(f"# Recipe\n\nThe {WORD} beer needs three weeks in the bottle.\n")
    with _service(tmp_path, engine) as service:
        held = {OTHER_TENANT: service.add(OTHER_TENANT, "Lena from globex keeps bees on the warehouse roof")[0].id}
        service.ingest(SCOPE, [chat, tmp_path / "recipe.md"])
        service.add(NEIGHBOUR, f"Ruth tasted the {WORD} beer at the summer party")
        ids = {r[0] for r in service.store.sql(
            "SELECT memory_id FROM memories WHERE tenant_id = 'acme' UNION "
            "SELECT chunk_id FROM chunks WHERE tenant_id = 'acme' UNION "
            "SELECT document_id FROM source_documents WHERE tenant_id = 'acme'")[1]}
        assert len(ids) >= 5 and service.recall(SCOPE, f"{WORD} beer").items
        hashes = _hashes(service, ids)
        client = TestClient(create_app(service))
        acme = {"Authorization": f"Bearer {service.store.create_api_key('acme')[1]}"}
        globex = {"Authorization": f"Bearer {service.store.create_api_key('globex')[1]}"}

        deleted = client.delete("/v1/tenant", headers=acme)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["keys_revoked"] == 1 and deleted.json()["purged"]["memories"] >= 2
        assert client.post("/v1/recall", json={"user_id": "lena", "query": WORD}, headers=acme).status_code == 401
        for scope in (SCOPE, NEIGHBOUR):
            assert_not_returned(service, scope, ids, [WORD, "who helps Lena bottle the beer"])
            assert all(not found for found in returned_by_every_read_path(service, scope, f"{WORD} beer").values())
        assert_no_trace(service, WORD, ids, hashes)
        assert client.post("/v1/recall", json={"user_id": "lena", "query": "bees"}, headers=globex).json()["items"]
        _bystanders_intact(service, held)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_expired_memory_leaves_default_recall_then_the_store(tmp_path: Path, engine: str) -> None:
    with _service(tmp_path, engine) as service:
        held = _bystanders(service)
        expired, _ = service.add(SCOPE, f"The {WORD} door code is 4711 until the audit ends",
                                 expires_at=utcnow() - timedelta(minutes=5))
        assert_not_returned(service, SCOPE, {expired.id}, [WORD, "what is the door code"], deleted=False)
        hashes = _hashes(service, {expired.id})
        counts = service.maintain("decay").counts
        assert counts["expired"] == 1 and counts["purged memories"] == 1  # retention 0: expired then purged
        assert_not_returned(service, SCOPE, {expired.id}, [WORD])
        assert_no_trace(service, WORD, {expired.id}, hashes)
        _bystanders_intact(service, held)
