"""PDF: one unit per page with text, located by its 1-based page number.

MuPDF repairs broken files quietly and returns what it could read, so damage is looked for
here: a file cut short (it needed repair and has no end-of-file marker) and page content that
could not be decoded (MuPDF's zlib and read errors) are refused rather than ingested half-read.
Pages without a text layer are not OCRed; a PDF with no text at all is refused with that reason.
"""

from __future__ import annotations

import re
from typing import Any

import pymupdf

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.registry import Extracted, TextUnit, register
from mnemoflow.extractors.text import without_lone_surrogates

# Ligatures expanded to letters; an unmapped glyph reads as U+FFFD and is dropped below.
_TEXT_FLAGS = pymupdf.TEXT_MEDIABOX_CLIP
# MuPDF's messages (it warns and carries on) when a page's content stream is damaged.
_DAMAGE = re.compile(r"zlib error|read error|premature end of data|unknown filter|cannot load object")
_HYPHEN_BREAK = re.compile(r"(?<=[a-z])-\n(?=[a-z])")
_SPACES = re.compile(r"\s+")
_TITLE_CHARS = 120  # a longer first paragraph is prose, not a title; the file name is used


def _block_text(text: str) -> str:
    """A text block is a paragraph: words broken at a line end are joined, lines become spaces."""
    return _SPACES.sub(" ", _HYPHEN_BREAK.sub("", text.replace("\ufffd", ""))).strip()


def _page_text(page: pymupdf.Page) -> str:
    blocks = page.get_text("blocks", flags=_TEXT_FLAGS)
    return "\n\n".join(p for p in (_block_text(b[4]) for b in blocks if b[6] == 0) if p)


def _message(detail: object) -> str:
    """MuPDF's messages quote names from the file: raw bytes that reach Python as lone surrogates."""
    return without_lone_surrogates(str(detail))


def _truncated(data: bytes) -> BadInputError | None:
    """A PDF ends with an end-of-file marker; without it MuPDF reads what it can find."""
    if b"%PDF-" in data[:1024] and b"%%EOF" not in data[-1024:]:
        return BadInputError("truncated PDF: the file ends before its end-of-file marker (an incomplete "
                             "download or copy?)")
    return None


def _open(data: bytes) -> pymupdf.Document:
    try:
        return pymupdf.open(stream=data, filetype="pdf")
    except pymupdf.EmptyFileError:
        raise BadInputError("empty file: no PDF data") from None
    except pymupdf.FileDataError as exc:
        reason = f"not a readable PDF (corrupt, or not a PDF): {_message(exc)}"
        raise _truncated(data) or BadInputError(reason) from None


def _check(doc: pymupdf.Document, data: bytes) -> None:
    if doc.needs_pass:
        raise BadInputError("encrypted PDF: it needs a password to open; ingest a copy saved without one")
    if doc.is_repaired and (truncated := _truncated(data)):
        raise truncated
    if doc.page_count == 0:
        raise BadInputError("PDF has no pages")


def _read_pages(doc: pymupdf.Document) -> list[str]:
    """Every page's text; MuPDF's message store (process-wide) is read page by page for damage."""
    texts = []
    pymupdf.TOOLS.mupdf_warnings(reset=True)
    for number in range(1, doc.page_count + 1):
        try:
            texts.append(_page_text(doc[number - 1]))
        except (RuntimeError, IndexError, pymupdf.mupdf.FzErrorBase) as exc:  # IndexError: a broken page tree
            raise BadInputError(f"damaged PDF: page {number} cannot be read ({_message(exc)})") from None
        damage = [w for w in pymupdf.TOOLS.mupdf_warnings(reset=True).splitlines() if _DAMAGE.search(w)]
        if damage:
            raise BadInputError(f"damaged PDF: the content of page {number} is corrupt ({_message(damage[0])})")
    return texts


def _no_text_reason(doc: pymupdf.Document) -> str:
    with_images = sum(1 for page in doc if page.get_image_info())
    if with_images:
        return (f"no text layer: {with_images} of {doc.page_count} pages are images (a scan?); "
                "OCR is not configured")
    return f"no text on any of its {doc.page_count} page(s): blank, or the text is drawn as shapes"


@register("application/pdf")
def extract_pdf(data: bytes, name: str, settings: Settings) -> Extracted:
    with _open(data) as doc:
        _check(doc, data)
        texts = _read_pages(doc)
        if not any(texts):
            raise BadInputError(_no_text_reason(doc))
        info = doc.metadata or {}
        page_count = doc.page_count
    units = [TextUnit(text, {"page": n}) for n, text in enumerate(texts, start=1) if text]
    first_block = units[0].text.split("\n\n", 1)[0]
    short_first = first_block if len(first_block) <= _TITLE_CHARS else ""
    title = " ".join((info.get("title") or "").split()) or short_first or name
    metadata: dict[str, Any] = {"pages": page_count}
    if info.get("author"):
        metadata["author"] = info["author"]
    if len(units) < page_count:
        metadata["pages_without_text"] = [n for n, text in enumerate(texts, start=1) if not text]
    return Extracted(mime="application/pdf", title=title, layout="units", units=units, metadata=metadata)
