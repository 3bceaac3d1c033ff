"""The check job: a clean store passes every expectation; an orphan link, a vector without its row and
a broken commit chain, each planted behind the store's back, are caught and named; results land in
quality_runs; `mnemoflow maintain check` exits 1 and the Prefect flow run fails."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pyarrow as pa
import pytest

from mnemoflow.config import load_settings
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.conftest import plant, turn, write_transcript
from tests.test_cli import run

SCOPE = Scope("acme", "alex")


@pytest.fixture
def filled(tmp_path: Path) -> MemoryService:
    """A store with documents, chunks, turns, memories with links, entities and relations."""
    chat = write_transcript(tmp_path / "chat.jsonl", [
        turn("s1", "1", "Maya", "2025-01-06T09:00:00Z", "I moved to Porto last month."),
        turn("s1", "2", "Maya", "2025-01-06T09:01:00Z", "I prefer running along the river in Porto."),
    ])
    (tmp_path / "notes.md").write_text("# Notes\n\nParking is behind the station.\n")
    with MemoryService(load_settings(tmp_path / "home")) as service:
        service.ingest(SCOPE, [chat, tmp_path / "notes.md"])
        memory, _ = service.add(Scope("globex", "kim"), "Kim keeps the spare keys in the blue box")
        service.delete(Scope("globex", "kim"), memory.id)
        yield service


def _failed(service: MemoryService) -> dict[tuple[str, str], list[str]]:
    _, rows = service.store.sql("SELECT suite, expectation, failing_ids FROM quality_runs WHERE NOT success "
                                "AND run_id = (SELECT run_id FROM quality_runs ORDER BY run_at DESC LIMIT 1)")
    return {(suite, expectation): ids for suite, expectation, ids in rows}


def test_a_clean_store_passes_and_every_expectation_is_recorded(filled: MemoryService) -> None:
    counts = filled.store.sql("SELECT count(*) FROM memory_links")[1][0][0], \
        filled.store.sql("SELECT count(*) FROM entities")[1][0][0]
    assert all(counts)  # the suites have rows to look at
    report = filled.maintain("check")
    assert report.ok, report.problems
    _, rows = filled.store.sql("SELECT suite, count(*), bool_and(success) FROM quality_runs GROUP BY suite")
    suites = {suite: (n, ok) for suite, n, ok in rows}
    assert set(suites) >= {"memories", "chunks", "memory_links", "entities", "memory_vectors", "structure"}
    assert all(ok for _, ok in suites.values()) and report.counts["expectations"] == sum(n for n, _ in suites.values())
    assert filled.maintain("check", tenant_id="acme").ok


def test_an_orphan_link_is_caught_and_named(filled: MemoryService) -> None:
    [(memory_id,)] = filled.store.sql("SELECT memory_id FROM memories WHERE tenant_id = 'acme' LIMIT 1")[1]
    plant(filled, "INSERT INTO memory_links (tenant_id, src, dst, type, confidence, decided_by, created_at, "
          "commit_id, link_id) SELECT tenant_id, 'mem_gone', ?, 'EXTENDS', 0.9, 'auto', now(), commit_id, "
          "'lnk_orphan' FROM memories WHERE memory_id = ?", [memory_id, memory_id])
    report = filled.maintain("check")
    assert not report.ok
    assert _failed(filled)[("memory_links", "src_found on every row")] == ["acme:lnk_orphan"]
    assert any("memory_links" in p and "acme:lnk_orphan" in p for p in report.problems)


def test_a_vector_without_its_row_is_caught(filled: MemoryService) -> None:
    filled.close()
    table = lancedb.connect(str(filled.settings.lancedb_path)).open_table("chunk_vectors")
    stray = table.search().limit(1).to_arrow()
    stray = stray.set_column(stray.schema.get_field_index("chunk_id"), "chunk_id", pa.array(["chk_stray"]))
    table.add(stray.drop_columns(["_distance"]) if "_distance" in stray.column_names else stray)
    report = filled.maintain("check")
    assert _failed(filled)[("chunk_vectors", "row_found on every row")] == ["acme:chk_stray"]
    assert any("chk_stray" in p for p in report.problems)


def test_a_broken_chain_is_caught(filled: MemoryService) -> None:
    plant(filled, "UPDATE memories SET content = 'Maya moved to Lisbon' WHERE tenant_id = 'acme' "
          "AND memory_id = (SELECT min(memory_id) FROM memories WHERE tenant_id = 'acme')")
    report = filled.maintain("check")
    [problems] = [ids for (suite, name), ids in _failed(filled).items() if suite == "structure" and "acme" in name]
    assert "changed since commit" in problems[0]
    assert any("commit chain of acme" in p for p in report.problems)


def test_dead_jobs_fail_the_check(filled: MemoryService) -> None:
    plant(filled, "UPDATE outbox SET status = 'dead', last_error = 'boom' WHERE job_key = (SELECT min(job_key) "
          "FROM outbox)")
    assert any("no dead outbox jobs" in p for p in filled.maintain("check").problems)


def test_the_command_exits_1_naming_the_rows(capsys: pytest.CaptureFixture[str], filled: MemoryService) -> None:
    home = str(filled.settings.home)
    filled.close()
    assert run(capsys, "maintain", "check", "--home", home)[0] == 0
    plant(filled, "DELETE FROM entities WHERE entity_id = (SELECT min(entity_id) FROM entities)")
    code, out, err = run(capsys, "maintain", "check", "--home", home)
    assert code == 1 and "problem: memory_entities: entity_found on every row" in err


@pytest.mark.slow
def test_the_flow_run_fails_on_a_failed_expectation(filled: MemoryService) -> None:
    from prefect.states import State

    from mnemoflow.flows.maintenance import maintain_flow

    home = str(filled.settings.home)
    filled.close()
    assert maintain_flow(job="check", home=home)["counts"]["failed"] == 0
    plant(filled, "DELETE FROM entities WHERE entity_id = (SELECT min(entity_id) FROM entities)")
    state = maintain_flow(job="check", home=home, return_state=True)
    assert isinstance(state, State) and state.is_failed()
    assert "entity_found" in str(state.message) or "entity_found" in repr(state.result(raise_on_failure=False))
