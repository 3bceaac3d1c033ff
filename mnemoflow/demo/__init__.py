"""The bundled sample the `demo` command ingests: a team chat, a handbook, an offsite agenda (PDF),
the venue's web page, a sync script and a recorded standup: one of each input kind."""

from __future__ import annotations

import shutil
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


def sample_in(home: Path) -> list[Path]:
    """The sample copied into `home` (unchanged files are left as they are): its documents are the same ones
    whichever checkout or installation runs the demo, so a second run changes nothing instead of adding the
    sample again under another path."""
    target = home / "demo-sample"
    target.mkdir(parents=True, exist_ok=True)
    copies = []
    for path in sample_paths():
        copy = target / path.name
        if not copy.exists() or copy.read_bytes() != path.read_bytes():
            shutil.copyfile(path, copy)
        copies.append(copy)
    return copies
