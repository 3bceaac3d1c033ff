"""The `sync` flow: one configured source through its connector, then embeddings and index refresh.

A scheduled deployment per configured source runs this flow (see `mnemoflow deployments`).
Transient failures (an API timing out, a busy store) are retried by Prefect.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from mnemoflow.config import Settings, load_settings
from mnemoflow.flows.ingest import TASK_OPTIONS, embed_pending, refresh_search_indexes
from mnemoflow.storage import Store, open_store
from mnemoflow.sync import sync_source


@task(name="sync-source", **TASK_OPTIONS)
def sync_task(store: Store, settings: Settings, source: str) -> dict[str, Any]:
    report = sync_source(store, settings, source)
    r = report.ingested
    return {"kind": report.kind, "files_read": report.files_read, "files_unchanged": report.files_unchanged,
            "records": report.records, "documents_changed": r.documents_changed, "turns_added": r.turns_added,
            "chunks_added": r.chunks_added, "chunks_removed": r.chunks_removed,
            "documents_deleted": report.documents_deleted, "memories_deleted": report.memories_deleted,
            "errors": [f"{e.uri}: {e.reason}" for e in report.errors]}


@flow(name="sync", log_prints=True)
def sync_flow(source: str, home: str | None = None) -> dict[str, Any]:
    """Sync one configured source for its tenant and user."""
    settings = load_settings(home)
    with open_store(settings) as store:
        result = sync_task(store, settings, source)
        result["embedding"] = embed_pending(store, settings)
        refresh_search_indexes(store)
    return result
