"""How rows look on both sides of the store: DuckDB columns to models, LanceDB rows, derived ids,
and the memory lifecycle gate every room applies the same way."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from mnemoflow.models import MemoryItem
from mnemoflow.storage.scope import Scope
from mnemoflow.timeutil import utcnow

MEMORY_COLUMNS = (
    "memory_id, tenant_id, user_id, agent_id, run_id, container, content, kind, salience, confidence, is_latest, "
    "created_at, updated_at, valid_from, valid_to, expires_at, deleted_at, observed_at, event_start_at, event_end_at, "
    "temporal_text, embedding_status, metadata, pinned, archived_at"
)
_MEMORY_NAMES = [c.strip() for c in MEMORY_COLUMNS.split(",")]

# the columns `chunk_index_row` takes after the scope, in order
CHUNK_INDEX_SELECT = (
    "SELECT c.chunk_id, c.text, c.context, c.content_hash, CAST(c.locator AS VARCHAR), c.shared, d.document_id, "
    "d.title, d.uri, d.connector FROM chunks c JOIN source_documents d ON d.document_id = c.document_id"
)


def memory_item(row: tuple) -> MemoryItem:
    data = dict(zip(_MEMORY_NAMES, row))
    data["id"] = data.pop("memory_id")
    data["metadata"] = json.loads(data["metadata"]) if data["metadata"] else {}
    return MemoryItem(**data)


def epoch(value: datetime | None) -> int | None:
    return None if value is None else int((value - datetime(1970, 1, 1)).total_seconds())


def active_until(valid_to: datetime | None, expires_at: datetime | None, archived_at: datetime | None = None,
                 ) -> int | None:
    """When a memory leaves default recall, as LanceDB's prefilter reads it: the first of the end of its
    validity, its expiry and its archiving (epoch seconds; None: not foreseen)."""
    ends = [t for t in (valid_to, expires_at, archived_at) if t is not None]
    return epoch(min(ends)) if ends else None


def columns(rows: list[dict[str, Any]]) -> dict[str, list]:
    """Rows as the column lists LanceDB takes."""
    return {name: [row[name] for row in rows] for name in rows[0]} if rows else {}


def search_text(text: str, context: str | None) -> str:
    """What BM25 indexes for a chunk: its context (e.g. the neighbouring turns), then its text.
    Only the text is embedded."""
    return f"{context}\n{text}" if context else text


def chunk_index_row(
    scope: Scope, chunk_id: str, text: str, context: str | None, content_hash: str, locator: str, shared: bool,
    document_id: str, title: str, uri: str, connector: str,
) -> dict[str, Any]:
    return {"chunk_id": chunk_id, **scope.stamp(), "shared": shared, "document_id": document_id, "deleted": False, "content_hash": content_hash,
            "text": search_text(text, context), "body": text, "locator": locator, "title": title, "uri": uri,
            "connector": connector}


def memory_row(scope: Scope, memory: MemoryItem, content_hash: str, shared: bool = False) -> dict[str, Any]:
    """A memory's LanceDB columns; `shared` is not a field of MemoryItem, so the caller says it."""
    return {"memory_id": memory.id, **scope.stamp(), "shared": shared, "deleted": memory.deleted_at is not None,
            "is_latest": memory.is_latest,
            "active_until": active_until(memory.valid_to, memory.expires_at, memory.archived_at),
            "content_hash": content_hash,
            "text": memory.content}


def summary_index_row(level: str, subject_kind: str, content: str) -> dict[str, Any]:
    """A summary's LanceDB columns besides its id, scope and content hash (a retired one is not indexed)."""
    return {"shared": False, "deleted": False, "level": level, "subject_kind": subject_kind, "text": content}


def link_id(tenant_id: str, src: str, dst: str, link_type: str) -> str:
    return "lnk_" + hashlib.sha256(f"{tenant_id}\x1f{src}\x1f{dst}\x1f{link_type}".encode()).hexdigest()[:24]


def relation_id(tenant_id: str, subject: str, predicate: str, obj: str, memory_id: str) -> str:
    key = f"{tenant_id}\x1f{subject}\x1f{predicate}\x1f{obj}\x1f{memory_id}"
    return "rel_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def memory_content_hash(content: str) -> str:
    """Exact repeats are the same memory: compare whitespace-collapsed, case-folded text."""
    normal = " ".join(content.split()).casefold()
    return hashlib.sha256(normal.encode()).hexdigest()


# ---------------------------------------------------------------------- the memory lifecycle gate
def active_memory_sql(alias: str = "") -> str:
    """Current memories: not deleted, the latest version, not archived, not past valid_to or expires_at
    (two `?`: now)."""
    a = f"{alias}." if alias else ""
    return (
        f"{a}deleted_at IS NULL AND {a}is_latest AND {a}archived_at IS NULL AND ({a}valid_to IS NULL OR "
        f"{a}valid_to > ?) AND ({a}expires_at IS NULL OR {a}expires_at > ?)"
    )


def lifecycle_sql(alias: str = "", *, history: bool = False) -> tuple[str, list[Any]]:
    """The memory lifecycle gate as " AND ..." and its parameters: active memories only, or with
    `history` past versions, expired and archived ones too; deleted ones never."""
    if history:
        return f" AND {alias + '.' if alias else ''}deleted_at IS NULL", []
    now = utcnow()
    return f" AND {active_memory_sql(alias)}", [now, now]
