"""The ingestion sequence, written once: discover, land, process turns, extract documents, record
errors, then the derived work (memory generation, embeddings) and the search-index refresh.

The service layer runs it in-process; the Prefect flows run the same functions with `step`
making each stage a task (retries, visibility). Each stage is a plain function that a test can
call without Prefect.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from mnemoflow.config import Settings
from mnemoflow.connectors.conversations import land_events
from mnemoflow.embedding import Embedder
from mnemoflow.errors import BadInputError
from mnemoflow.embedding.worker import drain_embeddings
from mnemoflow.ingest.conversations import land_conversations, process_landed_turns
from mnemoflow.ingest.discover import discover
from mnemoflow.ingest.documents import extract_document, ingest_documents, retire_missing_files, write_in_batches
from mnemoflow.ingest.sync import source_scope, sync_source
from mnemoflow.memory.generate.candidates import GenerationEngine
from mnemoflow.memory.worker import drain_generation
from mnemoflow.models import IngestErrorRecord
from mnemoflow.progress import Progress, Quiet, Step, inline
from mnemoflow.reports import Drained, IngestOutcome, IngestReport, SyncReport
from mnemoflow.rules.drafts import draft_rules
from mnemoflow.storage import Scope, Store

NOTES = "notes"  # the connector of text handed over directly (MCP ingest_text, HTTP)

class Workers(Protocol):
    """What the sequence works with: the store, the settings, and the derivers (opened on first use)."""

    settings: Settings

    @property
    def store(self) -> Store: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def engine(self) -> GenerationEngine: ...


# ---------------------------------------------------------------------- stages
def record_errors(store: Store, scope: Scope, errors: list[IngestErrorRecord]) -> int:
    store.record_ingest_errors(scope, errors)
    return len(errors)


def refresh_search_indexes(store: Store) -> None:
    store.refresh_search_indexes()


def drain(workers: Workers, progress: Progress | None = None, *, lazy: bool = False) -> Drained:
    """Run the outbox until it is empty or the embedder is unavailable: memory generation for new
    turns first (its memories join the embedding queue; rule memories become DRAFT rules), then
    embeddings; then fold everything written into the search indexes (once, for the whole batch;
    `lazy` after a small write, see `Store.refresh_search_indexes`)."""
    progress = progress or Quiet()
    store, batch = workers.store, workers.settings.outbox_batch_size
    generated = drain_generation(store, workers.embedder, workers.engine, batch_size=batch)
    drafted = draft_rules(store)
    progress.deriving(store.outbox_counts().get("pending", 0))
    report = drain_embeddings(store, workers.embedder, batch_size=batch, on_progress=progress.embedded)
    store.refresh_search_indexes(lazy=lazy)
    return Drained(**vars(report), generation=generated, rules_drafted=drafted)


# ---------------------------------------------------------------------- sequences
def ingest_paths(
    workers: Workers, scope: Scope, paths: list[Path], *, wait: bool = True, step: Step | None = None,
    progress: Progress | None = None,
) -> IngestOutcome:
    """Files and directories of every supported kind, transcripts included, for one user."""
    progress, step = progress or Quiet(), step or inline
    store, settings = workers.store, workers.settings
    inputs = step(discover, paths, settings.max_file_bytes)
    report = IngestReport(errors=[still_held(store, scope, e) for e in inputs.errors])
    report.errors += step(land_conversations, store, settings, scope, inputs.transcripts)
    for write in step(process_landed_turns, store, settings, scope):
        report.add(write, session=True)
    writes, errors = step(ingest_documents, store, settings, scope, inputs.documents, progress.file_read)
    for write in writes:
        report.add(write)
    report.errors += errors
    retired = step(retire_missing_files, store, scope, [p for p in paths if p.is_dir()])
    report.documents_retired, report.memories_retired = retired.documents, retired.memories
    return finish(workers, scope, report, wait=wait, step=step, progress=progress)


def still_held(store: Store, scope: Scope, error: IngestErrorRecord) -> IngestErrorRecord:
    """A path that is gone, named with what the store still holds from it and how to remove that."""
    if error.kind != "missing":
        return error
    held = sorted(doc for doc, files in store.documents_from_files(scope, error.uri).items()
                  if any(f == error.uri or f.startswith(error.uri.rstrip("/") + "/") for f in files))
    if not held:
        return error
    more = f" and {len(held) - 2} more" if len(held) > 2 else ""
    return replace(error, reason=f"{error.reason}; still held from it: {', '.join(held[:2])}{more} (`forget` an id, "
                                 f"or ingest the folder that held it again, to remove them)")


def ingest_events(
    workers: Workers, scope: Scope, turns: list[dict[str, Any]], *, wait: bool = True, step: Step | None = None,
) -> IngestOutcome:
    """Agent events (turns) posted to an API: landed and processed like transcript files."""
    store, settings, step = workers.store, workers.settings, step or inline
    landing = step(land_events, store, scope, turns, pipelines_dir=settings.dlt_dir)
    report = IngestReport(errors=list(landing.errors))
    for write in step(process_landed_turns, store, settings, scope):
        report.add(write, session=True)
    return finish(workers, scope, report, wait=wait, step=step)


def ingest_text(
    workers: Workers, scope: Scope, text: str, *, title: str | None = None, wait: bool = True,
) -> IngestOutcome:
    """A note given as text: one markdown document, addressed by its content, so the same text twice is
    one document."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    name = title or f"note {digest[:12]}"
    report = IngestReport()
    try:
        writes, errors = extract_document(workers.settings, scope, connector=NOTES, uri=f"note:{digest}", name=name,
                                          data=text.encode(), mime="text/markdown")
    except BadInputError as exc:
        report.errors.append(IngestErrorRecord(NOTES, f"note:{digest}", "text/markdown", str(exc)))
    else:
        report.errors += errors
        write_in_batches(workers.store, scope, writes, actor="ingest", report=report)
    return finish(workers, scope, report, wait=wait)


def sync(workers: Workers, name: str, *, wait: bool = True, step: Step | None = None) -> SyncReport:
    """One configured source (`ingest.sync`), then its derived work unless told not to wait."""
    scope, _ = source_scope(workers.settings, name)
    step = step or inline
    report = step(sync_source, workers.store, workers.settings, name)
    report.drained = finish(workers, scope, report.ingested, wait=wait, step=step).drain
    return report


def finish(
    workers: Workers, scope: Scope, report: IngestReport, *, wait: bool, step: Step | None = None,
    progress: Progress | None = None,
) -> IngestOutcome:
    """The end of every sequence: errors recorded, derived work drained (or left to the worker, the
    search indexes refreshed so BM25 sees the new rows at once)."""
    store, step = workers.store, step or inline
    step(record_errors, store, scope, report.errors)
    drained = step(drain, workers, progress) if wait else None
    if not wait:
        step(refresh_search_indexes, store)
    return IngestOutcome(report, drained, store.counts(scope)["pending_embeddings"])
