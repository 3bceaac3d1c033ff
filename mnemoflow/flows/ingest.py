"""The `ingest` flow: land transcripts, process turns, extract documents, generate memories, embed,
refresh indexes.

Each task is a plain function from `mnemoflow.ingest` or the embedding worker; the
flow only sequences them and adds retries on transient errors. The CLI and the
Python API call the same functions in-process without Prefect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from mnemoflow import ingest as stages
from mnemoflow.config import Settings, load_settings
from mnemoflow.embedding import create_embedder
from mnemoflow.embedding.worker import drain_embeddings
from mnemoflow.flows.retry import transient_only
from mnemoflow.memory.engines import generation_engine
from mnemoflow.memory.worker import drain_generation
from mnemoflow.models import IngestErrorRecord
from mnemoflow.storage import Scope, Store, open_store

TASK_OPTIONS: dict[str, Any] = {"retries": 3, "retry_delay_seconds": [2, 10, 30], "retry_condition_fn": transient_only,
                                "cache_policy": NO_CACHE}


@task(name="land-transcripts", **TASK_OPTIONS)
def land_transcripts(store: Store, settings: Settings, scope: Scope, sources: list[tuple[Path, str]]) -> list[IngestErrorRecord]:
    return stages.land_conversations(store, settings, scope, sources)


@task(name="process-turns", **TASK_OPTIONS)
def process_turns(store: Store, settings: Settings, scope: Scope) -> dict[str, int]:
    writes = stages.process_landed_turns(store, settings, scope)
    return {"sessions_changed": sum(w.changed for w in writes), "turns_added": sum(w.turns_added for w in writes),
            "chunks_added": sum(w.chunks_added for w in writes)}


@task(name="extract-documents", **TASK_OPTIONS)
def extract_documents(store: Store, settings: Settings, scope: Scope, paths: list[Path]) -> tuple[dict[str, int], list[IngestErrorRecord]]:
    writes, errors = stages.ingest_documents(store, settings, scope, paths)
    return {"documents_changed": sum(w.changed for w in writes), "chunks_added": sum(w.chunks_added for w in writes)}, errors


@task(name="record-errors", **TASK_OPTIONS)
def record_errors(store: Store, scope: Scope, errors: list[IngestErrorRecord]) -> int:
    store.record_ingest_errors(scope, errors)
    return len(errors)


@task(name="refresh-search-indexes", **TASK_OPTIONS)
def refresh_search_indexes(store: Store) -> None:
    store.refresh_search_indexes()


@task(name="generate-memories", **TASK_OPTIONS)
def generate_memories(store: Store, settings: Settings) -> dict[str, Any]:
    engine = generation_engine(settings)
    try:
        report = drain_generation(store, create_embedder(settings), engine, batch_size=settings.outbox_batch_size)
    finally:
        engine.close()
    return {"sessions": report.sessions, "turns": report.turns, "created": report.created,
            "reinforced": report.reinforced, "linked": report.linked, "reviews": report.reviews,
            "failed": report.failed, "unavailable": report.unavailable}


@task(name="embed-pending", **TASK_OPTIONS)
def embed_pending(store: Store, settings: Settings) -> dict[str, Any]:
    report = drain_embeddings(store, create_embedder(settings), batch_size=settings.outbox_batch_size)
    return {"embedded": report.embedded, "reused": report.reused, "unavailable": report.unavailable}


@flow(name="ingest", log_prints=True)
def ingest_flow(paths: list[str], tenant_id: str, user_id: str, home: str | None = None, wait: bool = True) -> dict[str, Any]:
    """Ingest files and directories for one user; returns counts (embeddings stay out of it)."""
    settings = load_settings(home)
    scope = Scope(tenant_id, user_id)
    inputs = stages.discover((Path(p) for p in paths), settings.max_file_bytes)
    with open_store(settings) as store:
        errors = list(inputs.errors)
        errors += land_transcripts(store, settings, scope, inputs.transcripts)
        turns = process_turns(store, settings, scope)
        documents, document_errors = extract_documents(store, settings, scope, inputs.documents)
        errors += document_errors
        record_errors(store, scope, errors)
        generated = generate_memories(store, settings) if wait else None
        embedded = embed_pending(store, settings) if wait else None
        refresh_search_indexes(store)
        counts = store.counts(scope)
    return {"turns": turns, "documents": documents, "errors": [e.reason for e in errors], "memories": generated,
            "embedding": embedded, "counts": counts}
