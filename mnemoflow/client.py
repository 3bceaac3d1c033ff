"""`Memory`: the Python API, with mem0's verbs so switching takes minutes.

    from mnemoflow import Memory
    m = Memory(home="~/.mnemoflow", tenant_id="acme")
    m.add("Alex prefers morning meetings", user_id="alex")
    m.search("when does Alex like to meet?", user_id="alex")
    m.recall("what do we know about Alex?", user_id="alex", token_budget=512)

Every call that touches tenant data names its user; the tenant is fixed per instance.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from mnemoflow.config import load_settings
from mnemoflow.models import HistoryEntry, MemoryItem, MemoryKind, Profile, RecallResult
from mnemoflow.recall import RecallFilters
from mnemoflow.remote import connect
from mnemoflow.reports import IngestOutcome
from mnemoflow.storage import Scope


class Memory:
    def __init__(self, home: str | Path | None = None, *, tenant_id: str | None = None, **settings: Any) -> None:
        # the home's running server when there is one (`mnemoflow serve`), else the store in this process
        self._service = connect(load_settings(home, **settings))
        self.tenant_id = tenant_id or self._service.settings.tenant_id

    def _scope(self, user_id: str) -> Scope:
        return Scope(self.tenant_id, user_id)

    def add(
        self, text: str, *, user_id: str, kind: MemoryKind | None = None, metadata: dict[str, Any] | None = None,
        observed_at: datetime | None = None, expires_at: datetime | None = None, derived_from: list[str] | None = None,
    ) -> dict[str, Any]:
        """Store one memory; an exact repeat returns the existing one with `created: False`.
        `derived_from`: chunk or document ids it came from (it goes when they go)."""
        memory, created = self._service.add(
            self._scope(user_id), text, kind=kind, metadata=metadata, observed_at=observed_at, expires_at=expires_at,
            derived_from=derived_from,
        )
        return {"memory": memory, "created": created}

    def search(self, query: str, *, user_id: str, limit: int = 10) -> list[MemoryItem]:
        return self._service.search(self._scope(user_id), query, limit=limit)

    def get_all(self, *, user_id: str, limit: int = 100) -> list[MemoryItem]:
        return self._service.get_all(self._scope(user_id), limit=limit)

    def get(self, memory_id: str, *, user_id: str) -> MemoryItem:
        return self._service.get(self._scope(user_id), memory_id)

    def delete(self, memory_id: str, *, user_id: str) -> None:
        self._service.delete(self._scope(user_id), memory_id)

    def pin(self, memory_id: str, *, user_id: str, pinned: bool = True) -> MemoryItem:
        """Keep a memory whatever its retention (decay never archives it); `pinned=False` undoes it."""
        return self._service.pin(self._scope(user_id), memory_id, pinned=pinned)

    def history(self, memory_id: str, *, user_id: str) -> list[HistoryEntry]:
        return self._service.history(self._scope(user_id), memory_id)

    def recall(
        self, query: str, *, user_id: str, k: int | None = None, token_budget: int | None = None,
        filters: RecallFilters | None = None, preset: str | None = None,
    ) -> RecallResult:
        return self._service.recall(
            self._scope(user_id), query, k=k, token_budget=token_budget, filters=filters, config=preset
        )

    def ingest(self, *paths: str | Path, user_id: str, wait: bool = True) -> IngestOutcome:
        return self._service.ingest(self._scope(user_id), [Path(p) for p in paths], wait=wait)

    def profile(self, *, user_id: str) -> Profile:
        """The user's static and dynamic profile (built by the `profiles` maintenance job)."""
        return self._service.profile(self._scope(user_id))

    def close(self) -> None:
        self._service.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
