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
from datetime import datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from mnemoflow.config import load_settings
from mnemoflow.errors import BadInputError
from mnemoflow.graph_models import (
    ConflictDecision, ConflictList, EntityCard, EntityEvolution, EntityGraph, EntityList, EntityMemories,
)
from mnemoflow.models import HistoryEntry, MemoryItem, RecallResult
from mnemoflow.recall.config import RecallFilters
from mnemoflow.remote import connect
from mnemoflow.reports import IngestOutcome
from mnemoflow.results import AddResult, DeleteResult, MemoryList, Message, UpdateResult, as_message, said_at
from mnemoflow.rules.model import Evaluation, Feedback, Rating, Rule, RuleSpec, RuleState, ToolSelection
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
        metadata: dict[str, Any] | None = None, infer: bool = True, timestamp: datetime | str | None = None,
    ) -> AddResult:
        """A statement or a conversation ({"role", "content"} turns, optional "name" and "timestamp"),
        read into memories like an ingested conversation (`infer=False`: each message as written);
        `timestamp` (ISO 8601) is when the turns without one of their own were said, default now.
        Every memory touched comes back with its event: ADD, UPDATE (a new version; the old stays in
        history) or NONE (already held)."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        if isinstance(messages, list):  # read here, so a server's answer to a bad one is the same as this process's
            messages = [as_message(m, n) for n, m in enumerate(messages, start=1)]
        return self._service.add_messages(scope, messages, metadata=metadata, infer=infer, timestamp=said_at(timestamp))

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

    # ------------------------------------------------------------------ the entity graph
    def entities(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
        container: str | None = None, types: list[str] | None = None, q: str | None = None,
        since: datetime | None = None, until: datetime | None = None, order: str = "mentions", limit: int = 100,
    ) -> EntityList:
        """Entities the owner's memories name (of `types`, named like `q`, said in [since, until)), with
        the owner's own mention counts, hotness and first and last time said."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.entities(scope, types=types, q=q, since=since, until=until, order=order, limit=limit)

    def entity(self, entity_id: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, container: str | None = None) -> EntityCard:
        """An entity's card: neighbours by relation and by shared memories, recent mentions with
        citations, key relations. NotFoundError when none of the owner's memories name it."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.entity(scope, entity_id)

    def entity_memories(self, entity_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                        run_id: str | None = None, container: str | None = None, include_history: bool = False,
                        limit: int = 100) -> EntityMemories:
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.entity_memories(scope, entity_id, include_history=include_history, limit=limit)

    def entity_graph(
        self, entity_id: str | None = None, *, user_id: str | None = None, agent_id: str | None = None,
        run_id: str | None = None, container: str | None = None, depth: int = 1, max_nodes: int | None = None,
        max_edges: int | None = None, types: list[str] | None = None, since: datetime | None = None,
        until: datetime | None = None,
    ) -> EntityGraph:
        """Cytoscape.js elements (`graph.elements`): `depth` hops around the entity, or without one the
        owner's most mentioned entities; bounded by the caps, `truncated` when one cut it."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.entity_graph(scope, entity_id, depth=depth, max_nodes=max_nodes, max_edges=max_edges,
                                          types=types, since=since, until=until)

    def entity_evolution(self, entity_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                         run_id: str | None = None, container: str | None = None, limit: int = 100) -> EntityEvolution:
        """The facts about the entity in supersedes order, each with its time and what replaced it."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.entity_evolution(scope, entity_id, limit=limit)

    def conflicts(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                  container: str | None = None, limit: int = 100) -> ConflictList:
        """Current memories linked CONFLICTS_WITH or MAY_UPDATE that wait for a decision."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.conflicts(scope, limit=limit)

    def resolve_conflict(self, link_id: str, keep: str | None = None, *, user_id: str | None = None,
                         agent_id: str | None = None, run_id: str | None = None,
                         container: str | None = None) -> ConflictDecision:
        """Keep one memory of a conflict (it UPDATES the other) or, with `keep` None, both."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.resolve_conflict(scope, link_id, keep)

    # ------------------------------------------------------------------ procedural rules
    def add_rule(
        self, *, then: dict[str, Any], if_: dict[str, Any] | None = None, exceptions: list[dict[str, Any]] | None = None,
        state: RuleState = "draft", shared: bool = False, user_id: str | None = None, agent_id: str | None = None,
        run_id: str | None = None, container: str | None = None,
    ) -> Rule:
        """A rule: `if_` conditions (all required), a `then` patch ({"output.format": "json"}, {"tool.deny":
        "shell,browser"}), `exceptions` (condition sets that keep it from applying); draft, shadow or active."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.add_rule(scope, RuleSpec.of(if_ or {}, then, exceptions), state=state, shared=shared)

    def rules(self, *, state: RuleState | None = None, user_id: str | None = None, agent_id: str | None = None,
              run_id: str | None = None, container: str | None = None, limit: int = 100) -> list[Rule]:
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.list_rules(scope, state=state, limit=limit)

    def set_rule_state(self, rule_id: str, state: RuleState, *, user_id: str | None = None,
                       agent_id: str | None = None, run_id: str | None = None, container: str | None = None) -> Rule:
        """Move a rule: DRAFT -> SHADOW -> ACTIVE, back, or to RETIRED (a commit in the tenant's chain)."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.set_rule_state(scope, rule_id, state, actor="python")

    def evaluate(self, context: dict[str, Any], *, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None, container: str | None = None) -> Evaluation:
        """What the rules make of `context`: `applied` (ACTIVE rules), `shadow`, conflicts, matched rules."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.evaluate_rules(scope, context)

    def select_tools(self, context: dict[str, Any], candidates: list[str], *, strict: bool = True,
                     user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                     container: str | None = None) -> ToolSelection:
        """Which of `candidates` the rules leave for `context`, in order; rate it with `tool_feedback`."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.select_tools(scope, context, candidates, strict=strict)

    def tool_feedback(self, selection_id: str, rating: Rating, *, user_id: str | None = None,
                      agent_id: str | None = None, run_id: str | None = None, container: str | None = None) -> Feedback:
        """Rate a selection positive or negative (once); every rule that matched it counts the rating."""
        scope = self._scope(user_id=user_id, agent_id=agent_id, run_id=run_id, container=container)
        return self._service.rate_selection(scope, selection_id, rating)

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
    entities = _awaitable(Memory.entities)
    entity = _awaitable(Memory.entity)
    entity_memories = _awaitable(Memory.entity_memories)
    entity_graph = _awaitable(Memory.entity_graph)
    entity_evolution = _awaitable(Memory.entity_evolution)
    conflicts = _awaitable(Memory.conflicts)
    resolve_conflict = _awaitable(Memory.resolve_conflict)
    add_rule = _awaitable(Memory.add_rule)
    rules = _awaitable(Memory.rules)
    set_rule_state = _awaitable(Memory.set_rule_state)
    evaluate = _awaitable(Memory.evaluate)
    select_tools = _awaitable(Memory.select_tools)
    tool_feedback = _awaitable(Memory.tool_feedback)
    _close = _awaitable(Memory.close)

    async def close(self) -> None:
        await self._close()
        self._worker.shutdown(wait=False)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
