"""`Memory` and `AsyncMemory`: the Python API, with mem0's verbs so that switching takes minutes.

    from mnemoflow import Memory                      # was: from mem0 import Memory
    m = Memory(home="~/.mnemoflow", tenant_id="acme")
    m.add([{"role": "user", "content": "I moved to Lisbon"}], user_id="alex")
    m.search("where does Alex live?", filters={"user_id": "alex"})["results"]
    m.recall("what do we know about Alex?", user_id="alex", token_budget=512)

The tenant is fixed per instance. A call on tenant data names its owner as mem0's do: `user_id`,
`agent_id` or `run_id` (and optionally a `container`), as keywords or, for `search`, `get_all` and
`delete_all`, inside `filters`. `get`, `update`, `delete` and `history` may name only the memory, as
in mem0: the instance holds the whole tenant, so it acts for the memory's owner.

Every verb is one call of one `MemoryService` method; `AsyncMemory` runs the same verbs off the
event loop (written once: it wraps `Memory`).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from mnemoflow.config import load_settings
from mnemoflow.errors import BadInputError
from mnemoflow.models import HistoryEntry, MemoryItem, RecallResult
from mnemoflow.recall.config import RecallFilters
from mnemoflow.remote import connect
from mnemoflow.reports import IngestOutcome
from mnemoflow.results import AddResult, DeleteResult, MemoryList, Message, UpdateResult, as_message
from mnemoflow.storage import Scope
from mnemoflow.tree_models import Profile

OWNER_KEYS = ("user_id", "agent_id", "run_id", "container")


class Memory:
    def __init__(self, home: str | Path | None = None, *, tenant_id: str | None = None, **settings: Any) -> None:
        # the home's running server when there is one (`mnemoflow serve`), else the store in this process
        self._service = connect(load_settings(home, **settings))
        self.tenant_id = tenant_id or self._service.settings.tenant_id

    def _scope(self, filters: dict[str, Any] | None = None, **owner: str | None) -> Scope:
        """The scope a call names, from its keywords and the plain ids in its filters (mem0 v1 put them
        in the keywords, v3 in the filters)."""
        named = dict(owner)
        filters = filters or {}
        plain = [filters, *(part for part in filters.get("AND", []) if isinstance(part, dict))]  # ANDed: they narrow
        for key in OWNER_KEYS:
            for value in {part[key] for part in plain if isinstance(part.get(key), str) and part[key] != "*"}:
                if named.get(key) not in (None, value):
                    raise BadInputError(f"{key} is {named[key]!r} but the filters say {value!r}")
                named[key] = value
        if not any(named.get(k) for k in ("user_id", "agent_id", "run_id")):
            raise BadInputError("name whose memories these are: user_id, agent_id or run_id "
                                "(as a keyword or in filters)")
        return Scope(self.tenant_id, **{k: named.get(k) for k in OWNER_KEYS})

    def _owner_of(self, memory_id: str, owner: dict[str, str | None]) -> Scope:
        if any(owner.values()):
            return self._scope(**owner)
        return self._service.locate(self.tenant_id, memory_id)

    # ------------------------------------------------------------------ mem0's verbs
    def add(
        self, messages: str | list[dict[str, Any]] | list[Message], *, user_id: str | None = None,
        agent_id: str | None = None, run_id: str | None = None, container: str | None = None,
        metadata: dict[str, Any] | None = None, infer: bool = True,
    ) -> AddResult:
        """A statement or a conversation ({"role", "content"} turns, optional "name" and "timestamp"),
        read into memories like an ingested conversation (`infer=False`: each message as written).
        Every memory touched comes back with its event: ADD, UPDATE (a new version; the old stays in
        history) or NONE (already held)."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        if isinstance(messages, list):  # read here, so a server's answer to a bad one is the same as this process's
            messages = [as_message(m, n) for n, m in enumerate(messages, start=1)]
        return self._service.add_messages(scope, messages, metadata=metadata, infer=infer)

    def search(
        self, query: str, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
        container: str | None = None, filters: dict[str, Any] | None = None, limit: int = 10,
        top_k: int | None = None, threshold: float | None = None,
    ) -> MemoryList:
        """Memories best first (`top_k` is mem0's name for `limit`), narrowed by `filters`: metadata,
        time (`created_at`, ...), kind, categories, with eq/ne/gt/gte/lt/lte/in/nin/contains/icontains/*
        and AND/OR/NOT."""
        scope = self._scope(filters, user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.search(scope, query, limit=top_k or limit, filters=filters, threshold=threshold)

    def get_all(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
        container: str | None = None, filters: dict[str, Any] | None = None, limit: int = 100,
        top_k: int | None = None,
    ) -> MemoryList:
        scope = self._scope(filters, user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.get_all(scope, limit=top_k or limit, filters=filters)

    def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, container: str | None = None) -> MemoryItem:
        owner = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "container": container}
        return self._service.get(self._owner_of(memory_id, owner), memory_id)

    def update(
        self, memory_id: str, data: str | None = None, *, text: str | None = None,
        metadata: dict[str, Any] | None = None, user_id: str | None = None, agent_id: str | None = None,
        run_id: str | None = None, container: str | None = None,
    ) -> UpdateResult:
        """A new version that UPDATES the memory (`data` or `text`: the new text); its history keeps the old."""
        if data is not None and text is not None and data != text:
            raise BadInputError("update takes the new text once: data or text")
        owner = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "container": container}
        return self._service.update(self._owner_of(memory_id, owner), memory_id, text if text is not None else data,
                                    metadata=metadata)

    def pin(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, container: str | None = None, pinned: bool = True) -> MemoryItem:
        """Keep a memory whatever its retention (decay never archives it); `pinned=False` undoes it."""
        owner = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "container": container}
        return self._service.pin(self._owner_of(memory_id, owner), memory_id, pinned=pinned)

    def delete(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, container: str | None = None) -> DeleteResult:
        owner = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "container": container}
        return self._service.delete(self._owner_of(memory_id, owner), memory_id)

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                   container: str | None = None, filters: dict[str, Any] | None = None) -> DeleteResult:
        """Every memory of the owner named (a user's: whatever agent or run wrote it); soft, then gone
        for good on the retention policy."""
        scope = self._scope(filters, user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.delete_all(scope)

    def history(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                run_id: str | None = None, container: str | None = None) -> list[HistoryEntry]:
        """The commits that wrote the memory and the versions before it, oldest first (mem0's events
        in `event`, `old_memory`, `new_memory`)."""
        owner = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "container": container}
        return self._service.history(self._owner_of(memory_id, owner), memory_id)

    # ------------------------------------------------------------------ mnemoflow's own
    def recall(
        self, query: str, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
        container: str | None = None, k: int | None = None, token_budget: int | None = None,
        filters: RecallFilters | None = None, preset: str | None = None,
    ) -> RecallResult:
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.recall(scope, query, k=k, token_budget=token_budget, filters=filters, config=preset)

    def ingest(self, *paths: str | Path, user_id: str, container: str | None = None, wait: bool = True,
               ) -> IngestOutcome:
        return self._service.ingest(self._scope(user_id=user_id, container=container), [Path(p) for p in paths],
                                    wait=wait)

    def profile(self, *, user_id: str) -> Profile:
        """The user's static and dynamic profile (built by the `profiles` maintenance job)."""
        return self._service.profile(self._scope(user_id=user_id))

    def close(self) -> None:
        self._service.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


