"""The Python API speaks mem0's verbs over the same service."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemoflow import Memory
from mnemoflow.errors import NotFoundError
from tests.serving import served


@pytest.fixture(params=["in-process", "through a server"])
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """The same calls must give the same results in both modes."""
    home = tmp_path / "home"
    if request.param == "in-process":
        yield home
        return
    with served(home):
        yield home


def test_mem0_verbs(tmp_path: Path, home: Path) -> None:
    with Memory(home=home, tenant_id="acme") as m:
        first = m.add("Alex prefers morning meetings", user_id="alex")
        assert first["created"] and first["memory"].kind == "preference"
        assert not m.add("alex prefers morning meetings", user_id="alex")["created"]
        m.add("Alex's manager is Priya", user_id="alex")
        memory_id = first["memory"].id

        found = m.search("when does Alex like to meet?", user_id="alex", limit=1)
        assert found[0].id == memory_id and found[0].score is not None
        assert {x.content for x in m.get_all(user_id="alex")} == {"Alex prefers morning meetings",
                                                                   "Alex's manager is Priya"}
        assert m.get(memory_id, user_id="alex").content == "Alex prefers morning meetings"
        with pytest.raises(NotFoundError):
            m.get(memory_id, user_id="sam")

        notes = tmp_path / "notes.md"
        notes.write_text("# Team\n\nStandup is at 9:30 in room Atlas.\n")
        assert m.ingest(notes, user_id="alex").report.chunks_added == 1
        context = m.recall("where is standup?", user_id="alex", token_budget=64)
        assert "Atlas" in context.context and context.tokens <= 64

        m.delete(memory_id, user_id="alex")
        with pytest.raises(NotFoundError):  # deletion means gone: no history of its text either
            m.history(memory_id, user_id="alex")
        assert memory_id not in {x.id for x in m.get_all(user_id="alex")}
