"""Value changes: does recall give the new value above anything that states only the old one?

Each case is one person's short conversation in which a value changes (a language, a drink, an
operating system, a number), then a question. The conversation goes through the production path
(`MemoryService.post_events`: turns, chunks, memories), the question through the default recall, and
the case passes when the first packed item that names the new value comes before the first that names
the old value without the new one (memories and turns alike: an old turn said word for word is as
stale as an old memory). Cases live in `eval/value_changes/*.json` (a list of objects: id, speaker,
query, new and old as regular expressions, turns with ts and text).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, Field

from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

RECALL_BUDGET = 512


class _Turn(BaseModel):
    ts: str
    text: str


class ValueChange(BaseModel):
    id: str
    speaker: str
    query: str
    new: str  # a regular expression, case-insensitive
    old: str
    turns: list[_Turn] = Field(min_length=2)


class ValueChangeOutcome(BaseModel):
    id: str
    passed: bool
    new_rank: int | None  # 1-based position of the first item naming the new value
    old_rank: int | None  # ... and of the first naming the old value alone
    items: list[str]  # what recall packed, in order


def load_value_changes(directory: Path | str) -> list[ValueChange]:
    """Every case of every `*.json` file under `directory`, in file and list order."""
    return [ValueChange.model_validate(c) for path in sorted(Path(directory).glob("*.json"))
            for c in json.loads(path.read_text())]


def run_value_change(service: MemoryService, case: ValueChange, tenant: str = "value-changes") -> ValueChangeOutcome:
    """One case through ingest and recall, in a scope of its own."""
    scope = Scope(tenant, case.id)
    rows = [{"session_id": f"{case.id}-{n}", "turn_id": f"t{n}", "speaker": case.speaker, "role": "user",
             "ts": turn.ts, "text": turn.text} for n, turn in enumerate(case.turns, start=1)]
    service.post_events(scope, rows)
    result = service.recall(scope, case.query, token_budget=RECALL_BUDGET)
    texts = [item.text for item in result.items]
    new = re.compile(case.new, re.I)
    old = re.compile(case.old, re.I)
    new_rank = next((n for n, text in enumerate(texts, start=1) if new.search(text)), None)
    old_rank = next((n for n, text in enumerate(texts, start=1) if old.search(text) and not new.search(text)), None)
    passed = new_rank is not None and (old_rank is None or new_rank < old_rank)
    return ValueChangeOutcome(id=case.id, passed=passed, new_rank=new_rank, old_rank=old_rank, items=texts)
