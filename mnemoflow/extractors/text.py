"""Markdown and plain text: strict UTF-8 (a BOM is fine), never empty."""

from __future__ import annotations

import re

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.registry import Extracted, register


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_BLOCK_SYNTAX = re.compile(r"^([ \t]*)(?=#{1,6}\s|```|~~~)", re.MULTILINE)  # what the chunker acts on


def escape_markdown_blocks(text: str) -> str:
    """Text that is not markdown, made safe to put in markdown: a line that would read as a heading
    or a code fence gets a backslash, so the chunker does not cut a section or a fence there."""
    return _BLOCK_SYNTAX.sub(r"\1\\", text)


def without_lone_surrogates(text: str) -> str:
    """Half a surrogate pair (raw bytes quoted by a library, a JSON escape like \\ud800) cannot be
    encoded as UTF-8, so cannot be hashed or stored; it reads as U+FFFD, as a bad byte does."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def decode_utf8(data: bytes) -> str:
    """Strict UTF-8; a clear error with the offending offset otherwise."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}") from None
    if "\x00" in text:
        raise BadInputError("binary content: NUL bytes in a text file")
    return text


def _require_text(text: str) -> str:
    if not text.strip():
        raise BadInputError("empty file: no text to ingest")
    return text


@register("text/markdown")
def extract_markdown(data: bytes, name: str, settings: Settings) -> Extracted:
    text = _require_text(decode_utf8(data))
    heading = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.MULTILINE)
    return Extracted(mime="text/markdown", title=heading.group(1) if heading else name, layout="markdown", text=text)


@register("text/plain")
def extract_plain_text(data: bytes, name: str, settings: Settings) -> Extracted:
    return Extracted(mime="text/plain", title=name, layout="plain", text=_require_text(decode_utf8(data)))
