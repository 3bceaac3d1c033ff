"""Real backends in temp dirs: every test gets its own home (DuckDB file, LanceDB, dlt state)."""

from __future__ import annotations

import os

# Prefect logs "Stopping temporary server" at interpreter exit, after pytest closed
# its streams; only warnings matter in tests.
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

from collections.abc import Iterator
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from mnemoflow.config import Settings, configure_runtime, load_settings
from mnemoflow.service import MemoryService

configure_runtime()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing a test does may touch ~/.mnemoflow or a config file outside its tmp dir."""
    monkeypatch.setenv("MNEMOFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MNEMOFLOW_CONFIG", raising=False)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(home=tmp_path / "home")


@pytest.fixture
def service(settings: Settings) -> Iterator[MemoryService]:
    with MemoryService(settings) as svc:
        yield svc


def plant(service: MemoryService, sql: str, params: list | None = None) -> None:
    """Write behind the store's back, as someone with the file and a SQL shell could: the service lets
    go of the store, a raw DuckDB connection runs `sql`, the service reopens on its next call."""
    import duckdb

    service.close()
    with duckdb.connect(str(service.settings.duckdb_path)) as con:
        con.execute(sql, params or [])


def write_transcript(path: Path, turns: list[dict]) -> Path:
    import json

    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return path


def turn(session: str, turn_id: str, speaker: str, ts: str, text: str, **extra: object) -> dict:
    return {"session_id": session, "turn_id": turn_id, "speaker": speaker, "ts": ts, "text": text, **extra}
