"""Bulk work split into pieces that run anywhere: a Dask worker extracts, chunks and embeds a batch of
files with no store at hand; the process that owns the writes caches the vectors and writes the
documents in batches, so their embedding jobs find every vector already computed.

The Prefect flows in `mnemoflow.flows.bulk` fan these functions out over dask.distributed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mnemoflow.config import Settings
from mnemoflow.embedding import Embedder
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import mime_for
from mnemoflow.ingest.documents import prepare_document_file, write_in_batches
from mnemoflow.ingest.report import path_error
from mnemoflow.models import DocumentWrite, IngestErrorRecord
from mnemoflow.reports import IngestReport
from mnemoflow.storage import Scope, Store


@dataclass
class ExtractedBatch:
    """A batch of files read on a worker: their document writes, what could not be read, and the vector
    of every chunk text (by content hash)."""

    writes: list[DocumentWrite] = field(default_factory=list)
    errors: list[IngestErrorRecord] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None


def worker_embedder(settings: Settings) -> Embedder:
    """One embedder per process and model: a Dask worker loads the model once, for every batch it is given."""
    from mnemoflow.embedding import create_embedder

    key = settings.model_dump_json(include=_EMBEDDER_SETTINGS)
    with _EMBEDDERS_LOCK:
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = create_embedder(settings)
        return _EMBEDDERS[key]


_EMBEDDER_SETTINGS = {"embedding_provider", "embedding_model", "embedding_dimensions", "embedding_batch_size",
                      "embedding_batch_tokens", "embedding_runtime", "model_cache_dir", "openai_base_url"}
_EMBEDDERS: dict[str, Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def extract_files(settings: Settings, scope: Scope, paths: list[str]) -> ExtractedBatch:
    """Read, extract and chunk `paths`, and embed their chunk texts: the CPU-bound half of an ingest."""
    batch = ExtractedBatch()
    for name in paths:
        path = Path(name)
        try:
            writes, errors = prepare_document_file(settings, scope, path)
        except BadInputError as exc:
            batch.errors.append(path_error(path, mime_for(path), str(exc)))
            continue
        batch.writes += writes
        batch.errors += errors
    texts = {c.content_hash: c.text for w in batch.writes for c in w.chunks}
    if texts:
        batch.hashes = list(texts)
        batch.vectors = np.asarray(worker_embedder(settings).embed(list(texts.values())), dtype=np.float32)
    return batch


def write_extracted(store: Store, scope: Scope, batch: ExtractedBatch, report: IngestReport) -> None:
    """Cache the batch's vectors (its embedding jobs will reuse them) and write its documents."""
    if batch.vectors is not None:
        store.cache_vectors(batch.hashes, batch.vectors)
    write_in_batches(store, scope, batch.writes, actor="ingest", report=report)
    report.errors += batch.errors


def embed_texts(settings: Settings, texts: list[str]) -> np.ndarray:
    """The vectors of `texts` (a slice of a re-embedding, on a worker)."""
    return np.asarray(worker_embedder(settings).embed(texts), dtype=np.float32)
