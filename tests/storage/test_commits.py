"""The commit chain verifies; a row or commit changed behind the store's back is detected."""

import pytest

from mnemoflow.config import Settings
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.storage import Scope, open_store
from tests.conftest import raw_connection


@pytest.fixture
def populated(settings: Settings) -> Settings:
    with open_store(settings) as store:
        for text in ("Ana leads the data team", "Ana prefers tea", "The repo moved to GitLab"):
            store.add_memory(Scope("acme", "ana"), draft_memory(text), actor="test")
        store.add_memory(Scope("other", "ana"), draft_memory("Other tenant fact"), actor="test")
        memory_id = store.list_memories(Scope("acme", "ana"))[0].id
        store.delete_memory(Scope("acme", "ana"), memory_id, actor="test")
    return settings


def _tamper(settings: Settings, sql: str) -> None:
    with raw_connection(settings) as con:
        con.execute(sql)


def test_chain_verifies_per_tenant(populated: Settings) -> None:
    with open_store(populated) as store:
        report = store.verify("acme")
        assert report.ok, report.problems
        assert report.commits_checked == 4  # three adds and a delete
        assert report.rows_checked == 3
        assert store.verify("other").commits_checked == 1


def test_changed_row_is_detected(populated: Settings) -> None:
    _tamper(populated, "UPDATE memories SET content = 'Ana prefers coffee' WHERE content = 'Ana prefers tea'")
    with open_store(populated) as store:
        report = store.verify("acme")
    assert not report.ok
    assert any("changed since commit" in p for p in report.problems)
    with open_store(populated) as store:
        assert store.verify("other").ok  # other tenants are untouched


def test_rewritten_commit_is_detected(populated: Settings) -> None:
    _tamper(populated, "UPDATE commits SET actor = 'mallory' WHERE tenant_id = 'acme' AND seq = 2")
    with open_store(populated) as store:
        problems = store.verify("acme").problems
    assert any("does not hash" in p for p in problems)


def test_removed_commit_breaks_the_chain(populated: Settings) -> None:
    _tamper(populated, "DELETE FROM commits WHERE tenant_id = 'acme' AND seq = 2")
    with open_store(populated) as store:
        problems = store.verify("acme").problems
    assert any("names parent" in p for p in problems)
    assert any("does not record it" in p for p in problems)
