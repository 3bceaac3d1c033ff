"""The service layer every interface (Python API, CLI, HTTP, MCP, flows) calls; none holds logic of its own.

Opens the store, the embedder and the generation engine lazily, once, and ties the plain stage
functions together the way a user expects: ingest returns once its embeddings are done (unless
told not to wait), add returns the stored memory, recall packs a context.

Light to import: the engines (DuckDB, LanceDB, the model) load on first use, so a command that
sends its work to a running server (`mnemoflow.remote`) never loads them. One instance may serve
many threads (a server's requests, its outbox worker): opening is locked, and one drain of the
outbox runs at a time.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemoflow.config import Settings, configure_runtime
from mnemoflow.errors import BadInputError, NotFoundError
from mnemoflow.filters import parse_filters
from mnemoflow.models import (
    DOCUMENT_PREFIX, PROVENANCE_KEYS, Citation, HistoryEntry, MemoryItem, MemoryKind, RecallResult, ReviewItem,
    TenantDeletion,
)
from mnemoflow.progress import Progress, Step
from mnemoflow.recall.config import RecallConfig, RecallFilters, preset
from mnemoflow.recall.debug import DebugRecall
from mnemoflow.reports import Drained, IngestOutcome, SyncReport
from mnemoflow.results import AddResult, DeleteResult, MemoryList, Message, UpdateResult
from mnemoflow.graph_service import GraphMethods
from mnemoflow.operator_service import OperatorMethods
from mnemoflow.rules.service import RuleMethods
from mnemoflow.storage.scope import Scope, check_id, require_user_level
from mnemoflow.transfer import ImportReport, import_batch
from mnemoflow.tree_models import Profile, Summary, Topic
from mnemoflow.unicode_text import refuse_lone_surrogates

if TYPE_CHECKING:
    from mnemoflow.embedding import Embedder
    from mnemoflow.memory.generate.candidates import GenerationEngine
    from mnemoflow.protect.ratelimit import RateLimiter
    from mnemoflow.storage import Store


class MemoryService(RuleMethods, GraphMethods, OperatorMethods):
    def __init__(self, settings: Settings) -> None:
        configure_runtime()
        self.settings = settings
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._engine: GenerationEngine | None = None
        self._limiter: RateLimiter | None = None
        self._opening = threading.RLock()
        self._draining = threading.Lock()

    @property
    def store(self) -> Store:
        with self._opening:
            if self._store is None:
                from mnemoflow.storage import open_store

                self._store = open_store(self.settings)
            return self._store

    @property
    def embedder(self) -> Embedder:
        with self._opening:
            if self._embedder is None:
                from mnemoflow.embedding import create_embedder

                self._embedder = create_embedder(self.settings)
            return self._embedder

    @property
    def engine(self) -> GenerationEngine:
        """The memory generation engine the settings name (the rule-based one offline)."""
        with self._opening:
            if self._engine is None:
                from mnemoflow.memory.generate.engines import generation_engine

                self._engine = generation_engine(self.settings)
            return self._engine

    @property
    def rate_limiter(self) -> RateLimiter:
        """The API keys' request budgets (`protect.ratelimit`), shared by the HTTP API and MCP."""
        with self._opening:
            if self._limiter is None:
                from mnemoflow.protect.ratelimit import create_rate_limiter

                self._limiter = create_rate_limiter(self.settings, self.store if self.settings.store_url else None)
            return self._limiter

    def _redact(self, tenant_id: str, value: Any) -> Any:
        """`value` (text, or JSON-like) with personal data replaced by placeholders when the tenant redacts."""
        from mnemoflow.protect.pii import redactor_for

        found = redactor_for(self.settings, tenant_id)
        return value if found is None else found.value(value)

    def close(self) -> None:
        """Let go of the engine and the store; the next call opens them again."""
        with self._opening:
            if self._engine is not None:
                self._engine.close()
                self._engine = None
            if self._store is not None:
                self._store.close()
                self._store = None

    def __enter__(self) -> MemoryService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writes
    def ingest(
        self, scope: Scope, paths: list[Path], *, wait: bool = True, progress: Progress | None = None,
        step: Step | None = None,
    ) -> IngestOutcome:
        """Files and directories for one user; returns once their embeddings are done unless told not to wait."""
        from mnemoflow.ingest.sequence import ingest_paths

        return ingest_paths(self, scope, paths, wait=wait, progress=progress, step=step)

    def sync(self, name: str, *, wait: bool = True, step: Step | None = None) -> SyncReport:
        """Sync one configured source; embeds what it wrote unless told not to wait."""
        from mnemoflow.ingest.sequence import sync

        return sync(self, name, wait=wait, step=step)

    def ingest_text(self, scope: Scope, text: str, *, title: str | None = None, wait: bool = True) -> IngestOutcome:
        """A note or document given as text (markdown or plain): a source recall can cite."""
        from mnemoflow.ingest.sequence import ingest_text

        _texts(text=text, title=title)
        text, title = self._redact(scope.tenant_id, [text, title])
        return ingest_text(self, scope, text, title=title, wait=wait)

    def post_events(self, scope: Scope, turns: list[dict[str, Any]], *, wait: bool = True) -> IngestOutcome:
        """Agent events (turns) posted to the API: landed and processed like transcript files."""
        from mnemoflow.ingest.sequence import ingest_events

        _texts(turns=turns)
        turns = [{**t, **self._redact(scope.tenant_id, {k: t[k] for k in ("speaker", "text", "metadata") if k in t})}
                 if isinstance(t, dict) else t for t in turns]  # the words; ids and times stay as sent
        return ingest_events(self, scope, turns, wait=wait)

    def add(
        self, scope: Scope, text: str, *, kind: MemoryKind | None = None, metadata: dict[str, Any] | None = None,
        observed_at: datetime | None = None, expires_at: datetime | None = None,
        derived_from: list[str] | None = None, wait: bool = True,
    ) -> tuple[MemoryItem, bool]:
        """Store one memory; `derived_from` names the chunks or documents it came from, so it is
        retired with them when they are gone at the source."""
        from mnemoflow.memory.generate.direct import draft_memory

        _texts(text=text, metadata=metadata, derived_from=derived_from)
        text, metadata = self._redact(scope.tenant_id, [text, metadata])
        draft = draft_memory(text, kind=kind, observed_at=observed_at, expires_at=expires_at, metadata=metadata,
                             derived_from=derived_from)
        memory, created = self.store.add_memory(scope, draft, actor="api")
        if created and wait:
            self.drain(lazy=True)
            memory = self.store.get_memory(scope, memory.id) or memory
        return memory, created

    def add_messages(
        self, scope: Scope, messages: str | list[Message], *, metadata: dict[str, Any] | None = None,
        infer: bool = True, timestamp: datetime | None = None, wait: bool = True,
    ) -> AddResult:
        """mem0's `add`: a statement or a conversation, read into memories the way an ingested
        conversation is (generation, then relationship classification), or with `infer=False` each
        message kept as written. `timestamp` is when the turns without one of their own were said
        (default now): history told later keeps its order and its relative dates. Returns every
        memory touched with its event (ADD, UPDATE, NONE)."""
        from mnemoflow.memory.generate.messages import add_result, remember, touched, waiting_for_vectors

        _texts(messages=messages, metadata=metadata)
        if isinstance(messages, list):  # Message turns (through a server) or dicts (in process)
            messages = [m.model_copy(update=self._redact(scope.tenant_id, {"content": m.content, "name": m.name}))
                        if isinstance(m, Message) else self._redact(scope.tenant_id, m) for m in messages]
        messages, metadata = self._redact(scope.tenant_id, [messages, metadata])
        events = remember(self.store, self.embedder, self.engine, scope, messages, metadata=metadata, infer=infer,
                          said_at=timestamp, embed=wait)
        found = touched(self.store, scope, events)
        if wait and any(e.event != "NONE" for e in events):
            # searchable now: BM25 and vectors read what the indexes have not folded in (a lazy refresh);
            # only what waits for its vector (a derived memory, an embedder that was down) needs the worker
            if waiting_for_vectors(events, found):
                self.drain(lazy=True)
                found = touched(self.store, scope, events)
            else:
                self.store.refresh_search_indexes(lazy=True)
        return add_result(events, found)

    def update(
        self, scope: Scope, memory_id: str, text: str | None = None, *, metadata: dict[str, Any] | None = None,
        wait: bool = True,
    ) -> UpdateResult:
        """A new version of a memory that UPDATES its current one (the old stays in history); the
        same text again replaces only the metadata. Without `metadata`, the new version keeps the
        old one's (less what described where the old text came from)."""
        from mnemoflow.memory.generate.direct import draft_memory

        if text is None and metadata is None:
            raise BadInputError("update needs the new text, new metadata, or both")
        _texts(memory_id=memory_id, text=text, metadata=metadata)
        text, metadata = self._redact(scope.tenant_id, [text, metadata])
        current = self.get(scope, memory_id)
        kept = {k: v for k, v in current.metadata.items() if k not in PROVENANCE_KEYS}
        draft = draft_memory(text if text is not None else current.content,
                             metadata=metadata if metadata is not None else kept)
        done = self.store.update_memory(scope, current.id, draft, actor="api")
        if done is None:
            raise NotFoundError(f"no current memory {memory_id} that {scope} may update")
        new, replaced = done
        changed = new.id != replaced.id
        if changed and wait:
            self.drain(lazy=True)
            new = self.store.get_memory(scope, new.id) or new
        return UpdateResult(message="Memory updated successfully!" if changed else "Memory already current",
                            event="UPDATE" if changed else "NONE", id=new.id, previous_id=replaced.id, memory=new)

    def export_memories(self, tenant_id: str, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """The lines of an export (`mnemoflow.transfer`): the tenant's memories, or one user's, with every
        version, their links, entities, relations, categories and citations; no vectors."""
        return self.store.export_memories(tenant_id, user_id)

    def import_memories(
        self, records: list[dict[str, Any]], *, tenant_id: str | None = None, wait: bool = True,
    ) -> ImportReport:
        """Memories from an export of ours or from mem0 (`get_all` output and its history), with their
        ids and times, into `tenant_id` (default: the export's own, or the settings' for mem0's);
        embedded again with this store's model. What was already imported is skipped."""
        imported = import_batch(records, tenant_id, self.settings.tenant_id)
        imported.memories = [replace(m, **self._redact(m.scope.tenant_id, {
            "content": m.content, "metadata": m.metadata, "temporal_text": m.temporal_text})) for m in imported.memories]
        written, skipped, links, refused = self.store.import_memories(imported, actor="import")
        if written and wait:
            self.drain()
        return ImportReport(format=imported.format, imported=written, skipped=skipped, links=links,
                            rejected=[*imported.rejected, *refused])

    def drain(self, progress: Progress | None = None, *, lazy: bool = False) -> Drained:
        """Run the outbox until it is empty (memory generation, then embeddings), then refresh the indexes
        (`lazy`, after a small write: only once writes have piled up; searches see them meanwhile).
        One drain at a time: a caller that finds one running waits for it, then drains what is left."""
        from mnemoflow.ingest.sequence import drain

        with self._draining:
            return drain(self, progress, lazy=lazy)

    def drain_all(self, progress: Progress | None = None) -> Drained:
        """`drain`, then, while other processes hold leases on pending jobs (a shared store's workers, one
        of them perhaps dead), drain again as their jobs finish or are taken over: returns when the outbox
        holds nothing pending that anyone is working on (what `mnemoflow worker` waits for)."""
        import time

        report = self.drain(progress)
        deadline = time.monotonic() + self.settings.outbox_lease_s
        while self.store.leased_elsewhere() and time.monotonic() < deadline:
            time.sleep(self.settings.worker_heartbeat_s)
            report = report.plus(self.drain(progress))
        return report

    def reembed(self, progress: Progress | None = None) -> tuple[int, Drained]:
        """Rebuild every vector with the configured model (after changing it); returns rows queued."""
        queued = self.store.reset_vectors_for_model()
        return queued, self.drain(progress)

    def delete(self, scope: Scope, memory_id: str) -> DeleteResult:
        """Delete a memory: every version of it, whichever version's id names it. Or, given a document id
        (`doc_...`), a document the scope ingested: its attachments, chunks and vectors, and the memories
        drawn only from it, as a file gone at its source is retired. From then on no read path returns
        it (get and history answer not found); `maintain decay` removes it for good after the retention
        period."""
        if memory_id.startswith(DOCUMENT_PREFIX):
            family = self.store.document_family(scope, memory_id)
            if not family or not self.store.delete_documents(scope, family, actor="api").documents:
                raise NotFoundError(f"no document {memory_id} for {scope}")
            return DeleteResult(message="Document deleted successfully!", deleted=family)
        versions = self.store.memory_versions(scope, memory_id)
        gone = self.store.delete_memories(scope, versions, actor="api") if versions else []
        if not gone:
            raise NotFoundError(f"no memory {memory_id} for {scope}")
        return DeleteResult(message="Memory deleted successfully!", deleted=gone)

    def delete_all(self, scope: Scope) -> DeleteResult:
        """Soft-delete every memory the scope owns (a user's: whatever agent or run wrote it), past
        versions included, in one commit; the retention policy removes deleted rows for good."""
        gone = self.store.delete_memories(scope, None, actor="api")
        return DeleteResult(message=f"{len(gone)} memories deleted", deleted=gone)

    def pin(self, scope: Scope, memory_id: str, pinned: bool = True) -> MemoryItem:
        """Keep one of the user's memories whatever its retention: decay never archives a pinned
        memory, and pinning an archived one brings it back. `pinned=False` lets decay judge it again."""
        memory = self.store.set_memory_flags(scope, self.get(scope, memory_id).id, actor="api", pinned=pinned)
        if memory is None:
            raise NotFoundError(f"no memory {memory_id} for {scope}")
        return memory

    def share(self, scope: Scope, memory_id: str, shared: bool = True) -> MemoryItem:
        """Make one of the user's memories visible to every user of the tenant (or the user's alone again)."""
        memory = self.store.set_memory_flags(scope, self.get(scope, memory_id).id, actor="api", shared=shared)
        if memory is None:
            raise NotFoundError(f"no memory {memory_id} for {scope}")
        return memory

    def delete_tenant(self, tenant_id: str, *, actor: str = "api") -> TenantDeletion:
        """Delete a tenant: soft deletion first (its keys revoked, everything marked deleted, so nothing
        of it is returned from then on), then at once the hard purge from DuckDB, LanceDB and both
        BM25 indexes; a purge that stops half-way is finished by the next `decay` run."""
        check_id("tenant_id", tenant_id)
        if not self.store.tenant_known(tenant_id):
            raise NotFoundError(f"no tenant {tenant_id} in this store")
        deleted_at, revoked = self.store.delete_tenant(tenant_id, actor=actor)
        purge = self.store.purge_tenant(tenant_id, actor=actor)
        self.store.settle_purges()
        return TenantDeletion(tenant_id=tenant_id, deleted_at=deleted_at, keys_revoked=revoked, purged=purge.counts)

    def replay(self, job_keys: list[str] | None = None, *, dead: bool = False) -> list[str]:
        """Queue outbox jobs again with their attempts reset: these keys, or with `dead` every dead
        letter. NotFoundError names keys the outbox does not hold (nothing is replayed then)."""
        keys = list(job_keys or [])
        if dead:
            keys += self.store.dead_job_keys()
        if not keys:
            return []
        held = set(self.store.known_job_keys(keys))
        if missing := [k for k in keys if k not in held]:
            raise NotFoundError(f"no outbox job {', '.join(missing[:5])}")
        return self.store.replay_jobs(keys)

    def decide_review(
        self, scope: Scope, review_id: str, accept: bool, *, link_type: str | None = None, actor: str = "api",
    ) -> ReviewItem:
        """A person's decision on a queued relationship: accept (optionally as another link type) or reject."""
        return self.store.decide_review(scope, review_id, accept, actor=actor, link_type=link_type)

    # ------------------------------------------------------------------ reads
    def recall(
        self, scope: Scope, query: str, *, k: int | None = None, token_budget: int | None = None,
        filters: RecallFilters | None = None, config: RecallConfig | str | None = None,
    ) -> RecallResult:
        from mnemoflow.recall.engine import recall

        _texts(query=query)
        _asked(query)
        chosen = config if isinstance(config, RecallConfig) else preset(config or self.settings.recall_preset)
        query = self._redact(scope.tenant_id, query)  # what was stored redacted is found by its placeholder
        result = recall(
            self.store, _EmbedderWhenUsed(self), scope, query,  # type: ignore[arg-type]
            config=chosen, k=k or self.settings.recall_k,
            token_budget=token_budget or self.settings.recall_token_budget, filters=filters,
        )
        if self.settings.recall_track_access:  # what recall returns counts as used: decay keeps it longer
            self.store.record_accesses(scope, [item.id for item in result.items if item.kind == "memory"])
        return result

    def debug_recall(self, scope: Scope, query: str, *, k: int = 10, vectors: bool = False) -> DebugRecall:
        """Recall's top items with internal scores (and raw vectors, if asked), bounded by debug_max_items.
        Operators only: the APIs give it to admin keys alone."""
        from mnemoflow.recall.debug import debug_recall

        if k < 1:
            raise BadInputError(f"k must be at least 1; got {k}")
        return debug_recall(self, scope, query, k=k, vectors=vectors)

    def search(
        self, scope: Scope, query: str, *, limit: int = 10, filters: dict[str, Any] | None = None,
        threshold: float | None = None,
    ) -> MemoryList:
        """Memories only, best first, each with its fused score (mem0's `search`). `filters` narrow
        them by metadata, time, kind or category (`mnemoflow.filters`); `threshold` keeps those at
        least that similar to the query (cosine similarity of the two embeddings, in [0, 1])."""
        if limit < 1:
            raise BadInputError(f"limit must be at least 1; got {limit}")
        _texts(query=query, filters=filters)
        _asked(query)
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise BadInputError(f"threshold is a similarity in [0, 1]; got {threshold}")
        tree = parse_filters(filters)
        only = None if tree is None else self.store.matching_memory_ids(scope, tree)
        if only == []:
            return MemoryList(results=[])
        result = self.recall(scope, query, k=limit, token_budget=1_000_000,
                             filters=RecallFilters(kinds=["memory"], memory_ids=only))
        items = [i for i in result.items if threshold is None or i.scores.get("vector", -1.0) >= threshold]
        found = self.store.fetch_memories(scope, [item.id for item in items])
        return MemoryList(results=[found[i.id].model_copy(update={"score": i.score}) for i in items if i.id in found])

    def get(self, scope: Scope, memory_id: str) -> MemoryItem:
        """A memory by the id of any of its versions, as it is now: the newest version, which an update
        wrote (as mem0's get after update gives the new text; `history` shows the versions, each with its
        own id). Expired and archived ones too; a deleted one is gone."""
        memory = self.store.memory_head(scope, memory_id)
        if memory is None or memory.deleted_at is not None:
            raise NotFoundError(f"no memory {memory_id} for {scope}")
        return memory

    def get_all(self, scope: Scope, *, limit: int = 100, filters: dict[str, Any] | None = None) -> MemoryList:
        """The scope's current memories, newest first, narrowed by `filters` as in `search`."""
        if limit < 1:
            raise BadInputError(f"limit must be at least 1; got {limit}")
        return MemoryList(results=self.store.list_memories(scope, limit=limit, where=parse_filters(filters)))

    def locate(self, tenant_id: str, memory_id: str) -> Scope:
        """The scope a memory (or a document, by its `doc_...` id) of the tenant belongs to, for calls that
        name only the memory (mem0's `get`, `update`, `delete`, `history` by id) made by one who holds the
        tenant."""
        if memory_id.startswith(DOCUMENT_PREFIX):
            found = self.store.document_owner(tenant_id, memory_id)
            if found is None:
                raise NotFoundError(f"no document {memory_id} in tenant {tenant_id}")
            return found
        found = self.store.memory_owner(tenant_id, memory_id)
        if found is None:
            raise NotFoundError(f"no memory {memory_id} in tenant {tenant_id}")
        return found

    def review_items(self, scope: Scope, *, status: str = "open", limit: int = 100) -> list[ReviewItem]:
        """Relationship decisions waiting for (or given by) a person, with both memories' contents."""
        return self.store.review_items(scope, status=status, limit=limit)

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        """The commits that wrote a memory (named by any of its versions), every version's, oldest first.
        A deleted memory has none to show: deletion means gone, its text included."""
        entries = self.store.memory_history(scope, self.get(scope, memory_id).id)
        if not entries:
            raise NotFoundError(f"no memory {memory_id} for {scope}")
        return entries

    def profile(self, scope: Scope) -> Profile:
        """The user's profile (`maintain profiles` builds it), without lines whose memories are no longer current."""
        require_user_level(scope, "a profile")
        found = self.store.read_profile(scope)
        if found is None:
            raise NotFoundError(f"no profile for {scope} yet; `mnemoflow maintain profiles` builds it")
        return found

    def summaries(self, scope: Scope, *, level: str | None = None, include_retired: bool = False,
                  limit: int = 100) -> list[Summary]:
        """The user's sealed summaries (`maintain seal` writes them), latest period first."""
        if level not in (None, "L1", "L2"):
            raise BadInputError(f"summary level must be L1 or L2; got {level!r}")
        if limit < 1:
            raise BadInputError(f"summary limit must be at least 1; got {limit}")
        return self.store.list_summaries(scope, level=level, include_retired=include_retired, limit=limit)

    def topics(self, scope: Scope) -> list[Topic]:
        """The user's topics (`maintain cluster` finds them), largest first, with their current memories."""
        require_user_level(scope, "topics")
        return self.store.list_topics(scope)

    def citations(self, scope: Scope, memory_id: str) -> list[Citation]:
        """Where a memory came from: the turns it was read from, or its document."""
        from mnemoflow.recall.citations import citations_of

        return citations_of(self.get(scope, memory_id))


class _EmbedderWhenUsed:
    """The service's embedder, loaded when first used: a recall that finds nothing to search (an
    empty scope) never loads the model."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service

    def __getattr__(self, name: str) -> Any:
        return getattr(self._service.embedder, name)


def _texts(**named: Any) -> None:
    """Each argument given must be text (`refuse_lone_surrogates`), checked before anything is written."""
    for name, value in named.items():
        refuse_lone_surrogates(name, value)


def _asked(query: str) -> None:
    """A search or recall needs something to look for (the same rule on every interface)."""
    if not query.strip():
        raise BadInputError("the query is empty: say what to look for")