P = ParamSpec("P")
R = TypeVar("R")


def _awaitable(verb: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """`verb` of `Memory` as a coroutine method of `AsyncMemory`: it runs on the instance's one worker
    thread, so calls keep their order and the store sees one at a time, and the event loop never waits."""

    @functools.wraps(verb)
    async def call(self: AsyncMemory, *args: Any, **kwargs: Any) -> R:
        bound = functools.partial(verb, self.sync, *args, **kwargs)  # type: ignore[arg-type]
        return await asyncio.get_running_loop().run_in_executor(self._worker, bound)

    return call  # type: ignore[return-value]


class AsyncMemory:
    """`Memory` for asyncio code (mem0's `AsyncMemory`): the same verbs, awaited."""

    def __init__(self, home: str | Path | None = None, *, tenant_id: str | None = None, **settings: Any) -> None:
        self.sync = Memory(home, tenant_id=tenant_id, **settings)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemoflow-async")

    add = _awaitable(Memory.add)
    search = _awaitable(Memory.search)
    get_all = _awaitable(Memory.get_all)
    get = _awaitable(Memory.get)
    update = _awaitable(Memory.update)
    delete = _awaitable(Memory.delete)
    delete_all = _awaitable(Memory.delete_all)
    pin = _awaitable(Memory.pin)
    profile = _awaitable(Memory.profile)
    history = _awaitable(Memory.history)
    recall = _awaitable(Memory.recall)
    ingest = _awaitable(Memory.ingest)
    _close = _awaitable(Memory.close)

    async def close(self) -> None:
        await self._close()
        self._worker.shutdown(wait=False)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
