"""Moving memories in and out: mnemoflow's own export (JSONL) and mem0's `get_all` output with its
`history`, read into one import batch that the store writes with the memories' own ids and times.

mnemoflow's export, one JSON object per line:

    {"type": "header", "format": "mnemoflow-memories", "version": 1, "tenant_id": ..., ...}
    {"type": "entity", "entity_id": "entity:person:alex", "name": ..., "mention_count": ..., ...}
    {"type": "memory", "id": ..., "user_id": ..., "content": ..., "is_latest": ..., "valid_to": ...,
     "entities": [...], "relations": [...], "categories": [...], "citations": [...], ...}
    {"type": "link", "src": ..., "dst": ..., "link_type": "UPDATES", ...}

Every version is a memory line (past ones with is_latest false), so history comes along; vectors do
not (the importer embeds again with its own model). mem0's records are plain memory dicts
(`{"id", "memory", "user_id", "created_at", ...}`, alone, in a list or under "results"), and its
history entries (`{"memory_id", "event", "old_memory", "new_memory", "created_at"}`), alone or
under a memory's "history" key: a memory's UPDATEs become its past versions, linked UPDATES.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from mnemoflow.errors import BadInputError, ScopeError
from mnemoflow.memory.generate.direct import classify_kind
from mnemoflow.models import rekeyed_entity_id
from mnemoflow.scoring import fast_score
from mnemoflow.storage.scope import Scope
from mnemoflow.timeutil import naive_utc, utcnow

FORMAT = "mnemoflow-memories"
VERSION = 1


@dataclass(frozen=True)
class ImportedEntity:
    entity_id: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()
    mention_count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    hotness: float = 0.0


@dataclass(frozen=True)
class ImportedRelation:
    subject: str
    predicate: str
    object: str
    confidence: float
    created_at: datetime
    superseded_at: datetime | None = None


@dataclass(frozen=True)
class ImportedMemory:
    """A memory as it will be written: its id, owner, text, lifecycle and event times kept."""

    id: str
    scope: Scope
    content: str
    kind: str
    salience: float
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    confidence: float = 1.0
    is_latest: bool = True
    shared: bool = False
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    observed_at: datetime | None = None
    event_start_at: datetime | None = None
    event_end_at: datetime | None = None
    temporal_text: str | None = None
    tier: str = "L0"
    metadata: dict[str, Any] = field(default_factory=dict)
    access_count: int = 0
    last_accessed_at: datetime | None = None
    reinforcement: int = 0
    entities: tuple[str, ...] = ()
    relations: tuple[ImportedRelation, ...] = ()
    categories: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()  # chunk or document ids it was extracted from (linked when the store holds them)


@dataclass(frozen=True)
class ImportedLink:
    src: str
    dst: str
    type: str
    confidence: float
    decided_by: str
    reason: str | None
    created_at: datetime


@dataclass
class ImportBatch:
    format: str
    memories: list[ImportedMemory] = field(default_factory=list)
    entities: list[ImportedEntity] = field(default_factory=list)
    links: list[ImportedLink] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # records that could not be read, and why


class ImportReport(BaseModel):
    format: str
    imported: int
    skipped: int  # already held (an import can be run again)
    rejected: list[str]
    links: int


def read_records(text: str) -> list[dict[str, Any]]:
    """A file's records: a JSON document (an object, a list, or mem0's {"results": [...]}) or JSON lines."""
    stripped = text.strip()
    if not stripped:
        raise BadInputError("the file is empty")
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        data = []
        for n, line in enumerate(stripped.splitlines(), start=1):
            if line.strip():
                try:
                    data.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise BadInputError(f"line {n} is not JSON ({exc.msg})") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise BadInputError("expected JSON objects: an export, mem0's get_all output or its history")
    records: list[dict[str, Any]] = []
    for item in data:
        if isinstance(item, dict) and isinstance(item.get("results"), list):
            records.extend(item["results"])
            records.extend(item.get("history") or [])
        else:
            records.append(item)
    return records


def import_batch(records: list[dict[str, Any]], tenant_id: str | None, default_tenant: str) -> ImportBatch:
    """The records as one batch, in whichever format they are: mnemoflow's export (its header says
    so) or mem0's. `tenant_id` overrides the tenant (an export's own, or `default_tenant` for mem0)."""
    header = next((r for r in records if isinstance(r, dict) and r.get("type") == "header"), None)
    if header is not None:
        if header.get("format") != FORMAT or header.get("version") != VERSION:
            raise BadInputError(f"an export of format {header.get('format')!r} version {header.get('version')!r}; "
                                f"this mnemoflow reads {FORMAT!r} version {VERSION}")
        return _own(records, tenant_id or header.get("tenant_id") or default_tenant)
    return _mem0(records, tenant_id or default_tenant)


# ---------------------------------------------------------------------- mnemoflow's export
class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Entity(_Line):
    entity_id: str
    name: str
    entity_type: str
    aliases: list[str] = []
    mention_count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    hotness: float = 0.0


class _Relation(_Line):
    subject: str
    predicate: str
    object: str
    confidence: float
    created_at: datetime
    superseded_at: datetime | None = None


class _Memory(_Line):
    id: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    container: str | None = None
    shared: bool = False
    content: str
    kind: str
    salience: float
    confidence: float = 1.0
    is_latest: bool = True
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    observed_at: datetime | None = None
    event_start_at: datetime | None = None
    event_end_at: datetime | None = None
    temporal_text: str | None = None
    tier: str = "L0"
    metadata: dict[str, Any] = {}
    access_count: int = 0
    last_accessed_at: datetime | None = None
    reinforcement: int = 0
    entities: list[str] = []
    relations: list[_Relation] = []
    categories: list[str] = []
    citations: list[dict[str, Any]] = []


class _Link(_Line):
    src: str
    dst: str
    link_type: str
    confidence: float
    decided_by: str = "auto"
    reason: str | None = None
    created_at: datetime


def _own(records: list[dict[str, Any]], tenant_id: str) -> ImportBatch:
    batch = ImportBatch(FORMAT)
    for n, record in enumerate(records, start=1):
        kind = record.get("type") if isinstance(record, dict) else None
        try:
            if kind == "entity":
                e = _Entity.model_validate(record)
                batch.entities.append(ImportedEntity(e.entity_id, e.name, e.entity_type, tuple(e.aliases), e.mention_count,
                                                     e.first_seen, e.last_seen, e.hotness))
            elif kind == "memory":
                m = _Memory.model_validate(record)
                batch.memories.append(ImportedMemory(
                    id=m.id, scope=Scope(tenant_id, m.user_id, m.agent_id, m.run_id, m.container),
                    content=m.content, kind=m.kind, salience=m.salience, confidence=m.confidence,
                    is_latest=m.is_latest, shared=m.shared, created_at=m.created_at, updated_at=m.updated_at,
                    valid_from=m.valid_from, valid_to=m.valid_to, expires_at=m.expires_at, observed_at=m.observed_at,
                    event_start_at=m.event_start_at, event_end_at=m.event_end_at, temporal_text=m.temporal_text,
                    tier=m.tier, metadata=m.metadata, access_count=m.access_count,
                    last_accessed_at=m.last_accessed_at, reinforcement=m.reinforcement,
                    entities=tuple(m.entities), categories=tuple(m.categories),
                    relations=tuple(ImportedRelation(r.subject, r.predicate, r.object, r.confidence, r.created_at,
                                                     r.superseded_at) for r in m.relations),
                    sources=tuple(c.get("chunk_id") or c["document_id"] for c in m.citations
                                  if c.get("chunk_id") or c.get("document_id"))))
            elif kind == "link":
                li = _Link.model_validate(record)
                batch.links.append(ImportedLink(li.src, li.dst, li.link_type, li.confidence, li.decided_by, li.reason,
                                                li.created_at))
            elif kind != "header":
                batch.rejected.append(f"record {n}: not an entity, memory or link line")
        except (ValidationError, BadInputError, ScopeError) as exc:
            batch.rejected.append(f"record {n}: {_reason(exc)}")
    return _rekeyed(batch)


def _rekeyed(batch: ImportBatch) -> ImportBatch:
    """An export made before entity ids were digests names entities `entity:<type>:<slug>`: each becomes
    the id the name has now (`models.rekeyed_entity_id`), in entity lines, memories and relations, so
    no imported id spells a name; an entity no line describes is named after its slug."""
    named = {e.entity_id for e in batch.entities}
    batch.entities = [replace(e, entity_id=rekeyed_entity_id(e.entity_id)) for e in batch.entities]
    for eid in dict.fromkeys(e for m in batch.memories for e in m.entities):
        if eid not in named and rekeyed_entity_id(eid) != eid:
            _, kind, slug = eid.split(":", 2)
            batch.entities.append(ImportedEntity(rekeyed_entity_id(eid), slug.replace("-", " ").title(), kind))
    batch.memories = [replace(m, entities=tuple(rekeyed_entity_id(e) for e in m.entities), relations=tuple(
        replace(r, subject=rekeyed_entity_id(r.subject), object=rekeyed_entity_id(r.object)) for r in m.relations))
        for m in batch.memories]
    return batch


# ---------------------------------------------------------------------- mem0
class _Mem0Memory(_Line):
    id: str
    memory: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    app_id: str | None = None
    metadata: dict[str, Any] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    actor_id: str | None = None
    role: str | None = None
    history: list[dict[str, Any]] = []


class _Mem0Event(_Line):
    memory_id: str
    event: str
    old_memory: str | None = None
    new_memory: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


def _mem0(records: list[dict[str, Any]], tenant_id: str) -> ImportBatch:
    """mem0's memories, each with its versions from its history (ADD, then each UPDATE's new text)."""
    batch = ImportBatch("mem0")
    current: list[tuple[int, _Mem0Memory]] = []
    events: dict[str, list[_Mem0Event]] = {}
    for n, record in enumerate(records, start=1):
        try:
            if not isinstance(record, dict):
                raise BadInputError("not an object")
            if "memory" in record and "id" in record:
                m = _Mem0Memory.model_validate(record)
                current.append((n, m))
                for entry in m.history:
                    events.setdefault(m.id, []).append(_Mem0Event.model_validate({"memory_id": m.id, **entry}))
            elif "memory_id" in record and "event" in record:
                e = _Mem0Event.model_validate(record)
                events.setdefault(e.memory_id, []).append(e)
            else:
                raise BadInputError("neither a mem0 memory (id, memory) nor a history entry (memory_id, event)")
        except (ValidationError, BadInputError, ScopeError) as exc:
            batch.rejected.append(f"record {n}: {_reason(exc)}")
    for n, m in current:
        try:
            _mem0_versions(batch, m, sorted(events.get(m.id, []), key=lambda e: e.created_at or datetime.min),
                           tenant_id)
        except (BadInputError, ScopeError) as exc:
            batch.rejected.append(f"record {n}: {exc}")
    return batch


def _mem0_versions(batch: ImportBatch, m: _Mem0Memory, history: list[_Mem0Event], tenant_id: str) -> None:
    scope = Scope(tenant_id, m.user_id, m.agent_id, m.run_id, m.app_id)
    now = utcnow()
    created = _time(m.created_at) or now
    texts = [(e.new_memory, _time(e.created_at) or created) for e in history
             if e.event in ("ADD", "UPDATE") and e.new_memory]
    if not texts or texts[-1][0] != m.memory:  # the history ends with what get_all shows now
        texts.append((m.memory, _time(m.updated_at) or created))
    metadata = {**(m.metadata or {}), **{k: v for k, v in (("actor_id", m.actor_id), ("role", m.role)) if v}}
    previous: str | None = None
    for index, (text, since) in enumerate(texts):
        last = index == len(texts) - 1
        memory_id = m.id if last else f"mem_{hashlib.sha256(f'{m.id}#{index}'.encode()).hexdigest()[:32]}"
        until = None if last else texts[index + 1][1]
        batch.memories.append(ImportedMemory(
            id=memory_id, scope=scope, content=" ".join(text.split()), kind=classify_kind(text),
            salience=fast_score(text), is_latest=last, created_at=since, updated_at=until or since,
            valid_from=since, valid_to=until, observed_at=since, metadata=metadata))
        if previous is not None:
            batch.links.append(ImportedLink(memory_id, previous, "UPDATES", 1.0, "auto", "mem0 history: UPDATE",
                                            since))
        previous = memory_id


def _time(value: datetime | None) -> datetime | None:
    return None if value is None else naive_utc(value)


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc)
