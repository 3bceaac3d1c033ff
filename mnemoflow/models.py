"""Records that cross module boundaries.

Dataclasses for what the pipeline hands the store; pydantic models for what users
see (API, CLI --json, reports). No model here carries an embedding.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from mnemoflow.timeutil import UtcDatetime, iso_utc

MemoryKind = Literal["fact", "preference", "episode", "procedure", "rule"]
# metadata that generation writes about where a memory's text came from (true of that text only);
# the rest of a memory's metadata is the caller's
PROVENANCE_KEYS = ("entities", "source_turn_ids", "source_turns", "why", "derived_by", "rule")
DOCUMENT_PREFIX = "doc_"  # what every document id starts with, and no memory id


@dataclass(frozen=True)
class DocumentRecord:
    document_id: str
    connector: str
    uri: str
    mime: str
    title: str
    content_hash: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TurnRecord:
    turn_key: str
    document_id: str
    session_id: str
    turn_id: str
    ordinal: int
    role: str | None
    speaker: str | None
    ts: datetime | None
    text: str
    metadata: dict[str, Any] | None
    source_uri: str


@dataclass(frozen=True)
class ChunkRecord:
    """`text` is what recall shows and cites; `context` (optional) is indexed and embedded with it."""

    chunk_id: str
    document_id: str
    ordinal: int
    text: str
    context: str | None
    content_hash: str
    token_count: int
    locator: dict[str, Any]
    score: float


@dataclass(frozen=True)
class IngestErrorRecord:
    connector: str
    uri: str
    kind: str
    reason: str
    detail: str | None = None


EntityType = Literal["person", "organization", "place", "library", "tool", "project", "concept"]


def entity_id_of(type: str, slug: str) -> str:  # noqa: A002 - the column is called type
    """`entity:<type>:<digest>`: the id of the entity of that type whose name slugs to `slug`. A digest, so
    that an id (which commits keep after a purge) never spells what it names; the name lives in the
    entity's row, which the purge removes."""
    return f"entity:{type}:{hashlib.sha256(f'{type}:{slug}'.encode()).hexdigest()[:24]}"


_DIGESTED = re.compile(r"^entity:[a-z]+:[0-9a-f]{24}$")


def rekeyed_entity_id(entity_id: str) -> str:
    """The id an entity has now: an `entity:<type>:<slug>` id of a store or an export made before ids were
    digests becomes `entity_id_of(type, slug)` (the id the same name is given today); anything else is
    itself."""
    if not entity_id.startswith("entity:") or _DIGESTED.match(entity_id) or entity_id.count(":") < 2:
        return entity_id
    _, type_, slug = entity_id.split(":", 2)
    return entity_id_of(type_, slug)
ENTITY_TYPES: tuple[str, ...] = get_args(EntityType)
Predicate = Literal["mentions", "works_on", "uses", "prefers", "supersedes", "superseded_by", "conflicts_with",
                    "cites", "runs_on", "belongs_to", "located_at"]
PREDICATES: tuple[str, ...] = get_args(Predicate)
THIS_MEMORY = "@memory"  # a relation's subject or object that is the memory being written (its id is not known yet)


@dataclass(frozen=True)
class EntityRef:
    """A typed entity a memory names: `entity_id` is `entity:<type>:<slug>` (tenant-wide), `name` the
    canonical form, `aliases` the other forms it went by (possessive, case, short form)."""

    entity_id: str
    name: str
    type: EntityType
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class RelationDraft:
    """A triple a memory states: `subject` an entity id (or THIS_MEMORY), `object` an entity id,
    THIS_MEMORY or a literal ("morning meetings")."""

    subject: str
    predicate: Predicate
    object: str
    confidence: float = 1.0


@dataclass(frozen=True)
class EntityRow:
    """An entity as the store holds it. `hotness` is the exponentially decayed mention rate as of
    the read: each mention adds 1, and the total halves every 30 days without one."""

    entity_id: str
    name: str
    type: str
    aliases: tuple[str, ...]
    mention_count: int
    first_seen: datetime | None
    last_seen: datetime | None
    hotness: float
    commit_id: str


@dataclass(frozen=True)
class RelationRow:
    relation_id: str
    subject: str
    predicate: str
    object: str
    memory_id: str | None
    confidence: float
    created_at: datetime
    superseded_at: datetime | None
    commit_id: str


