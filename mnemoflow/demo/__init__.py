"""The bundled sample the `demo` command ingests: a team chat, a handbook, an offsite agenda (PDF),
the venue's web page, a sync script and a recorded standup: one of each input kind."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from mnemoflow.storage.scope import Scope

DEMO_SCOPE = Scope("demo", "priya")
DEMO_QUESTIONS = (
    "When and where is the Atlas offsite, and what is the budget?",
    "How do I get to the offsite venue from the airport, and what happens on the second day?",
)


def sample_paths() -> list[Path]:
    data = Path(str(files("mnemoflow.demo") / "data"))
    return sorted(data.iterdir())
