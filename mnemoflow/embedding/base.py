"""The `Embedder` protocol every provider implements."""

from __future__ import annotations

from typing import Protocol

import numpy as np


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


def normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
