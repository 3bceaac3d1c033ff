"""The bundled sample the `demo` command ingests: a team chat and a team handbook."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from mnemoflow.storage.scope import Scope

DEMO_SCOPE = Scope("demo", "priya")
DEMO_QUESTION = "When and where is the Atlas offsite, and what is the budget?"


def sample_paths() -> list[Path]:
    data = Path(str(files("mnemoflow.demo") / "data"))
    return sorted(data.iterdir())
