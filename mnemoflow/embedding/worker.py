"""The outbox worker for embeddings: claim jobs, embed what no cache holds, write vectors, mark done."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import numpy as np

from mnemoflow.embedding.base import Embedder
from mnemoflow.errors import EmbeddingUnavailableError
from mnemoflow.reports import DrainReport
from mnemoflow.storage import Scope, Store
from mnemoflow.storage.outbox import Job


def drain_embeddings(
    store: Store,
    embedder: Embedder,
    *,
    batch_size: int = 256,
    max_batches: int | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> DrainReport:
    """Embed pending rows until the outbox is empty (or `max_batches` passes).

    When the provider is unavailable the claimed jobs are released without using up
    an attempt and the pass stops: the rows stay pending for the next worker run.
    """
    report = DrainReport()
    batches = 0
    while max_batches is None or batches < max_batches:
        jobs = store.claim_embedding_jobs(batch_size)
        if not jobs:
            break
        batches += 1
        groups: dict[tuple[Scope, str], list[Job]] = defaultdict(list)
        for job in jobs:
            groups[(job.scope, job.payload["target"])].append(job)
        for index, ((scope, target), group) in enumerate(groups.items()):
            try:
                _embed_group(store, embedder, scope, target, group, report)
            except EmbeddingUnavailableError as exc:
                remaining = [j.job_key for g in list(groups.values())[index:] for j in g]
                store.release_jobs(remaining, str(exc))
                report.unavailable = str(exc)
                return report
            except Exception as exc:  # a job-specific failure: count it against these jobs
                store.fail_jobs([j.job_key for j in group], f"{type(exc).__name__}: {exc}")
                report.failed += len(group)
        if on_progress:
            on_progress(len(jobs))
    return report


def _embed_group(
    store: Store, embedder: Embedder, scope: Scope, target: str, jobs: list[Job], report: DrainReport
) -> None:
    inputs, moot = store.embedding_inputs(scope, target, jobs)  # type: ignore[arg-type]
    store.complete_jobs(moot)
    report.skipped += len(moot)
    if not inputs:
        return
    cached, fresh = vectors_by_hash(store, embedder, {i.content_hash: i.text for i in inputs})
    vectors = np.stack([cached[i.content_hash] for i in inputs])
    store.store_embeddings(scope, target, inputs, vectors)  # type: ignore[arg-type]
    report.embedded += fresh
    report.reused += len(inputs) - fresh


def vectors_by_hash(store: Store, embedder: Embedder, texts: dict[str, str]) -> tuple[dict[str, np.ndarray], int]:
    """Vectors for texts keyed by content hash: from the store's vector cache, the missing ones embedded
    in one model call and cached. Also returns how many were embedded."""
    cached = store.cached_vectors(list(texts))
    missing = {h: text for h, text in texts.items() if h not in cached}
    if missing:
        fresh = np.asarray(embedder.embed(list(missing.values())), dtype=np.float32)
        store.cache_vectors(list(missing), fresh)
        cached.update(zip(missing, fresh))
    return cached, len(missing)
