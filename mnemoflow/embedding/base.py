"""The `Embedder` protocol every provider implements."""

from __future__ import annotations

from typing import Protocol

import numpy as np


# Models that were trained on English text only: their vectors of Chinese, Japanese or Korean text
# carry little meaning (all-MiniLM-L6-v2 finds 21 of 36 answers of eval/cjk at 256 tokens where BM25
# finds 36; bench/README.md, "Chinese, Japanese and Korean"), so recall leaves them out of such a query.
ENGLISH_ONLY_MODELS = frozenset({"all-MiniLM-L6-v2"})


def reads_cjk(model: str) -> bool:
    """Whether a model's vectors of Chinese, Japanese or Korean text are worth searching with."""
    return model not in ENGLISH_ONLY_MODELS


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed size."""

    model: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for documents, shape (len(texts), dim)."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """One vector for a search query, shape (dim,)."""
        ...


SMALL_BATCH = 16  # up to this many texts run on the query's threads (see ThreadedEmbedder)


class ThreadedEmbedder:
    """The local model's thread choice, for either runtime: batches use every core; a single query,
    or a handful of texts (a direct `add`'s messages or candidates), uses one thread, because on a
    busy 2-core machine two threads wait on each other: a query's p95 goes from ~15 ms to ~200 ms
    (bench/README.md), two sentences take ~300 ms instead of ~27. Subclasses encode."""

    dim: int
    _batch_threads: int
    _query_threads: int

    def _encode(self, texts: list[str], threads: int) -> np.ndarray:
        raise NotImplementedError

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._encode(texts, self._query_threads if len(texts) <= SMALL_BATCH else self._batch_threads)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([text], self._query_threads)[0]


def normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
