"""The `ingest` flow: the ingestion sequence (`mnemoflow.ingest.sequence`) with each stage a task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow

from mnemoflow.config import load_settings
from mnemoflow.flows.tasks import as_task
from mnemoflow.reports import IngestOutcome
from mnemoflow.remote import connect
from mnemoflow.storage import Scope


def outcome_summary(outcome: IngestOutcome) -> dict[str, Any]:
    """What a flow run returns: counts of what was written, the errors, and the derived work."""
    r, drained = outcome.report, outcome.drain
    generation = drained.generation if drained else None
    return {
        "turns": {"sessions_changed": r.sessions_changed, "turns_added": r.turns_added},
        "documents": {"documents_changed": r.documents_changed - r.sessions_changed, "chunks_added": r.chunks_added,
                      "chunks_removed": r.chunks_removed},
        "errors": [e.reason for e in r.errors],
        "memories": None if generation is None else {
            "sessions": generation.sessions, "turns": generation.turns, "created": generation.created,
            "reinforced": generation.reinforced, "linked": generation.linked, "reviews": generation.reviews,
            "failed": generation.failed, "unavailable": generation.unavailable},
        "embedding": None if drained is None else {
            "embedded": drained.embedded, "reused": drained.reused, "unavailable": drained.unavailable},
        "pending_embeddings": outcome.pending_embeddings,
    }


@flow(name="ingest", log_prints=True)
def ingest_flow(paths: list[str], tenant_id: str, user_id: str, home: str | None = None, wait: bool = True) -> dict[str, Any]:
    """Ingest files and directories for one user; returns counts (embedding arrays stay out of it)."""
    scope = Scope(tenant_id, user_id)
    with connect(load_settings(home)) as service:
        outcome = service.ingest(scope, [Path(p) for p in paths], wait=wait, step=as_task)
        return {**outcome_summary(outcome), "counts": service.counts(scope)}
