"""The `sync` flow: one configured source through the ingestion sequence, each stage a task.

A scheduled deployment per configured source runs this flow (see `mnemoflow deployments`).
Transient failures (an API timing out, a busy store) are retried by Prefect.
"""

from __future__ import annotations

from typing import Any

from prefect import flow

from mnemoflow.config import load_settings
from mnemoflow.flows.tasks import as_task
from mnemoflow.remote import connect


@flow(name="sync", log_prints=True)
def sync_flow(source: str, home: str | None = None) -> dict[str, Any]:
    """Sync one configured source for its tenant and user."""
    with connect(load_settings(home)) as service:
        report = service.sync(source, step=as_task)
    r = report.ingested
    return {"kind": report.kind, "files_read": report.files_read, "files_unchanged": report.files_unchanged,
            "records": report.records, "documents_changed": r.documents_changed, "turns_added": r.turns_added,
            "chunks_added": r.chunks_added, "chunks_removed": r.chunks_removed,
            "documents_deleted": report.documents_deleted, "memories_deleted": report.memories_deleted,
            "errors": [f"{e.uri}: {e.reason}" for e in report.errors],
            "embedding": None if report.drained is None else {
                "embedded": report.drained.embedded, "reused": report.drained.reused,
                "unavailable": report.drained.unavailable}}