@dataclass(frozen=True)
class MemoryDraft:
    content: str
    kind: MemoryKind
    salience: float
    confidence: float = 1.0
    observed_at: datetime | None = None
    event_start_at: datetime | None = None
    event_end_at: datetime | None = None
    temporal_text: str | None = None
    expires_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    derived_from: tuple[str, ...] = ()  # chunk or document ids the memory was extracted from
    entities: tuple[EntityRef, ...] = ()  # typed entities it names (memory_entities, `mentions`)
    relations: tuple[RelationDraft, ...] = ()  # triples it states (relations)
    categories: tuple[str, ...] = ()  # category keys, "a/b" paths (memory_categories)


LinkType = Literal["UPDATES", "EXTENDS", "DERIVES", "RELATES_TO", "DUPLICATE_OF", "CONFLICTS_WITH", "MAY_UPDATE"]


@dataclass(frozen=True)
class LinkDraft:
    """A relationship from a new memory to one the scope holds, with how sure the decision is and who
    made it (the pipeline, or a person: `update` says the new text replaces the old)."""

    type: LinkType
    target_id: str
    confidence: float
    reason: str
    decided_by: Literal["auto", "user"] = "auto"


@dataclass(frozen=True)
class DeletionResult:
    documents: int = 0
    chunks: int = 0
    memories: int = 0


@dataclass(frozen=True)
class DocumentWrite:
    """A document as it should now be: its live chunks and (for conversations) new or edited turns."""

    document: DocumentRecord
    chunks: list[ChunkRecord]
    turns: list[TurnRecord] = field(default_factory=list)


@dataclass(frozen=True)
class DocumentWriteResult:
    document_id: str
    commit_id: str | None
    turns_added: int
    chunks_added: int
    chunks_removed: int

    @property
    def changed(self) -> bool:
        return self.commit_id is not None


