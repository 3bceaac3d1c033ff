"""The content-addressed vector cache: appended to (a key two writers missed at once is held twice)
and read whole, with the vectors this process used last kept at hand."""

from __future__ import annotations

import numpy as np

from mnemoflow.embedding.base import normalize
from mnemoflow.service import MemoryService


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
