"""PDF extraction speed (pages/s): our extractor + chunker beside pymupdf's plain text call, same files, same run.

Corpus: PDFs written by pymupdf from LoCoMo dialogue (real prose, about 350 words per A4 page in
paragraphs under a title), deterministic for the arguments. Measured, median of the repeats:

- raw: `pymupdf.open(stream=...)` and `page.get_text()` for every page, nothing else;
- ours: the registered extractor (damage checks, blocks joined into paragraphs, page units) and
  `chunk_extracted`;
- full path: `MemoryService.ingest` of a subset (discovery, extraction, DuckDB, embedding with the
  local model, LanceDB, index refresh), after a warm-up ingest, beside the embedder alone on the
  same chunk texts (embedding dominates: these chunks are ~250 tokens, not a chat turn's ~25).

    .venv/bin/python bench/extract_pdf.py --files 60 --pages 10 --ingest-files 20
"""

from __future__ import annotations

import argparse
import json
import tempfile
import textwrap
from pathlib import Path

import pymupdf
from common import LOCOMO, RESULTS, Files, median_pass_seconds, peak_rss_mb, timed_ingest

import mnemoflow.extractors.pdf  # noqa: F401  (registers application/pdf)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import load_settings
from mnemoflow.extractors import extractor_for

SETTINGS = load_settings(Path(tempfile.gettempdir()) / "mnemoflow-bench-pdf-settings")
WORDS_PER_PAGE = 350


def sentences() -> list[str]:
    rows = [json.loads(line) for line in (LOCOMO / "conversations.jsonl").read_text().splitlines() if line.strip()]
    return [f"{r['speaker']} said: {r['text']}" for r in rows if r.get("text")]


def make_pdf(lines: list[str], title: str, pages: int) -> bytes:
    """Pages of paragraphs (a few sentences each) under a title, written as a real text layer."""
    doc = pymupdf.open()
    cursor = 0
    for number in range(pages):
        page = doc.new_page()
        words, paragraphs = 0, []
        while words < WORDS_PER_PAGE:
            paragraph = " ".join(lines[(cursor + i) % len(lines)] for i in range(3))
            cursor += 3
            words += len(paragraph.split())
            paragraphs.append(textwrap.fill(paragraph, 95))
        heading = f"{title}, part {number + 1}\n\n"
        page.insert_textbox(pymupdf.Rect(50, 50, 545, 800), heading + "\n\n".join(paragraphs), fontsize=8)
    doc.set_metadata({"title": title})
    data = doc.tobytes(garbage=3, deflate=True)
    doc.close()
    return data


def corpus(files: int, pages: int) -> Files:
    lines = sentences()
    step = max(1, len(lines) // max(files, 1))
    return [(f"report-{i:03d}.pdf", make_pdf(lines[i * step:] + lines[: i * step], f"Field report {i}", pages))
            for i in range(files)]


def raw(name: str, data: bytes) -> object:
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        return [page.get_text() for page in doc]


def ours(name: str, data: bytes) -> object:
    extracted = extractor_for("application/pdf")(data, name, SETTINGS)
    return chunk_extracted("doc", extracted, SETTINGS.chunk_max_tokens)


def full_ingest(files: Files, warmup: Files, pages: int) -> dict:
    texts = [chunk.text for name, data in files for chunk in ours(name, data)]
    outcome, seconds, embed_seconds = timed_ingest(files, warmup, "pdf", texts)
    total_pages = len(files) * pages
    return {"files": len(files), "pages": total_pages, "chunks": outcome.report.chunks_added,
            "seconds": round(seconds, 2), "pages_per_s": round(total_pages / seconds, 1),
            "chunks_per_s": round(outcome.report.chunks_added / seconds, 1),
            "embedder_alone_chunks_per_s": round(len(texts) / embed_seconds, 1),
            "ratio_to_embedder_alone": round(embed_seconds / seconds, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--pages", type=int, default=10, help="pages per file")
    parser.add_argument("--ingest-files", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    files = corpus(args.files, args.pages)
    ours(*files[0])  # imports outside the timing
    pages = len(files) * args.pages
    raw_s, ours_s = median_pass_seconds(files, raw, args.repeats), median_pass_seconds(files, ours, args.repeats)
    chunks = sum(len(ours(name, data)) for name, data in files)
    warmup = corpus(1, 2)
    result = {
        "files": len(files), "pages": pages, "mb": round(sum(len(d) for _, d in files) / 1e6, 2),
        "repeats": args.repeats, "chunks": chunks,
        "raw_pages_per_s": round(pages / raw_s, 1), "ours_pages_per_s": round(pages / ours_s, 1),
        "ratio_ours_to_raw": round(raw_s / ours_s, 3),
        "full_ingest": full_ingest(files[: args.ingest_files], warmup, args.pages),
        "peak_rss_mb": round(peak_rss_mb()),
    }
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "extract_pdf.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