class Mem0Mapping:
    """Read access by key, for code written against mem0, whose results are dicts: `item["memory"]`
    beside `item.content`. A key reads `mem0()`, the plain JSON-able dict mem0 would have returned
    (what `json.dumps` takes), else the model's field of that name. The values stay pydantic models,
    so a remote client can send them over HTTP."""

    def mem0(self) -> dict[str, Any]:
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        view = self.mem0()
        if key in view:
            return view[key]
        if isinstance(key, str) and key in type(self).model_fields:  # type: ignore[attr-defined]
            return getattr(self, key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return key in self.mem0()

    def keys(self) -> list[str]:
        return list(self.mem0())

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  (a dict iterates its keys)
        return iter(self.mem0())


class Mem0Memory(BaseModel):
    """A memory as mem0 shows one (its `search` and `get_all` results): `memory` is the content, `hash`
    its md5, `metadata` the caller's (provenance stays on `MemoryItem.metadata`); the owner's ids it has."""

    id: str
    memory: str
    hash: str
    metadata: dict[str, Any]
    created_at: UtcDatetime
    updated_at: UtcDatetime
    score: float | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    container: str | None = None


class MemoryItem(Mem0Mapping, BaseModel):
    """A memory as users see it."""

    id: str
    tenant_id: str
    user_id: str | None = None  # None: the memory of an agent or a run, no user's
    agent_id: str | None = None
    run_id: str | None = None
    container: str | None = None
    content: str
    kind: str
    salience: float
    confidence: float
    is_latest: bool
    created_at: UtcDatetime
    updated_at: UtcDatetime
    valid_from: UtcDatetime
    valid_to: UtcDatetime | None = None
    expires_at: UtcDatetime | None = None
    deleted_at: UtcDatetime | None = None
    observed_at: UtcDatetime | None = None
    event_start_at: UtcDatetime | None = None
    event_end_at: UtcDatetime | None = None
    temporal_text: str | None = None
    embedding_status: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    pinned: bool = Field(False, description="Kept by a person: decay never archives it.")
    archived_at: UtcDatetime | None = Field(
        None, description="When decay archived it (its retention fell under the threshold, or it expired): out of "
        "default recall, still in history until the retention period ends.")
    score: float | None = None

    def mem0(self) -> dict[str, Any]:
        """As mem0 shows a memory (`Mem0Memory`), as plain JSON values."""
        caller = {k: v for k, v in self.metadata.items() if k not in PROVENANCE_KEYS}
        view = Mem0Memory(id=self.id, memory=self.content, hash=hashlib.md5(self.content.encode()).hexdigest(),
                          metadata=caller, created_at=self.created_at, updated_at=self.updated_at, score=self.score,
                          user_id=self.user_id, agent_id=self.agent_id, run_id=self.run_id, container=self.container)
        return view.model_dump(mode="json", exclude_none=True)

    def active_at(self, now: datetime) -> bool:
        """Recall's default gate for a memory in hand (the store's SQL gate): not deleted, the latest
        version, not archived, and neither past its validity nor expired at `now`."""
        return (self.deleted_at is None and self.is_latest and self.archived_at is None
                and (self.valid_to is None or self.valid_to > now) and (self.expires_at is None or self.expires_at > now))


class Citation(BaseModel):
    """Where an item came from: a document and a place in it, or a conversation turn."""

    document_id: str | None = None
    uri: str | None = None
    title: str | None = None
    locator: dict[str, Any] = Field(default_factory=dict)
    session_id: str | None = None
    turn_id: str | None = None
    ts: UtcDatetime | None = None
    speaker: str | None = None
    memory_id: str | None = None


class RecallItem(BaseModel):
    kind: Literal["memory", "chunk", "summary", "profile"]
    id: str
    text: str
    tokens: int
    score: float
    scores: dict[str, float]
    why: str
    citations: list[Citation]


class PublicRecallItem(BaseModel):
    """An item as recall's documented shape shows it: each signal's score, not the fused one."""

    kind: Literal["memory", "chunk", "summary", "profile"]
    id: str
    text: str
    tokens: int
    scores: dict[str, float]
    why: str
    citations: list[Citation]


class PublicRecall(BaseModel):
    """Recall's documented shape (CLI --json, HTTP, MCP): the items, the token count, the packed
    context; never an embedding."""

    items: list[PublicRecallItem]
    tokens: int
    context: str
    warnings: list[str]


class RecallResult(BaseModel):
    query: str
    items: list[RecallItem]
    tokens: int
    context: str
    warnings: list[str] = Field(default_factory=list)

    def public(self) -> dict[str, Any]:
        """`PublicRecall` as plain JSON values, without empty citation fields."""
        return PublicRecall.model_validate(self, from_attributes=True).model_dump(mode="json", exclude_none=True)


class HistoryEntry(Mem0Mapping, BaseModel):
    """One commit's write of one version of a memory. `event` says it in mem0's terms: ADD (the first
    version), UPDATE (a version replacing `old_memory` with `new_memory`), DELETE; None for the
    bookkeeping half of an update (the old version marked past, in the commit that added the new)."""

    commit_id: str
    created_at: UtcDatetime
    actor: str
    message: str | None
    op: str
    memory_id: str | None = None
    event: Literal["ADD", "UPDATE", "DELETE"] | None = None
    old_memory: str | None = None
    new_memory: str | None = None

    def mem0(self) -> dict[str, Any]:
        return {"id": self.commit_id, "memory_id": self.memory_id, "old_memory": self.old_memory,
                "new_memory": self.new_memory, "event": self.event, "created_at": iso_utc(self.created_at),
                "updated_at": iso_utc(self.created_at), "is_deleted": self.op == "delete", "actor_id": self.actor,
                "role": None}


ReviewStatus = Literal["open", "accepted", "rejected"]
REVIEW_STATUSES: tuple[str, ...] = get_args(ReviewStatus)
LINK_TYPES: tuple[str, ...] = get_args(LinkType)  # what a relationship decision may apply


class ReviewItem(BaseModel):
    """A relationship decision that waited for a person (`review_queue`), with both memories' contents
    so it can be judged: `src` is the newer memory, `dst` the one it would relate to."""

    review_id: str
    tenant_id: str
    user_id: str | None
    src: str
    dst: str
    proposed_type: str
    confidence: float
    reason: str | None = None
    status: ReviewStatus
    created_at: UtcDatetime
    decided_at: UtcDatetime | None = None
    decided_by: str | None = None
    applied_type: str | None = None  # the link a person accepted (may differ from the proposal)
    src_content: str | None = None
    dst_content: str | None = None
    src_current: bool = False  # live and latest: a decision can still be applied to it
    dst_current: bool = False


class TenantDeletion(BaseModel):
    """What deleting a tenant did: soft deletion at `deleted_at` (its keys revoked, nothing of it returned
    from then on), then the hard purge, by table (rows, LanceDB rows, cache vectors)."""

    tenant_id: str
    deleted_at: UtcDatetime
    keys_revoked: int
    purged: dict[str, int] = Field(default_factory=dict)


class ApiKey(BaseModel):
    """An API key as the APIs see it, never its secret: the tenant it reaches, and whether it is an admin's
    (an admin key may also see debug output of its tenant: raw vectors, internal scores)."""

    key_id: str
    tenant_id: str
    admin: bool = False
