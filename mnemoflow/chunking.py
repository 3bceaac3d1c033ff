"""Chunkers: headings for markdown, paragraphs for plain text, turn windows for conversations.

Every chunk stays under a token cap (tokens = ceil(chars / 4), the budget rule
recall packs by) and has a deterministic id: the same document, position and
content always give the same chunk id, so re-ingesting writes nothing.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from mnemoflow.extractors.registry import Extracted, TextUnit
from mnemoflow.models import ChunkRecord, TurnRecord
from mnemoflow.scoring import fast_score


def token_count(text: str) -> int:
    return math.ceil(len(text) / 4)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def chunk_id(document_id: str, ordinal: int, content_hash: str) -> str:
    return "chk_" + hashlib.sha256(f"{document_id}\x1f{ordinal}\x1f{content_hash}".encode()).hexdigest()[:24]


def _make_chunk(document_id: str, ordinal: int, text: str, context: str | None, locator: dict) -> ChunkRecord:
    """A chunk's identity and embedding are its text; `context` only widens what BM25 matches,
    so it can change (a conversation grows) without a new chunk or a new vector."""
    content_hash = sha256_text(text)
    return ChunkRecord(
        chunk_id=chunk_id(document_id, ordinal, content_hash), document_id=document_id, ordinal=ordinal,
        text=text, context=context, content_hash=content_hash, token_count=token_count(text), locator=locator,
        score=fast_score(text),
    )


# ---------------------------------------------------------------------- splitting under a cap
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def _hard_cuts(sentence: str, max_chars: int) -> list[str]:
    """A sentence cut at the last space before each `max_chars`, or at `max_chars` where there is
    none in the second half. Cuts move an offset, never copy the rest: a 40 MB line without a
    space or a full stop is 40,000 cuts, which re-slicing the remainder made quadratic."""
    pieces: list[str] = []
    start, end = 0, len(sentence)
    while end - start > max_chars:
        cut = sentence.rfind(" ", start, start + max_chars)
        cut = cut if cut > start + max_chars // 2 else start + max_chars
        pieces.append(sentence[start:cut].strip())
        start = cut
        while start < end and sentence[start].isspace():
            start += 1
    if start < end:
        pieces.append(sentence[start:])
    return pieces


def split_to_cap(text: str, max_tokens: int) -> list[str]:
    """Paragraphs, then sentences, then hard cuts, packed greedily up to `max_tokens` each."""
    max_chars = max_tokens * 4
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if len(paragraph) <= max_chars:
            pieces.append(paragraph)
            continue
        for sentence in SENTENCE_END.split(paragraph):
            pieces += _hard_cuts(sentence, max_chars)
    packed: list[str] = []
    for piece in pieces:
        if packed and len(packed[-1]) + 2 + len(piece) <= max_chars:
            packed[-1] = f"{packed[-1]}\n\n{piece}"
        else:
            packed.append(piece)
    return packed


def split_lines_to_cap(text: str, max_tokens: int) -> list[tuple[int, str]]:
    """Whole lines (indentation kept) packed up to `max_tokens`; returns (first line offset, piece).
    A single line over the cap is cut."""
    max_chars = max_tokens * 4
    pieces: list[tuple[int, str]] = []
    start, current = 0, ""
    for offset, line in enumerate(text.split("\n")):
        if len(line) > max_chars:  # cut by offsets: re-slicing the rest of a long line is quadratic
            if current:
                pieces.append((start, current))
                current = ""
            whole = (len(line) - 1) // max_chars * max_chars  # what is cut off; at most max_chars stay
            pieces += [(offset, line[i : i + max_chars]) for i in range(0, whole, max_chars)]
            line = line[whole:]
        if not current:
            start, current = offset, line
        elif len(current) + 1 + len(line) <= max_chars:
            current = f"{current}\n{line}"
        else:
            pieces.append((start, current))
            start, current = offset, line
    if current.strip():
        pieces.append((start, current))
    return [(o, p) for o, p in pieces if p.strip()]


# ---------------------------------------------------------------------- markdown and plain text
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class _Section:
    path: list[str]
    lines: list[str]


def _markdown_sections(text: str) -> Iterator[_Section]:
    """Sections by heading; a heading's path is the open headings of lower levels and itself, so
    headings that skip a level (a page whose first heading is ####) stay siblings."""
    open_headings: list[tuple[int, str]] = []
    current = _Section([], [])
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading:
            yield current
            level = len(heading.group(1))
            while open_headings and open_headings[-1][0] >= level:
                open_headings.pop()
            open_headings.append((level, heading.group(2).strip()))
            current = _Section([title for _, title in open_headings], [])
        else:
            current.lines.append(line)
    yield current


def chunk_markdown(document_id: str, text: str, max_tokens: int) -> list[ChunkRecord]:
    """One or more chunks per heading section; the heading path is the locator and the context."""
    chunks: list[ChunkRecord] = []
    for section in _markdown_sections(text):
        body = "\n".join(section.lines).strip()
        if not body:
            continue
        context = " > ".join(section.path) or None
        for part, piece in enumerate(split_to_cap(body, max_tokens)):
            locator = {"heading_path": section.path, "part": part}
            chunks.append(_make_chunk(document_id, len(chunks), piece, context, locator))
    return chunks


def chunk_plain_text(document_id: str, text: str, max_tokens: int) -> list[ChunkRecord]:
    chunks: list[ChunkRecord] = []
    for piece in split_to_cap(text, max_tokens):
        chunks.append(_make_chunk(document_id, len(chunks), piece, None, {"part": len(chunks)}))
    return chunks


def chunk_units(document_id: str, units: list[TextUnit], max_tokens: int) -> list[ChunkRecord]:
    """Pre-segmented units (pages, segments, symbols, records), each cut under the cap.

    A line-split unit whose locator has `lines: [first, last]` gives each piece its own range."""
    chunks: list[ChunkRecord] = []
    for unit in units:
        if unit.split == "lines":
            pieces = split_lines_to_cap(unit.text, max_tokens)
        else:
            pieces = [(0, p) for p in split_to_cap(unit.text, max_tokens)]
        for part, (offset, piece) in enumerate(pieces):
            locator = dict(unit.locator)
            if len(pieces) > 1:
                locator["part"] = part
                if unit.split == "lines" and "lines" in locator:
                    first = locator["lines"][0] + offset
                    locator["lines"] = [first, first + piece.count("\n")]
            chunks.append(_make_chunk(document_id, len(chunks), piece, unit.context, locator))
    return chunks


def chunk_extracted(document_id: str, extracted: Extracted, max_tokens: int) -> list[ChunkRecord]:
    """The chunker for an extractor's output, by its layout."""
    if extracted.layout == "markdown":
        return chunk_markdown(document_id, extracted.text, max_tokens)
    if extracted.layout == "plain":
        return chunk_plain_text(document_id, extracted.text, max_tokens)
    return chunk_units(document_id, extracted.units, max_tokens)


# ---------------------------------------------------------------------- conversations
CAPTION_KEYS = ("image_caption", "caption", "alt_text")
ChatContext = Literal["neighbours", "previous", "none"]


def turn_line(turn: TurnRecord, *, captions: bool = True) -> str:
    """How a turn reads: `speaker: text`, with a shared image's caption when there is one."""
    text = " ".join(turn.text.split())
    caption = next((turn.metadata[k] for k in CAPTION_KEYS if turn.metadata and turn.metadata.get(k)), None)
    if caption and captions:
        text = f"{text} [image: {caption}]" if text else f"[image: {caption}]"
    return f"{turn.speaker}: {text}" if turn.speaker else text


def ordered_turns(turns: list[TurnRecord]) -> list[TurnRecord]:
    return sorted(turns, key=lambda t: (t.ts is None, t.ts or 0, t.ordinal))


def day_label(ts: datetime) -> str:
    """`8 May 2023`: the date a session header and a turn's search context carry."""
    return f"{ts.day} {ts:%B %Y}"


def chunk_session(
    document_id: str, turns: list[TurnRecord], max_tokens: int, *, context: ChatContext = "neighbours",
    captions: bool = True,
) -> list[ChunkRecord]:
    """One chunk per turn; its search context is the session date and the neighbouring turns.

    A reply is usually found through the question it answers (or the remark that
    follows it), so BM25 indexes a turn together with its neighbours; the chunk
    shows, embeds and cites the turn alone (bench/README.md has the measurements).
    """
    ordered = ordered_turns(turns)
    lines = [turn_line(t, captions=captions) for t in ordered]
    chunks: list[ChunkRecord] = []
    for i, turn in enumerate(ordered):
        around: list[str] = []
        if context != "none":
            if turn.ts is not None:
                around.append(f"[{day_label(turn.ts)}]")
            if i > 0:
                around.append(lines[i - 1])
            if context == "neighbours" and i + 1 < len(ordered):
                around.append(lines[i + 1])
        locator = {
            "session_id": turn.session_id,
            "turns": [{"turn_id": turn.turn_id, "ts": turn.ts.isoformat() if turn.ts else None,
                       "speaker": turn.speaker}],
        }
        for part, piece in enumerate(split_to_cap(lines[i], max_tokens) or [lines[i]]):
            chunks.append(_make_chunk(document_id, len(chunks), piece, "\n".join(around) or None,
                                      dict(locator, part=part)))
    return chunks
