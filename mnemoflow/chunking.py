"""Chunkers: headings for markdown, paragraphs for plain text, turn windows for conversations.

Every chunk stays under a token cap (`tokens.token_count`: ceil(chars / 4), a CJK character
about a token; the budget rule recall packs by) and has a deterministic id: the same document,
position and content always give the same chunk id, so re-ingesting writes nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from mnemoflow.extractors.registry import Extracted, TextUnit
from mnemoflow.models import ChunkRecord, TurnRecord
from mnemoflow.scoring import fast_score
from mnemoflow.tokens import budget_units, prefix_within, token_count, units

__all__ = ["token_count"]  # re-exported: the one way to count tokens lives in mnemoflow.tokens


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
# English-like sentences end at . ! ? before a space and a capital, a digit, a quote or hangul (Korean
# ends its sentences the same way); Chinese and Japanese at 。！？ with or without a space after, unless
# a closing quote or bracket follows (then after that).
SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[\uac00-\ud7a3])|(?<=[。！？])(?![」』）\)”’。！？])\s*"
    r"|(?<=[。！？][」』）”’])\s*")


def _hard_cuts(sentence: str, max_units: int) -> list[str]:
    """A sentence cut at the last space before each `max_units`, or at `max_units` where there is
    none in the second half (CJK has no spaces: it is cut where it fills the cap). Cuts move an
    offset, never copy the rest: a 40 MB line without a space or a full stop is 40,000 cuts, which
    re-slicing the remainder made quadratic."""
    pieces: list[str] = []
    start, end = 0, len(sentence)
    while units(sentence[start : start + max_units + 1]) > max_units:
        limit = prefix_within(sentence, max_units, start)
        cut = sentence.rfind(" ", start, limit)
        cut = cut if cut > start + (limit - start) // 2 else limit
        pieces.append(sentence[start:cut].strip())
        start = cut
        while start < end and sentence[start].isspace():
            start += 1
    if start < end:
        pieces.append(sentence[start:])
    return pieces


def split_to_cap(text: str, max_tokens: int) -> list[str]:
    """Paragraphs, then sentences, then hard cuts, packed greedily up to `max_tokens` each."""
    max_units = budget_units(max_tokens)
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if units(paragraph) <= max_units:
            pieces.append(paragraph)
            continue
        for sentence in SENTENCE_END.split(paragraph):
            if sentence.strip():
                pieces += _hard_cuts(sentence, max_units)
    packed: list[str] = []
    sizes: list[int] = []
    for piece in pieces:
        size = units(piece)
        if packed and sizes[-1] + 2 + size <= max_units:
            packed[-1] = f"{packed[-1]}\n\n{piece}"
            sizes[-1] += 2 + size
        else:
            packed.append(piece)
            sizes.append(size)
    return packed


def split_lines_to_cap(text: str, max_tokens: int) -> list[tuple[int, str]]:
    """Whole lines (indentation kept) packed up to `max_tokens`; returns (first line offset, piece).
    A single line over the cap is cut."""
    max_units = budget_units(max_tokens)
    pieces: list[tuple[int, str]] = []
    start, current, size = 0, "", 0
    for offset, line in enumerate(text.split("\n")):
        if units(line) > max_units:  # cut by offsets: re-slicing the rest of a long line is quadratic
            if current:
                pieces.append((start, current))
                current = ""
            at = 0
            while units(line[at : at + max_units + 1]) > max_units:
                cut = prefix_within(line, max_units, at)
                pieces.append((offset, line[at:cut]))
                at = cut
            line = line[at:]
        if not current:
            start, current, size = offset, line, units(line)
        elif size + 1 + units(line) <= max_units:
            current = f"{current}\n{line}"
            size += 1 + units(line)
        else:
            pieces.append((start, current))
            start, current, size = offset, line, units(line)
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
                       "speaker": turn.speaker, "role": turn.role}],
        }
        for part, piece in enumerate(split_to_cap(lines[i], max_tokens) or [lines[i]]):
            chunks.append(_make_chunk(document_id, len(chunks), piece, "\n".join(around) or None,
                                      dict(locator, part=part)))
    return chunks
