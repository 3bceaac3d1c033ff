"""PDF: one unit per page with text, located by its 1-based page number.

MuPDF repairs broken files quietly and returns what it could read, so damage is looked for
here: a file cut short (it needed repair and has no end-of-file marker) and page content that
could not be decoded (MuPDF's zlib and read errors) are refused rather than ingested half-read.
A page without a text layer (a scan) is rendered at `ocr_pdf_dpi` and read with OCR (`ocr.py`), at
most `ocr_max_pages` of them per document; it is cited by its page like any other (`p. 2`) and its
locator says `ocr: true`. A PDF in which neither the text layer nor OCR finds text is refused.
Before a page is rendered its images are measured: one that declares more than `ocr_max_pixels`
(a decompression bomb) leaves the page unread and listed.

A page's content streams are measured before MuPDF reads them: a few kilobytes of Flate can inflate
to gigabytes of text operators, and MuPDF holds what it extracts (about 60 bytes per content byte).
A page past `pdf_max_page_content_bytes` is left out and listed; the other pages are read.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

import pymupdf

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.ocr import read_lines
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


def _inflated_size(doc: pymupdf.Document, xref: int, limit: int) -> int:
    """What a stream inflates to, counted (past `limit` it stops counting) without holding it.
    Only Flate is inflated here (what bombs use); other filters count at their stored size."""
    raw = doc.xref_stream_raw(xref) or b""
    _, value = doc.xref_get_key(xref, "Filter")
    if value.strip("[] ") != "/FlateDecode":
        return len(raw)
    inflater, size = zlib.decompressobj(), 0
    try:
        while raw and size <= limit:
            size += len(inflater.decompress(raw, 1 << 20))
            raw = inflater.unconsumed_tail
    except zlib.error:
        return size  # damage: MuPDF reads the page and reports it
    return size


def _content_size(doc: pymupdf.Document, page: pymupdf.Page, limit: int) -> int:
    """The page's content streams and the forms it draws, inflated (each form counted once)."""
    xrefs = [*page.get_contents(), *(xobject[0] for xobject in page.get_xobjects())]
    size = 0
    for xref in dict.fromkeys(xrefs):
        size += _inflated_size(doc, xref, limit - size)
        if size > limit:
            break
    return size


def _read_pages(doc: pymupdf.Document, settings: Settings) -> tuple[list[str], list[int]]:
    """Every page's text ("" for a page over the content limit, numbered in the second list);
    MuPDF's message store (process-wide) is read page by page for damage."""
    texts, over = [], []
    limit = settings.pdf_max_page_content_bytes
    pymupdf.TOOLS.mupdf_warnings(reset=True)
    for number in range(1, doc.page_count + 1):
        try:
            page = doc[number - 1]
            if _content_size(doc, page, limit) > limit:
                texts.append("")
                over.append(number)
                continue
            texts.append(_page_text(page))
        except (RuntimeError, IndexError, ValueError, pymupdf.mupdf.FzErrorBase) as exc:  # IndexError: a broken page tree; ValueError: a bad xref
            raise BadInputError(f"damaged PDF: page {number} cannot be read ({_message(exc)})") from None
        damage = [w for w in pymupdf.TOOLS.mupdf_warnings(reset=True).splitlines() if _DAMAGE.search(w)]
        if damage:
            raise BadInputError(f"damaged PDF: the content of page {number} is corrupt ({_message(damage[0])})")
    return texts, over


def _no_text_reason(doc: pymupdf.Document, read: int) -> str:
    with_images = sum(1 for page in doc if page.get_image_info())
    if with_images:
        return (f"no text: {with_images} of {doc.page_count} pages are images (a scan?) and OCR found no text "
                f"on the {read} it read")
    return f"no text on any of its {doc.page_count} page(s), with OCR either: blank pages"


def _largest_image(doc: pymupdf.Document, page: pymupdf.Page) -> int:
    """The most pixels any image on the page declares (what MuPDF would decode to draw it)."""
    return max((width * height for _, _, width, height, *_ in page.get_images(full=True)), default=0)


def _ocr_pages(doc: pymupdf.Document, texts: list[str], skip: set[int], settings: Settings
               ) -> tuple[set[int], list[int], list[int]]:
    """Read the pages without text (not in `skip`) with OCR, in place in `texts`; returns the pages
    read, those over the pixel limit, and those past `ocr_max_pages`."""
    from PIL import Image

    read: set[int] = set()
    over: list[int] = []
    left: list[int] = []
    for number, text in enumerate(texts, start=1):
        if text or number in skip:
            continue
        if len(read) >= settings.ocr_max_pages:
            left.append(number)
            continue
        page = doc[number - 1]
        if _largest_image(doc, page) > settings.ocr_max_pixels:
            over.append(number)
            continue
        # the page at ocr_pdf_dpi, or less where that would pass the pixel limit
        width, height = page.rect.width / 72, page.rect.height / 72
        dpi = min(settings.ocr_pdf_dpi, int((settings.ocr_max_pixels / max(width * height, 1e-6)) ** 0.5))
        try:
            pixmap = page.get_pixmap(dpi=max(dpi, 1), alpha=False)
        except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase) as exc:
            raise BadInputError(f"damaged PDF: page {number} cannot be drawn ({_message(exc)})") from None
        image = Image.frombytes("RGB", (pixmap.width, pixmap.height), pixmap.samples)
        texts[number - 1] = "\n".join(read_lines(image, settings))
        read.add(number)
    return read, over, left


@register("application/pdf")
def extract_pdf(data: bytes, name: str, settings: Settings) -> Extracted:
    with _open(data) as doc:
        _check(doc, data)
        texts, over = _read_pages(doc, settings)
        ocred, over_pixels, not_read = _ocr_pages(doc, texts, set(over), settings)
        if not any(texts) and over:
            raise BadInputError(f"content of {len(over)} of {doc.page_count} page(s) inflates past the "
                                f"{settings.pdf_max_page_content_bytes}-byte limit per page (a decompression "
                                f"bomb?), and no other page has text")
        if not any(texts) and over_pixels:
            raise BadInputError(f"{len(over_pixels)} of {doc.page_count} page(s) hold an image over the "
                                f"ocr_max_pixels limit of {settings.ocr_max_pixels} (a decompression bomb?), and no "
                                "other page has text")
        if not any(texts):
            raise BadInputError(_no_text_reason(doc, len(ocred)))
        info = doc.metadata or {}
        page_count = doc.page_count
    units = [TextUnit(text, {"page": n, "ocr": True} if n in ocred else {"page": n})
             for n, text in enumerate(texts, start=1) if text]
    first_block = units[0].text.split("\n", 1)[0]  # a block of the text layer, or a line read with OCR
    short_first = first_block if len(first_block) <= _TITLE_CHARS else ""
    title = " ".join((info.get("title") or "").split()) or short_first or name
    metadata: dict[str, Any] = {"pages": page_count}
    if info.get("author"):
        metadata["author"] = info["author"]
    if len(units) < page_count:
        metadata["pages_without_text"] = [n for n, text in enumerate(texts, start=1) if not text]
    if over:
        metadata["pages_over_content_limit"] = over
    if ocred:
        metadata["pages_read_with_ocr"] = sorted(ocred)
        metadata["ocr_engine"] = settings.ocr_engine
    if over_pixels:
        metadata["pages_over_pixel_limit"] = over_pixels
    if not_read:
        metadata["pages_not_read_with_ocr"] = not_read
    return Extracted(mime="application/pdf", title=title, layout="units", units=units, metadata=metadata)
