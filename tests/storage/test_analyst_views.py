"""The analyst views answer from a real store, and docs/tables.md documents every table and view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage.scope import Scope

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tables.md"
ALEX, SAM, KIM = Scope("acme", "alex"), Scope("acme", "sam"), Scope("globex", "kim")


def test_views_follow_the_memories_through_update_and_deletion(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "home")) as service:
        old, _ = service.add(ALEX, "Alex's team standup is at 9:30")
        new = service.update(ALEX, old.id, "Alex's team standup is at 10:00").memory
        gone, _ = service.add(ALEX, "Alex keeps a spare key under the mat")
        service.delete(ALEX, gone.id)
        service.add(SAM, "Sam drinks green tea")
        service.add(KIM, "Kim works from Porto")
        (broken := tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7 not really")
        service.ingest(ALEX, [broken])

        def rows(sql: str) -> list[tuple]:
            return service.sql(sql).rows

        current = rows("SELECT tenant_id, user_id, content FROM current_memories ORDER BY 1, 2")
        assert current == [["acme", "alex", "Alex's team standup is at 10:00"], ["acme", "sam", "Sam drinks green tea"],
                           ["globex", "kim", "Kim works from Porto"]]
        history = dict((r[0], r[1:]) for r in rows(
            "SELECT memory_id, state, superseded_by FROM memory_history WHERE user_id = 'alex'"))
        assert history == {old.id: ["superseded", new.id], new.id: ["current", None], gone.id: ["deleted", None]}
        usage = {r[0]: r[1:] for r in rows(
            "SELECT tenant_id, current_memories, users, ingest_errors, commits > 0 FROM tenant_usage")}
        assert usage == {"acme": [2, 2, 1, True], "globex": [1, 1, 0, True]}
        errors = rows("SELECT tenant_id, errors FROM ingest_error_counts")
        assert errors == [["acme", 1]]


def test_every_table_and_view_is_documented(tmp_path: Path) -> None:
    with MemoryService(load_settings(tmp_path / "home")) as service:
        names = {r[0] for r in service.sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema IN ('main', 'public') "
            "AND table_catalog NOT IN ('system', 'memory')").rows}
    documented = set(re.findall(r"^### (\w+)$", DOCS.read_text(), flags=re.M))
    assert names - documented == set(), "tables or views missing from docs/tables.md"
    assert documented - names == set(), "docs/tables.md names tables that do not exist"


@pytest.mark.embedded_only("DuckDB's FTS index lives in the home's file; a PostgreSQL store's BM25 is LanceDB's")
def test_an_analysts_bm25_sees_what_small_writes_added(tmp_path: Path) -> None:
    """A direct add leaves the DuckDB FTS index to its next reader: `sql` rebuilds it first."""
    with MemoryService(load_settings(tmp_path / "home")) as service:
        bees = service.add_messages(ALEX, "Alex keeps bees on the roof of the depot", infer=False).results[0].id
        honey = service.add_messages(ALEX, [{"role": "user", "content": "The honey harvest is in August"}]).results[0].id
        found = service.sql("SELECT memory_id FROM (SELECT memory_id, fts_main_memories.match_bm25(memory_id, "
                            "'honey bees') AS score FROM memories) WHERE score IS NOT NULL").rows
        assert {r[0] for r in found} == {bees, honey}
