"""The content-addressed vector cache: appended to in batches (a key two writers missed at once is held
twice) and read whole, with the vectors this process used last kept at hand."""

from __future__ import annotations

import numpy as np

from mnemoflow.embedding.base import normalize
from mnemoflow.service import MemoryService
from mnemoflow.storage.vectors import UNSAVED_VECTORS
from tests.conftest import raw_vectors


def test_cached_vectors_read_every_key_however_often_it_was_cached(service: MemoryService) -> None:
    vectors = normalize(np.random.default_rng(3).normal(size=(3, service.embedder.dim)).astype(np.float32))
    service.store.cache_vectors(["a", "b"], vectors[:2])
    service.store.cache_vectors(["a"], vectors[:1])  # two writers that both missed "a"
    service.store.cache_vectors(["c"], vectors[2:])
    assert set(service.store.cached_vectors(["a", "b", "c", "d"])) == {"a", "b", "c"}
    service.close()  # the store opened next has nothing at hand: it reads LanceDB
    found = service.store.cached_vectors(["a", "b", "c", "d"])
    assert sorted(found) == ["a", "b", "c"]
    assert all(np.allclose(found[key], vector) for key, vector in zip("abc", vectors))


def test_new_cache_vectors_are_written_in_batches_and_on_close(service: MemoryService) -> None:
    """A direct add's vectors wait at hand and go to LanceDB a few dozen at a time (and when the store
    closes): one write per add would be a LanceDB version and a fragment each."""
    def in_lancedb() -> int:  # read from outside, as another process would
        db = raw_vectors(service.settings)
        return db.open_table("embedding_cache").count_rows() if "embedding_cache" in db.list_tables().tables else 0

    vectors = normalize(np.random.default_rng(5).normal(size=(UNSAVED_VECTORS, service.embedder.dim))
                        .astype(np.float32))
    service.store.cache_vectors(["first"], vectors[:1])
    assert in_lancedb() == 0 and set(service.store.cached_vectors(["first"])) == {"first"}
    service.store.cache_vectors([f"k{n}" for n in range(1, UNSAVED_VECTORS)], vectors[1:])
    assert in_lancedb() == UNSAVED_VECTORS  # the batch is full: written at once
    service.store.cache_vectors(["last"], vectors[:1])
    assert in_lancedb() == UNSAVED_VECTORS
    service.close()
    assert set(service.store.cached_vectors(["first", "k1", "last"])) == {"first", "k1", "last"}
