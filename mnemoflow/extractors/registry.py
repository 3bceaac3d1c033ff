"""Extractors registered by MIME type; a second registration for a type is refused."""

from __future__ import annotations

import mimetypes
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemoflow.errors import BadInputError


@dataclass(frozen=True)
class Extracted:
    """Text pulled out of one input, with what the chunker and citations need."""

    text: str
    mime: str
    title: str
    metadata: dict[str, Any] = field(default_factory=dict)


Extractor = Callable[[bytes, str], Extracted]
_REGISTRY: dict[str, Extractor] = {}

# Types the stdlib table does not know (or maps differently on some systems).
_EXTRA_TYPES = {".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".text": "text/plain",
                ".jsonl": "application/x-ndjson", ".json": "application/json"}


def register(*mimes: str) -> Callable[[Extractor], Extractor]:
    def wrap(fn: Extractor) -> Extractor:
        for mime in mimes:
            if mime in _REGISTRY:
                raise ValueError(f"an extractor for {mime} is already registered ({_REGISTRY[mime].__name__})")
            _REGISTRY[mime] = fn
        return fn

    return wrap


def mime_for(path: Path) -> str:
    return _EXTRA_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def extractor_for(mime: str) -> Extractor:
    try:
        return _REGISTRY[mime]
    except KeyError:
        raise BadInputError(f"no extractor for {mime}") from None


def supported_mimes() -> list[str]:
    return sorted(_REGISTRY)
