"""`profiles` on a store built through the production path, and the profile through the service, the
CLI and the HTTP API: versions, the read-time gate, and rebuilds that drop what is gone."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from pydantic import TypeAdapter

from mnemoflow.api.http import create_app
from mnemoflow.cli import main
from mnemoflow.errors import NotFoundError
from mnemoflow.models import LinkDraft, MemoryDraft
from mnemoflow.service import MemoryService
from mnemoflow.tree_models import Profile
from tests.conftest import plant
from tests.maintenance.conftest import ANA, OTHER_TENANT, OTHER_USER


def test_the_profile_cites_current_memories_and_is_versioned(tree_service: MemoryService) -> None:
    with pytest.raises(NotFoundError, match="maintain profiles"):
        tree_service.profile(ANA)
    report = tree_service.maintain("profiles")
    assert report.counts == {"rebuilt": 3}
    profile = tree_service.profile(ANA)
    assert profile.version == 1 and profile.withheld == 0
    lines = [*profile.static, *profile.dynamic]
    assert any("allergic to peanuts" in line.text for line in profile.static)
    assert any("Siemens" in line.text for line in profile.dynamic)
    current = {m.id: m for m in tree_service.get_all(ANA, limit=1000)}
    assert all(line.memory_ids and set(line.memory_ids) <= current.keys() for line in lines)
    assert tree_service.maintain("profiles").counts == {"unchanged": 3}
    assert tree_service.profile(ANA).version == 1
    assert all(v.ok for v in tree_service.verify())
    adapter = TypeAdapter(Profile)  # what a remote client gets back over HTTP is the same profile
    assert adapter.validate_json(adapter.dump_json(profile)) == profile


def test_a_forgotten_memory_is_withheld_at_once_and_gone_after_the_rebuild(tree_service: MemoryService) -> None:
    tree_service.maintain("profiles")
    line = next(line for line in tree_service.profile(ANA).static if "allergic" in line.text)
    tree_service.delete(ANA, line.memory_ids[0])
    withheld = tree_service.profile(ANA)
    assert withheld.withheld == 1 and line not in withheld.static and withheld.version == 1
    person = tree_service.recall(ANA, "What do you know about Ana?", token_budget=2048)
    assert not any("allergic" in item.text for item in person.items if item.kind == "profile")
    tree_service.maintain("profiles")
    rebuilt = tree_service.profile(ANA)
    assert rebuilt.version == 2 and rebuilt.withheld == 0
    assert all(line.memory_ids[0] not in other.memory_ids for other in [*rebuilt.static, *rebuilt.dynamic])
    assert all(v.ok for v in tree_service.verify())


def test_a_superseded_memory_leaves_the_profile(tree_service: MemoryService) -> None:
    tree_service.maintain("profiles")
    line = next(line for line in tree_service.profile(ANA).static if "train to Munich" in line.text)
    [old] = line.memory_ids
    tree_service.store.write_memory(ANA, MemoryDraft(content="Ana cycles to Munich every morning now", kind="fact",
                                                     salience=0.5), actor="test",
                                    links=(LinkDraft("UPDATES", old, 0.95, "a new way to work"),))
    assert line not in tree_service.profile(ANA).static  # superseded: withheld before any rebuild
    tree_service.maintain("profiles")
    assert all(old not in x.memory_ids for x in tree_service.profile(ANA).static)


def test_tree_rows_edited_behind_the_store_fail_verify(tree_service: MemoryService) -> None:
    tree_service.maintain("cluster")
    tree_service.maintain("profiles")
    plant(tree_service, "UPDATE profile_lines SET text = 'Ana is a spy.' WHERE ordinal = 0 AND section = 'static'")
    plant(tree_service, "UPDATE topics SET label = 'nothing' WHERE true")
    problems = [p for v in tree_service.verify() for p in v.problems]
    assert any(p.startswith("profile_lines row") for p in problems)
    assert any(p.startswith("topics row") for p in problems)


def test_profiles_stay_inside_their_scope(tree_service: MemoryService) -> None:
    tree_service.maintain("profiles")
    mine = {m for line in [*tree_service.profile(ANA).static, *tree_service.profile(ANA).dynamic]
            for m in line.memory_ids}
    for scope in (OTHER_USER, OTHER_TENANT):
        other = tree_service.profile(scope)
        theirs = {m for line in [*other.static, *other.dynamic] for m in line.memory_ids}
        assert not mine & theirs
        assert all("Marigold" in line.text or "Kiel" in line.text or "kayak" in line.text or "Zed" in line.text
                   or "Yul" in line.text for line in [*other.static, *other.dynamic])
        assert not any(item.kind == "profile" and set(c.memory_id for c in item.citations) & mine
                       for item in tree_service.recall(scope, "Tell me about Ana", token_budget=2048).items)


def test_cli_prints_the_profile(tree_service: MemoryService, capsys: pytest.CaptureFixture[str]) -> None:
    home = str(tree_service.settings.home)
    tree_service.maintain("profiles")
    tree_service.close()
    with pytest.raises(SystemExit) as done:
        main(["profile", "--home", home, "--tenant", "acme", "--user", "ana", "--json"])
    assert done.value.code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["version"] == 1 and printed["user_id"] == "ana" and printed["static"]
    with pytest.raises(SystemExit) as done:
        main(["profile", "--home", home, "--tenant", "acme", "--user", "nobody"])
    assert done.value.code == 1 and "maintain profiles" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        main(["profile", "--home", home, "--tenant", "acme", "--user", "bad user"])
    assert done.value.code == 2


def test_http_profile_is_key_scoped(tree_service: MemoryService) -> None:
    tree_service.maintain("profiles")
    _, acme = tree_service.store.create_api_key("acme")
    _, globex = tree_service.store.create_api_key("globex")
    client = TestClient(create_app(tree_service))
    assert client.get("/v1/profile", params={"user_id": "ana"}).status_code == 401
    mine = client.get("/v1/profile", params={"user_id": "ana"}, headers={"Authorization": f"Bearer {acme}"})
    assert mine.status_code == 200 and mine.json()["tenant_id"] == "acme" and mine.json()["static"]
    theirs = client.get("/v1/profile", params={"user_id": "ana"}, headers={"Authorization": f"Bearer {globex}"})
    assert theirs.status_code == 200 and theirs.json()["tenant_id"] == "globex"
    assert not {m for x in theirs.json()["static"] for m in x["memory_ids"]} & {
        m for x in mine.json()["static"] for m in x["memory_ids"]}
    missing = client.get("/v1/profile", params={"user_id": "nobody"}, headers={"Authorization": f"Bearer {acme}"})
    assert missing.status_code == 404
