"""A deleted secret leaves the home: after `delete` and a purge with retention 0, no file, table, commit
or entity id holds a passport number or a PIN. Entity ids are digests (the name lives in a row the purge
removes), codes and numbers are not entities, and a store made when ids spelled names is migrated, its
commit chain rewritten and still verified."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mnemoflow import Memory
from mnemoflow.config import load_settings
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.memory.relate.entities import entity_id, slug, typed_entities
from mnemoflow.models import ENTITY_TYPES, THIS_MEMORY, EntityRef, RelationDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope, graph
from mnemoflow.transfer import import_batch
from tests.conftest import plant, turn, write_transcript

PASSPORT, PIN = "K7741902", "4417"
OWNER = Scope("acme", "dana")


def traces(home: Path, *secrets: str) -> list[str]:
    """Every file under `home` holding one of `secrets` (any case, not inside a longer run of letters or
    digits: a digest or uuid may hold four digits by chance)."""
    found = []
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for secret in secrets:
            if re.search(rb"(?<![0-9A-Za-z])" + re.escape(secret.encode()) + rb"(?![0-9A-Za-z])", data, re.I):
                found.append(f"{path.relative_to(home)}: {secret}")
    return found


def commits_text(service: MemoryService) -> str:
    return "\n".join(r[0] for r in service.sql("SELECT CAST(diff_json AS VARCHAR) FROM commits").rows)


def test_codes_are_not_entities_and_no_id_spells_a_name() -> None:
    content = "Dana's passport number is K7741902 and her PIN is 4417"
    found = typed_entities(content, ["Dana", "K7741902", "PIN", "4417"], speakers=["Dana"])
    assert [(e.name, e.type) for e in found] == [("Dana", "person"), ("PIN", "concept")]
    assert not any(name.lower() in e.entity_id for e in found for name in ("dana", "pin"))
    assert typed_entities("Sam moved the service from EC2 to S3", ["Sam", "EC2", "S3"])[1].type == "tool"


def test_a_deleted_passport_number_and_pin_leave_no_trace_in_the_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    chats = tmp_path / "chats"
    chats.mkdir()
    write_transcript(chats / "dana.jsonl", [
        turn("travel", "1", "Dana", "2025-03-01T10:00:00Z", f"my new passport number is {PASSPORT}, PIN {PIN}"),
        turn("travel", "2", "Dana", "2025-03-01T10:02:00Z", "I fly to Oslo with Maren on Friday")])
    with Memory(home=home, tenant_id="acme") as m:
        said = m.add(f"my passport number is {PASSPORT} and my PIN is {PIN}", user_id="dana")
        kept = m.add("Dana's neighbour Ruth waters the plants", user_id="dana").results[0].id
        m.ingest(chats, user_id="dana")
        names = {e.name: e.type for e in m._service.store.entities(OWNER, limit=100)}
        assert PASSPORT not in names and PIN not in names and names.get("PIN") != "person"
        secret_ids = [e.id for e in said.results] + [
            x.id for x in m.get_all(user_id="dana") if PASSPORT in x.content or PIN in x.content]
        for memory_id in dict.fromkeys(secret_ids):
            m.delete(memory_id, user_id="dana")
        [conversation] = m._service.sql("SELECT document_id FROM source_documents").rows[0]
        m.delete(conversation, user_id="dana")
        assert traces(home, PASSPORT)  # deleted, not yet purged: the rows still hold it
    decay = subprocess.run([sys.executable, "-m", "mnemoflow.cli", "maintain", "decay", "--home", str(home)],
                           env={**os.environ, "MNEMOFLOW_RETENTION_DAYS": "0"}, capture_output=True, text=True,
                           timeout=600)
    assert decay.returncode == 0, decay.stderr
    assert traces(home, PASSPORT, PIN) == []  # DuckDB file, LanceDB files, dlt state, all of it
    with MemoryService(load_settings(home)) as service:
        assert PASSPORT.lower() not in commits_text(service).lower()
        assert all(r.ok for r in service.verify())
        assert service.get(OWNER, kept).content == "Dana's neighbour Ruth waters the plants"
        assert "Ruth" in {e.name for e in service.store.entities(OWNER)}


OLD_ID = re.compile(rf"^entity:({'|'.join(ENTITY_TYPES)}):[a-z0-9]+(?:-[a-z0-9]+)*$")


def _old(type_: str, name: str) -> EntityRef:
    """An entity as stores named them before ids were digests."""
    return EntityRef(f"entity:{type_}:{slug(name)}", name, type_)  # type: ignore[arg-type]


def _written_the_old_way(service: MemoryService, text: str, *refs: EntityRef) -> str:
    draft = draft_memory(text)
    draft = type(draft)(**{**draft.__dict__, "entities": refs,
                           "relations": tuple(RelationDraft(THIS_MEMORY, "mentions", r.entity_id) for r in refs)})
    return service.store.write_memory(OWNER, draft, actor="test")[0].id


def test_a_store_whose_ids_spelled_names_is_migrated_and_its_chain_still_verifies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    with MemoryService(load_settings(home, retention_days=0)) as service:
        with monkeypatch.context() as old_code:  # what the store wrote before: entity:<type>:<slug>
            old_code.setattr(graph, "_ENTITY_ID", OLD_ID)
            secret = _written_the_old_way(service, f"Dana's passport number is {PASSPORT}", _old("person", "Dana"),
                                          _old("concept", PASSPORT))
            pin = _written_the_old_way(service, f"Dana's PIN is {PIN}", _old("person", "Dana"), _old("person", "PIN"))
            work = _written_the_old_way(service, "Dana works at Stripe", _old("person", "Dana"),
                                        _old("organization", "Stripe"))
        service.delete(OWNER, secret)
        service.delete(OWNER, pin)
        service.maintain("decay")
        assert "entity:concept:k7741902" in commits_text(service)  # the defect: purged, yet in the chain
        assert all(r.ok for r in service.verify())
    plant(service, "DELETE FROM schema_migrations WHERE name = '0014_entity_id_digests'")

    with MemoryService(load_settings(home)) as service:  # opening applies the migration
        chain = commits_text(service)
        assert "k7741902" not in chain.lower() and "entity:person:pin" not in chain and "stripe" not in chain
        assert service.sql("SELECT count(*) FROM commits WHERE message LIKE 'entity ids become digests%'").rows == [
            [1]]
        assert all(r.ok for r in service.verify())
        held = dict(service.sql("SELECT name, entity_id FROM entities").rows)
        assert held == {"Dana": entity_id("person", "Dana"), "Stripe": entity_id("organization", "Stripe")}
        assert {tuple(r) for r in service.sql("SELECT memory_id, entity_id FROM memory_entities").rows} == {
            (work, held["Dana"]), (work, held["Stripe"])}
        assert {r[0] for r in service.sql("SELECT object FROM relations").rows} == set(held.values())
        [[mentions]] = service.sql("SELECT mention_count FROM entities WHERE name = 'Dana'").rows
        service.add_messages(OWNER, "Dana moved to Leeds in May")  # a new write names Dana by the same id
        assert service.sql("SELECT entity_id, mention_count FROM entities WHERE name = 'Dana'").rows == [
            [held["Dana"], mentions + 1]]
        assert all(r.ok for r in service.verify())
    assert traces(home, PASSPORT) == []  # the migration rewrote the file too


def test_an_export_made_when_ids_spelled_names_imports_with_digest_ids() -> None:
    lines = [{"type": "entity", "entity_id": "entity:person:dana", "name": "Dana", "entity_type": "person"},
             {"type": "memory", "id": "mem_old1", "user_id": "dana", "content": "Dana works at Stripe",
              "kind": "fact", "salience": 0.4, "created_at": "2025-01-01T00:00:00", "updated_at": "2025-01-01T00:00:00",
              "valid_from": "2025-01-01T00:00:00", "entities": ["entity:person:dana", "entity:organization:stripe"],
              "relations": [{"subject": "entity:person:dana", "predicate": "belongs_to",
                             "object": "entity:organization:stripe", "confidence": 0.85,
                             "created_at": "2025-01-01T00:00:00"}]}]
    imported = import_batch([{"type": "header", "format": "mnemoflow-memories", "version": 1}, *lines], "acme", "acme")
    assert {e.entity_id: e.name for e in imported.entities} == {
        entity_id("person", "Dana"): "Dana", entity_id("organization", "Stripe"): "Stripe"}
    [memory] = imported.memories
    assert memory.entities == (entity_id("person", "Dana"), entity_id("organization", "Stripe"))
    relation = memory.relations[0]
    assert (relation.subject, relation.object) == (entity_id("person", "Dana"), entity_id("organization", "Stripe"))
