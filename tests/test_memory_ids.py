"""One id names a memory through its updates (mem0's `get` after `update` gives the new text), every
version keeps its own id in history, and deleting a memory by any of its ids deletes every version: no
interface shows its text afterwards, not even its history."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from mnemoflow import Memory
from mnemoflow.api.http import create_app
from mnemoflow.api.mcp import build_mcp
from mnemoflow.cli import main
from mnemoflow.config import load_settings
from mnemoflow.errors import NotFoundError
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

OWNER = Scope("acme", "priya")
CODES = ("Priya's bike lock code is 3309", "Priya's bike lock code is 7720", "Priya's bike lock code is 1185")


def test_the_first_id_follows_every_update_and_each_version_keeps_its_own(tmp_path: Path) -> None:
    with Memory(home=tmp_path / "home", tenant_id="acme") as m:
        first = m.add(CODES[0], user_id="priya", infer=False).results[0].id
        second = m.update(first, CODES[1])
        assert m.get(first).content == CODES[1] and second.previous_id == first
        third = m.update(first, text=CODES[2])  # the caller still holds the first id
        assert third.previous_id == second.id
        assert m.get(first).content == m.get(second.id).content == m.get(third.id).content == CODES[2]
        assert [x.content for x in m.get_all(user_id="priya")] == [CODES[2]]
        inserted = [(h.memory_id, h.new_memory) for h in m.history(first) if h.op == "insert"]
        assert inserted == [(first, CODES[0]), (second.id, CODES[1]), (third.id, CODES[2])]
        assert m.history(first) == m.history(third.id)  # any version's id: the whole memory's history
        assert m.pin(first).id == third.id and m.get(third.id).pinned  # the verbs act on the current version
        with pytest.raises(NotFoundError):
            m.get(first, user_id="someone-else")


def test_deleting_by_an_old_id_deletes_every_version_then_the_purge_removes_their_text(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "home", retention_days=0)) as service:
        first = service.add(OWNER, CODES[0])[0].id
        later = service.update(OWNER, first, CODES[1]).id
        kept = service.add(OWNER, "Priya parks her bike by the library")[0].id
        assert set(service.delete(OWNER, first).deleted) == {first, later}
        for memory_id in (first, later):
            with pytest.raises(NotFoundError):
                service.get(OWNER, memory_id)
            with pytest.raises(NotFoundError):
                service.history(OWNER, memory_id)
        assert "3309" not in service.recall(OWNER, "bike lock code").context
        assert all(r.ok for r in service.verify())
        assert service.maintain("decay").counts["purged memories"] == 2
        assert service.sql("SELECT count(*) FROM memories WHERE content LIKE '%lock code%'").rows == [[0]]
        assert service.get(OWNER, kept).content == "Priya parks her bike by the library"
        assert all(r.ok for r in service.verify())


def test_a_deleted_memory_has_no_history_on_any_interface(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    with MemoryService(load_settings(home)) as service:
        memory_id = service.add(OWNER, CODES[0])[0].id
        service.update(OWNER, memory_id, CODES[1])
        assert len([h for h in service.history(OWNER, memory_id) if h.event]) == 2  # it has one until deleted
        service.delete(OWNER, memory_id)
        key = service.create_api_key("acme")[1]
        http = TestClient(create_app(service)).get(f"/v1/memories/{memory_id}/history", params={"user_id": "priya"},
                                                   headers={"Authorization": f"Bearer {key}"})
        assert http.status_code == 404 and "no memory" in http.json()["detail"]

        async def over_mcp() -> None:
            async with Client(build_mcp(service, scope=OWNER)) as client:
                answer = await client.call_tool("history", {"memory_id": memory_id})
                assert answer.is_error and "no memory" in answer.content[0].text

        anyio.run(over_mcp)
    with Memory(home=home, tenant_id="acme") as m, pytest.raises(NotFoundError):
        m.history(memory_id)
    with pytest.raises(SystemExit) as cli:
        main(["history", memory_id, "--home", str(home), "--tenant", "acme", "--user", "priya"])
    assert cli.value.code == 1 and "no memory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as helped:
        main(["forget", "--help"])
    assert helped.value.code == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "Deletion means gone" in said and "history keeps" not in said  # what the README says too
