"""Moving memories out and in: our export round-trips (same recall, same history), mem0's get_all
output and history come in as versions with their times, bad records are named, nothing half-lands."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from mnemoflow import Memory
from mnemoflow.cli import main
from mnemoflow.config import load_settings
from mnemoflow.errors import BadInputError
from mnemoflow.recall import RecallFilters
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.transfer import read_records

QUERIES = [("alex", "where does Alex live?"), ("alex", "what does Alex drink?"), ("alice", "movies Alice likes"),
           ("alice", "Alice's travel plans")]


def _fill(m: Memory) -> None:
    m.add("Alex moved from Berlin to Porto in March 2026", user_id="alex")
    m.add("Alex now lives in Lisbon, he moved again in October", user_id="alex")
    m.add("Alex drinks black coffee", user_id="alex", infer=False, metadata={"source": "chat"})
    m.add([{"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
           {"role": "assistant", "content": "Noted, sci-fi it is."},
           {"role": "user", "content": "I'm flying to Tokyo on May 3 with my sister Ana."}],
          user_id="alice", agent_id="concierge", metadata={"category": "travel"})
    drink = m.search("coffee", user_id="alex")[0].id
    m.update(drink, text="Alex drinks decaf now")


def _recalled(service: MemoryService) -> list[list[tuple[str, str]]]:
    return [[(i.id, i.text) for i in service.recall(Scope("acme", user), query, token_budget=2000,
                                                     filters=RecallFilters(kinds=["memory"])).items]
            for user, query in QUERIES]


def test_export_then_import_into_an_empty_home_recalls_the_same(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with Memory(home=tmp_path / "a", tenant_id="acme") as m:
        _fill(m)
    with MemoryService(load_settings(tmp_path / "a")) as service:
        before = _recalled(service)
        current = service.search(Scope("acme", "alex"), "where does Alex live?", limit=1)[0].id
        history = [(h.event, h.memory_id, h.old_memory, h.new_memory)
                   for h in service.history(Scope("acme", "alex"), current) if h.event]
    with pytest.raises(SystemExit) as done:
        main(["export", "--home", str(tmp_path / "a"), "--tenant", "acme", "--out", str(tmp_path / "x.jsonl")])
    assert done.value.code == 0 and "exported 6 memories" in capsys.readouterr().err
    lines = [json.loads(line) for line in (tmp_path / "x.jsonl").read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["memories"] == 6
    assert {line["type"] for line in lines} == {"header", "entity", "memory", "link"}
    assert all("vector" not in line for line in lines)
    with pytest.raises(SystemExit) as done:
        main(["import", str(tmp_path / "x.jsonl"), "--home", str(tmp_path / "b")])
    assert done.value.code == 0 and "imported 6 memories" in capsys.readouterr().out

    with MemoryService(load_settings(tmp_path / "b")) as service:
        assert _recalled(service) == before and any(before)
        assert [(h.event, h.memory_id, h.old_memory, h.new_memory)
                for h in service.history(Scope("acme", "alex"), current) if h.event] == history
        exported_again = service.export_memories("acme")
        assert all(report.ok for report in service.verify("acme"))
        again = service.import_memories(read_records((tmp_path / "x.jsonl").read_text()))
        assert (again.imported, again.skipped) == (0, 6)  # an import can be run again
    strip = ("exported_at", "hotness", "last_seen", "first_seen")
    assert [{k: v for k, v in line.items() if k not in strip} for line in exported_again] == \
        [{k: v for k, v in line.items() if k not in strip} for line in lines]


MEM0_ALL = {"results": [
    {"id": "7f2c0b6e-1d1a-4c4e-9a8e-2f3a5d9b1c01", "memory": "Lives in Lisbon", "hash": "x",
     "metadata": {"category": "home"}, "created_at": "2025-10-22T04:40:22.864647-07:00",
     "updated_at": "2025-11-02T09:00:00-07:00", "user_id": "alex"},
    {"id": "0b8e3a1c-55aa-4c1e-8f70-6b1e2d3c4f02", "memory": "Prefers window seats", "hash": "y", "metadata": None,
     "created_at": "2025-10-23T10:00:00Z", "updated_at": None, "user_id": "alex", "agent_id": "travel-agent",
     "run_id": "trip-7"},
    {"id": "9c1d2e3f-0000-4a4a-8b8b-123456789003", "memory": "Escalate refunds over 500 euros", "hash": "z",
     "created_at": "2025-10-24T08:00:00Z", "agent_id": "support-bot"},
    {"id": "bad-1", "memory": "no owner at all", "created_at": "2025-10-24T08:00:00Z"},
]}
MEM0_HISTORY = [
    {"id": "h1", "memory_id": "7f2c0b6e-1d1a-4c4e-9a8e-2f3a5d9b1c01", "old_memory": None,
     "new_memory": "Lives in Berlin", "event": "ADD", "created_at": "2025-10-22T04:40:22.864647-07:00",
     "updated_at": None, "is_deleted": False, "actor_id": None, "role": "user"},
    {"id": "h2", "memory_id": "7f2c0b6e-1d1a-4c4e-9a8e-2f3a5d9b1c01", "old_memory": "Lives in Berlin",
     "new_memory": "Lives in Porto", "event": "UPDATE", "created_at": "2025-10-30T12:00:00-07:00",
     "updated_at": None, "is_deleted": False},
    {"id": "h3", "memory_id": "7f2c0b6e-1d1a-4c4e-9a8e-2f3a5d9b1c01", "old_memory": "Lives in Porto",
     "new_memory": "Lives in Lisbon", "event": "UPDATE", "created_at": "2025-11-02T09:00:00-07:00",
     "updated_at": None, "is_deleted": False},
]


def test_mem0_get_all_and_history_come_in_as_versions(tmp_path: Path) -> None:
    path = tmp_path / "mem0.jsonl"
    path.write_text(json.dumps(MEM0_ALL) + "\n" + "".join(json.dumps(h) + "\n" for h in MEM0_HISTORY))
    with MemoryService(load_settings(tmp_path / "home")) as service:
        report = service.import_memories(read_records(path.read_text()), tenant_id="acme")
        assert (report.format, report.imported, report.links) == ("mem0", 5, 2)
        assert report.rejected == ["record 4: a scope names a user_id, an agent_id or a run_id (a tenant or a "
                                   "container alone owns no rows)"]
        alex = Scope("acme", "alex")
        lisbon = service.get(alex, "7f2c0b6e-1d1a-4c4e-9a8e-2f3a5d9b1c01")
        assert lisbon.is_latest and lisbon.created_at == datetime(2025, 11, 2, 16, 0)  # its version's own time
        assert lisbon.metadata == {"category": "home"}
        assert [m.content for m in service.get_all(alex)] == ["Lives in Lisbon", "Prefers window seats"]  # newest first
        assert [(h.event, h.old_memory, h.new_memory) for h in service.history(alex, lisbon.id) if h.event] == [
            ("ADD", None, "Lives in Berlin"), ("UPDATE", "Lives in Berlin", "Lives in Porto"),
            ("UPDATE", "Lives in Porto", "Lives in Lisbon")]
        assert [m.content for m in service.search(alex, "where does Alex live?", limit=1)] == ["Lives in Lisbon"]
        seat = service.get(Scope("acme", "alex", "travel-agent", "trip-7"), "0b8e3a1c-55aa-4c1e-8f70-6b1e2d3c4f02")
        assert seat.observed_at == datetime(2025, 10, 23, 10, 0)
        bot = Scope("acme", agent_id="support-bot")
        assert [m.content for m in service.get_all(bot)] == ["Escalate refunds over 500 euros"]
        assert [m.content for m in service.get_all(Scope("acme", "alex", agent_id="support-bot"))] == []
        assert all(r.ok for r in service.verify("acme"))


@pytest.mark.parametrize(("text", "reason"), [
    ("", "empty"), ("{not json", "line 1 is not JSON"), ("42", "expected JSON objects"),
    ('{"type": "header", "format": "other", "version": 1}', "format 'other'"),
])
def test_unreadable_files_are_refused_whole(tmp_path: Path, text: str, reason: str) -> None:
    with MemoryService(load_settings(tmp_path / "home")) as service, pytest.raises(BadInputError, match=reason):
        service.import_memories(read_records(text))
        assert service.store.counts(Scope("acme", "alex"))["memories"] == 0


def test_cli_import_names_what_it_could_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([{"id": "m1", "memory": "Kai keeps bees", "user_id": "kai"},
                                {"id": "m2", "memory": "Kai has no time", "user_id": "kai", "created_at": "soon"},
                                {"what": "else"}]))
    with pytest.raises(SystemExit) as done:
        main(["import", str(path), "--home", str(tmp_path / "home"), "--tenant", "acme"])
    captured = capsys.readouterr()
    assert done.value.code == 1 and "imported 1 memories (mem0)" in captured.out
    assert "record 2: created_at" in captured.err and "record 3: neither a mem0 memory" in captured.err
    with pytest.raises(SystemExit) as done:
        main(["import", str(tmp_path / "missing.json"), "--home", str(tmp_path / "home")])
    assert done.value.code == 2
