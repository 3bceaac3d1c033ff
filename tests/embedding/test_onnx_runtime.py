"""The ONNX Runtime embedder gives sentence-transformers' vectors, and a command that only searches
never imports torch."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mnemoflow.config import load_settings
from mnemoflow.embedding import create_embedder
from mnemoflow.embedding.local import LocalEmbedder
from mnemoflow.embedding.onnx_export import ensure_onnx_model, onnx_model_path
from mnemoflow.embedding.onnx_runtime import OnnxEmbedder, token_batches

TEXTS = [
    "Omar builds the frontend in React.",
    "we switched the frontend to Solid",
    "The staging box is 10.4.22.17",
    "Überweisung an Zoë: 4.000 € — fällig am 3. März",
    "",
    "ok",
    " ".join(["The retention policy keeps archived memories for ninety days before a hard delete."] * 30),
    *[f"Note {i}: the {'quarterly ' * (i % 7)}review of team {i} is on day {i % 28 + 1}" for i in range(70)],
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export made from scratch in an empty cache, as on a fresh machine."""
    return ensure_onnx_model(tmp_path_factory.mktemp("model-cache"))


def test_the_export_is_made_once_where_its_name_says(exported: Path) -> None:
    assert exported == onnx_model_path(exported.parent)
    # the graph and its weights beside it; no partial file left behind
    assert sorted(p.name for p in exported.parent.iterdir()) == [exported.name, f"{exported.name}.weights"]
    made = exported.stat().st_mtime_ns
    assert ensure_onnx_model(exported.parent) == exported
    assert exported.stat().st_mtime_ns == made


def test_an_earlier_single_file_export_is_converted_without_torch(exported: Path, tmp_path: Path) -> None:
    import onnx

    cache = tmp_path / "cache"
    cache.mkdir()
    single = cache / exported.name.replace("-ext.onnx", ".onnx")  # what an earlier version wrote
    onnx.save_model(onnx.load(str(exported)), str(single))  # the weights inside the graph
    converted = ensure_onnx_model(cache)
    assert converted == onnx_model_path(cache) and (cache / f"{converted.name}.weights").exists()
    texts = ["Omar builds the frontend in React.", "ok"]
    assert np.array_equal(OnnxEmbedder(converted).embed(texts), OnnxEmbedder(single).embed(texts))


def test_onnx_vectors_are_sentence_transformers_vectors(exported: Path) -> None:
    # 16 texts or 128 tokens a batch: many batches of mixed lengths, and order must survive the sort
    onnx = OnnxEmbedder(exported, batch_size=16, batch_tokens=128)
    torch = LocalEmbedder(batch_size=16)
    documents = onnx.embed(TEXTS)
    assert documents.shape == (len(TEXTS), 384)
    assert np.abs(documents - torch.embed(TEXTS)).max() < 1e-4
    assert np.allclose(np.linalg.norm(documents, axis=1), 1.0, atol=1e-5)
    query = onnx.embed_query("what does the frontend use now?")
    assert np.abs(query - torch.embed_query("what does the frontend use now?")).max() < 1e-4
    assert onnx.embed([]).shape == (0, 384)


def test_token_batches_keep_each_batch_within_its_budget() -> None:
    lengths = np.array([12, 256, 40, 3, 256, 90, 41, 7, 300])
    batches = token_batches(lengths, budget=256, cap=3)
    assert sorted(int(i) for b in batches for i in b) == list(range(len(lengths)))
    flat = [int(lengths[i]) for b in batches for i in b]
    assert flat == sorted(flat, reverse=True)  # longest first, so a batch pads to about its own length
    for batch in batches:
        padded = len(batch) * int(lengths[batch].max())
        assert len(batch) <= 3 and (padded <= 256 or len(batch) == 1)
    assert [len(b) for b in batches] == [1, 1, 1, 2, 3, 1]  # 300 | 256 | 256 | 90 41 | 40 12 7 | 3


def test_settings_choose_the_runtime(tmp_path: Path, exported: Path) -> None:
    onnx = create_embedder(load_settings(tmp_path / "home", model_cache_dir=exported.parent, embedding_batch_tokens=99))
    assert isinstance(onnx, OnnxEmbedder) and onnx.batch_tokens == 99
    assert isinstance(create_embedder(load_settings(tmp_path / "home", embedding_runtime="torch")), LocalEmbedder)


def test_a_recall_command_imports_neither_torch_nor_the_extractors(tmp_path: Path, exported: Path) -> None:
    """What keeps a cold `mnemoflow recall` short: the model runs on ONNX Runtime, and the extractors
    (pymupdf, trafilatura, tree-sitter) are imported only when something is ingested."""
    home = tmp_path / "home"
    env = {**os.environ, "MNEMOFLOW_MODEL_CACHE_DIR": str(exported.parent)}
    subprocess.run([sys.executable, "-m", "mnemoflow.cli", "add", "Alex prefers morning meetings", "--home", str(home),
                    "--tenant", "acme", "--user", "alex"], env=env, capture_output=True, timeout=300, check=True)
    script = (
        "import sys\n"
        "from mnemoflow.cli import main\n"
        "try:\n"
        f"    main(['recall', 'when does Alex meet?', '--home', {str(home)!r}, '--tenant', 'acme', '--user', 'alex'])\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "heavy = ('torch', 'sentence_transformers', 'pymupdf', 'trafilatura', 'tree_sitter', 'faster_whisper')\n"
        "print('imported:', *[name for name in heavy if name in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          check=True)
    assert "Alex prefers morning meetings" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "imported:"
