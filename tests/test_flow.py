"""The Prefect `ingest` flow runs for real (temporary local server) over the same functions."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from mnemoflow.errors import EmbeddingUnavailableError, TerminalError
from mnemoflow.flows.retry import transient_only
from tests.conftest import turn, write_transcript


def _failed_with(exc: Exception) -> SimpleNamespace:
    return SimpleNamespace(result=lambda raise_on_failure=True: exc)


def test_only_transient_errors_are_retried() -> None:
    assert transient_only(None, None, _failed_with(EmbeddingUnavailableError("down")))
    assert not transient_only(None, None, _failed_with(TerminalError("bad input")))
    assert not transient_only(None, None, _failed_with(ValueError("bug")))


@pytest.mark.slow
def test_ingest_flow_runs_for_real(tmp_path: Path) -> None:
    from mnemoflow.flows.ingest import ingest_flow

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    write_transcript(inbox / "chat.jsonl", [
        turn("s", "1", "Kim", "2024-06-01T09:00:00Z", "The office moves to Ghent in August."),
        "not a turn",
    ])
    (inbox / "notes.md").write_text("# Notes\n\nParking is behind the station.\n")
    result = ingest_flow(paths=[str(inbox)], tenant_id="acme", user_id="kim", home=str(tmp_path / "home"))
    assert result["turns"]["turns_added"] == 1
    assert result["documents"]["documents_changed"] == 1
    assert result["errors"] == ["line 2: a turn must be a JSON object"]
    assert result["embedding"]["embedded"] == 2
    assert result["counts"]["pending_embeddings"] == 0
