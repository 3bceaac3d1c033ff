"""The extractor contract and registry: one function per input kind, registered by MIME type.

An extractor turns an input's bytes into text with provenance: either a whole markdown or plain
text (chunked by headings or paragraphs) or pre-segmented units (pages, transcript segments,
code symbols, records) each with its locator. It raises `BadInputError` with a reason a person
can act on when the input cannot be read; a second registration for a MIME type is refused.
"""

from __future__ import annotations

import importlib
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError


@dataclass(frozen=True)
class TextUnit:
    """A piece of an input and its place there: a page, a segment, a symbol, a record."""

    text: str
    locator: dict[str, Any]
    context: str | None = None  # indexed for BM25 with the unit (a heading path, a symbol's signature)
    split: Literal["prose", "lines"] = "prose"  # how to cut it under the token cap; code keeps its lines


@dataclass(frozen=True)
class Attachment:
    """An input inside an input (a mail attachment), handed back to the registry."""

    name: str
    data: bytes
    mime: str | None = None


@dataclass(frozen=True)
class Extracted:
    mime: str
    title: str
    layout: Literal["markdown", "plain", "units"]
    text: str = ""
    units: list[TextUnit] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    # set when an input holds no text and that is an answer, not a fault (a photo without words):
    # the document is recorded without chunks, and this reason goes into its metadata
    no_text: str | None = None


Extractor = Callable[[bytes, str, Settings], Extracted]
_REGISTRY: dict[str, Extractor] = {}
# each module registers its MIME types when imported
_EXTRACTOR_MODULES = ("audio", "code", "html", "image", "mail", "office", "pdf", "records", "text", "video")

# Types the stdlib table does not know, or maps differently from one system to the next.
_EXTRA_TYPES = {
    ".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".text": "text/plain",
    ".jsonl": "application/x-ndjson", ".json": "application/json", ".csv": "text/csv",
    ".pdf": "application/pdf", ".html": "text/html", ".htm": "text/html",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".eml": "message/rfc822",
    ".wav": "audio/wav", ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".ogg": "audio/ogg",
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".tif": "image/tiff",
    ".tiff": "image/tiff", ".gif": "image/gif",
    ".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/quicktime", ".mkv": "video/x-matroska",
    ".webm": "video/webm",
    ".py": "text/x-python", ".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
    ".jsx": "text/javascript", ".ts": "text/x-typescript", ".tsx": "text/x-tsx", ".go": "text/x-go",
    ".rs": "text/x-rust", ".java": "text/x-java",
}


def register(*mimes: str) -> Callable[[Extractor], Extractor]:
    def wrap(fn: Extractor) -> Extractor:
        for mime in mimes:
            if mime in _REGISTRY:
                raise ValueError(f"an extractor for {mime} is already registered ({_REGISTRY[mime].__name__})")
            _REGISTRY[mime] = fn
        return fn

    return wrap


@cache
def _load_extractors() -> None:
    """Import the extractor modules the first time one is asked for: a command that only searches
    never pays for pymupdf, trafilatura or tree-sitter (about a second of its start)."""
    for name in _EXTRACTOR_MODULES:
        importlib.import_module(f"mnemoflow.extractors.{name}")


def mime_for(path: Path | str) -> str:
    name = Path(path).name
    return (_EXTRA_TYPES.get(Path(name).suffix.lower()) or mimetypes.guess_type(name)[0]
            or "application/octet-stream")


def extractor_for(mime: str) -> Extractor:
    _load_extractors()
    try:
        return _REGISTRY[mime]
    except KeyError:
        raise BadInputError(f"no extractor for {mime}") from None


def supported_mimes() -> list[str]:
    _load_extractors()
    return sorted(_REGISTRY)


def supported_suffixes() -> set[str]:
    """File endings that map to a registered extractor (what a directory scan picks up)."""
    _load_extractors()
    return {suffix for suffix, mime in _EXTRA_TYPES.items() if mime in _REGISTRY}


def supported_kinds() -> dict[str, list[str]]:
    """What the registry reads, as a person asks for it: each registered MIME type with its file endings
    (sorted), for help texts that stay true as extractors are added."""
    _load_extractors()
    kinds: dict[str, list[str]] = {}
    for suffix, mime in sorted(_EXTRA_TYPES.items()):
        if mime in _REGISTRY:
            kinds.setdefault(mime, []).append(suffix)
    return dict(sorted(kinds.items(), key=lambda kind: kind[1][0]))
