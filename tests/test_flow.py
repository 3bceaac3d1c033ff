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


@pytest.mark.slow
def test_sync_flow_retries_a_transient_failure_for_real(tmp_path: Path) -> None:
    """An API that answers 503 to every request of the first attempt: Prefect retries the task and
    the second attempt lands the records."""
    import threading
    import time

    import uvicorn
    from fastapi import FastAPI, HTTPException

    from mnemoflow.connectors.rest_api import REQUEST_ATTEMPTS
    from mnemoflow.flows.sync import sync_flow

    calls: list[int] = []
    app = FastAPI()

    @app.get("/notes")
    def notes() -> list[dict[str, str]]:
        calls.append(1)
        if len(calls) <= REQUEST_ATTEMPTS:
            raise HTTPException(status_code=503, detail="warming up")
        return [{"id": "n1", "body": "The Lisbon office opens at eight on weekdays."}]

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources.notes]\nkind = "rest_api"\nbase_url = "http://127.0.0.1:{port}/"\ntenant_id = "acme"\n'
        'user_id = "kim"\nresources = [{name = "notes", path = "notes"}]\n')
    try:
        result = sync_flow(source="notes", home=str(home))
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert len(calls) == REQUEST_ATTEMPTS + 1  # one failed task attempt (dlt's own retries), then success
    assert result["records"] == 1 and result["documents_changed"] == 1
    assert result["embedding"]["embedded"] == 1
