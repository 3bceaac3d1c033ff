"""Bulk work on dask.distributed through Prefect's Dask task runner: a large ingest, a re-embedding, a
backfill of memory generation. Extraction, chunking and embedding run as tasks on the Dask workers
(`dask_address`, or a LocalCluster in this process); this flow's process writes the store in batches.

The flow writes the store itself: a shared store, or a home no server owns (a server's home is
written through the server, `mnemoflow ingest` without --dask).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from mnemoflow.config import Settings, load_settings
from mnemoflow.errors import ConfigError
from mnemoflow.ingest import bulk
from mnemoflow.reports import IngestOutcome, IngestReport
from mnemoflow.storage import Scope

FILES_PER_TASK = 16
TEXTS_PER_TASK = 256


def task_runner(settings: Settings, workers: int | None = None) -> Any:
    """The cluster at `dask_address`, or a LocalCluster of `workers` processes (one thread each: the
    model already uses the cores it is given)."""
    from prefect_dask import DaskTaskRunner

    if settings.dask_address:
        return DaskTaskRunner(address=settings.dask_address)
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers or 2, "threads_per_worker": 1, "processes": True,
                                          "dashboard_address": None})


@task(name="extract-files", retries=2, cache_policy=NO_CACHE)
def extract_task(settings: Settings, scope: Scope, paths: list[str]) -> bulk.ExtractedBatch:
    return bulk.extract_files(settings, scope, paths)


@task(name="embed-texts", retries=2, cache_policy=NO_CACHE)
def embed_task(settings: Settings, texts: list[str]) -> np.ndarray:
    return bulk.embed_texts(settings, texts)


@task(name="generate-memories", retries=1, cache_policy=NO_CACHE)
def generate_task(settings: Settings) -> dict[str, int]:
    """Drain memory generation against the shared store from a Dask worker (claims take one owner each)."""
    from mnemoflow.service import MemoryService

    with MemoryService(settings) as service:
        report = service.drain().generation
    return {"sessions": report.sessions, "created": report.created, "failed": report.failed}


def _own_store(settings: Settings) -> None:
    from mnemoflow.remote import running_server

    if not settings.store_url and running_server(settings) is not None:
        raise ConfigError(f"a server owns {settings.home}: bulk work writes the store itself, so stop the server "
                          "first (or ingest without --dask, through the server)")


@flow(name="bulk-ingest", log_prints=True)
def bulk_ingest_flow(paths: list[str], tenant_id: str, user_id: str, home: str | None = None,
                     files_per_task: int = FILES_PER_TASK) -> IngestOutcome:
    """Documents extracted, chunked and embedded on the Dask workers, written here in batches as they
    come back; transcripts landed here (dlt); then the derived work and the index refresh."""
    from mnemoflow.ingest.conversations import land_conversations, process_landed_turns
    from mnemoflow.ingest.discover import discover
    from mnemoflow.ingest.sequence import finish
    from mnemoflow.service import MemoryService

    settings = load_settings(home)
    _own_store(settings)
    scope = Scope(tenant_id, user_id)
    with MemoryService(settings) as service:
        store = service.store
        inputs = discover([Path(p) for p in paths], settings.max_file_bytes)
        report = IngestReport(errors=list(inputs.errors))
        documents = [str(p) for p in inputs.documents]
        futures = [extract_task.submit(settings, scope, documents[start:start + files_per_task])
                   for start in range(0, len(documents), files_per_task)]
        report.errors += land_conversations(store, settings, scope, inputs.transcripts)
        for write in process_landed_turns(store, settings, scope):
            report.add(write, session=True)
        for future in futures:
            bulk.write_extracted(store, scope, future.result(), report)
        return finish(service, scope, report, wait=True)


class DaskEmbedder:
    """An embedder whose `embed` spreads the texts over the flow's Dask workers (a re-embedding's drain
    keeps its own claims, caching and writes)."""

    def __init__(self, settings: Settings, inner: Any) -> None:
        self._settings, self._inner = settings, inner
        self.dim, self.model = inner.dim, getattr(inner, "model", None)

    def embed(self, texts: list[str]) -> np.ndarray:
        parts = [embed_task.submit(self._settings, texts[start:start + TEXTS_PER_TASK])
                 for start in range(0, len(texts), TEXTS_PER_TASK)]
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate([part.result() for part in parts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@flow(name="bulk-reembed", log_prints=True)
def reembed_flow(home: str | None = None) -> dict[str, int]:
    """Every vector rebuilt with the configured model, the embedding spread over the Dask workers."""
    from mnemoflow.embedding.worker import drain_embeddings
    from mnemoflow.service import MemoryService

    settings = load_settings(home)
    _own_store(settings)
    with MemoryService(settings) as service:
        queued = service.store.reset_vectors_for_model()
        embedder = DaskEmbedder(settings, service.embedder)
        report = drain_embeddings(service.store, embedder, batch_size=settings.outbox_batch_size)  # type: ignore[arg-type]
        service.store.refresh_search_indexes()
    return {"queued": queued, "embedded": report.embedded, "reused": report.reused, "failed": report.failed}


@flow(name="bulk-backfill", log_prints=True)
def backfill_flow(tenant_id: str | None = None, home: str | None = None, workers: int = 2) -> dict[str, int]:
    """Memory generation for every conversation no generation job has read (ingested with generation off,
    or before it existed): queued here, generated by `workers` tasks on the Dask workers when the store is
    shared (each claims whole owners), here otherwise."""
    from mnemoflow.service import MemoryService

    settings = load_settings(home)
    _own_store(settings)
    with MemoryService(settings) as service:
        queued = service.store.queue_generation_backfill(tenant_id)
        if not settings.store_url or workers <= 1:
            report = service.drain().generation
            return {"queued": queued, "sessions": report.sessions, "created": report.created}
    results = [f.result() for f in [generate_task.submit(settings) for _ in range(workers)]]
    with MemoryService(settings) as service:
        service.store.refresh_search_indexes()
    return {"queued": queued, "sessions": sum(r["sessions"] for r in results),
            "created": sum(r["created"] for r in results)}


def run_bulk(flow_fn: Any, settings: Settings, workers: int | None = None, **parameters: Any) -> Any:
    """Run one of the bulk flows on the settings' Dask cluster (or a LocalCluster of `workers`)."""
    return flow_fn.with_options(task_runner=task_runner(settings, workers))(home=str(settings.home), **parameters)
