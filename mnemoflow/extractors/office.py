"""DOCX: Word headings become markdown headings, so chunks carry heading paths; tables become rows.

A DOCX is a zip that python-docx reads whole into memory, so the archive is checked before it is
parsed: no more than `MAX_MEMBERS` members, a total uncompressed size within
min(`MAX_UNCOMPRESSED_BYTES`, `FILE_SIZE_FACTOR` x max_file_bytes) (what parsing may cost whatever
the file limit, and in proportion to it where the limit is set low), and no member that inflates
more than `MAX_RATIO` times to over `RATIO_FLOOR_BYTES` (a zip bomb: real Word XML compresses 5-30x,
a long table of identical rows about 125x; deflate cannot exceed about 1030x).

Those sizes are what the zip's headers state, so every deflated member is also inflated here,
counted and not held, to check it holds no more than stated: zipfile reads a member by inflating
all of it in one call and cutting it to the stated size afterwards, so a 2 GiB member whose headers
claim 4 KiB cost 2.4 GB before its CRC failed.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator

import docx
from docx.document import Document
from docx.table import Table, _Row
from docx.text.paragraph import Paragraph
from lxml import etree

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.registry import Extracted, register
from mnemoflow.extractors.text import escape_markdown_blocks

DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
MAX_UNCOMPRESSED_BYTES = 100_000_000
FILE_SIZE_FACTOR = 20
MAX_RATIO = 200
RATIO_FLOOR_BYTES = 1 << 20
MAX_MEMBERS = 10_000
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .doc, and Office's encrypted container
_HEADING_STYLE = re.compile(r"Heading ([1-9])")


def uncompressed_cap(settings: Settings) -> int:
    return min(MAX_UNCOMPRESSED_BYTES, FILE_SIZE_FACTOR * settings.max_file_bytes)


_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # a zip member's local header, before its name and extra field
_LOCAL_SIGNATURE = 0x04034B50


def _holds_more_than_stated(data: bytes, member: zipfile.ZipInfo) -> bool:
    """Whether a deflated member inflates past its stated size; counted 1 MiB at a time, never held."""
    start = member.header_offset
    header = data[start : start + _LOCAL_HEADER.size]
    if len(header) < _LOCAL_HEADER.size or _LOCAL_HEADER.unpack(header)[0] != _LOCAL_SIGNATURE:
        return False  # a damaged directory: python-docx's reader reports it
    *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)  # the local header's, not the directory's
    start += _LOCAL_HEADER.size + name_length + extra_length
    pending = data[start : start + member.compress_size]
    inflater, size = zlib.decompressobj(-zlib.MAX_WBITS), 0
    try:
        while pending and size <= member.file_size:
            size += len(inflater.decompress(pending, 1 << 20))
            pending = inflater.unconsumed_tail
    except zlib.error:
        return False  # damaged data: python-docx's reader reports it
    return size > member.file_size


def check_archive(data: bytes, settings: Settings) -> None:
    """Refuse what is not a zip, or would cost far more to inflate and parse than the file's size."""
    if not data:
        raise BadInputError("empty file: no DOCX data")
    if data.startswith(_OLE_MAGIC):
        raise BadInputError("not an Office Open XML zip: a password-protected DOCX or a legacy .doc; "
                            "save it as a .docx without a password")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except zipfile.BadZipFile:
        raise BadInputError("not a DOCX: not a zip archive (truncated, or another format renamed?)") from None
    except (NotImplementedError, ValueError) as exc:  # "zip file version 8.4": a damaged directory entry
        raise BadInputError(f"corrupt DOCX: the zip directory is damaged ({exc})") from None
    if len(members) > MAX_MEMBERS:
        raise BadInputError(f"DOCX has {len(members)} zip members, over the limit of {MAX_MEMBERS}")
    total, cap = sum(m.file_size for m in members), uncompressed_cap(settings)
    if total > cap:
        raise BadInputError(f"DOCX inflates to {total} bytes, over the {cap}-byte limit (a zip bomb?)")
    for member in members:
        if member.flag_bits & 0x1:
            raise BadInputError(f"DOCX has an encrypted zip member ({member.filename})")
        if member.file_size > RATIO_FLOOR_BYTES and member.file_size > MAX_RATIO * max(member.compress_size, 1):
            ratio = member.file_size / max(member.compress_size, 1)
            raise BadInputError(f"DOCX member {member.filename} inflates {ratio:.0f}x to {member.file_size} bytes, "
                                f"over the {MAX_RATIO}x limit (a zip bomb?)")
        if member.compress_type == zipfile.ZIP_DEFLATED and _holds_more_than_stated(data, member):
            raise BadInputError(f"corrupt DOCX: member {member.filename} inflates past the {member.file_size} bytes "
                                "its zip headers state (damaged, or a zip bomb)")


def _open(data: bytes) -> Document:
    try:
        return docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:  # OSError: bz2 on a flipped method
        raise BadInputError(f"corrupt DOCX: a zip member is damaged ({exc})") from None
    except NotImplementedError as exc:  # zipfile on a damaged member header: "compression type 3", "flag bit 5"
        raise BadInputError(f"corrupt DOCX: a zip member cannot be read ({exc})") from None
    except etree.XMLSyntaxError as exc:
        raise BadInputError(f"corrupt DOCX: broken XML ({exc})") from None
    except (KeyError, ValueError) as exc:
        raise BadInputError(f"not a Word document: {exc}") from None


class _HeadingLevels:
    """Heading levels by style id, each style looked up once. `Paragraph.style` resolves a
    paragraph without a style of its own by scanning every style of the document (~4 ms), which
    made a 140,000-paragraph document take minutes; the id is read from the paragraph's XML."""

    def __init__(self) -> None:
        self.by_style: dict[str | None, int | None] = {}

    def __call__(self, paragraph: Paragraph) -> int | None:
        style_id = paragraph._p.style  # w:pPr/w:pStyle/@w:val, None for the default style
        if style_id not in self.by_style:
            self.by_style[style_id] = _heading_level(paragraph)
        return self.by_style[style_id]


def _heading_level(paragraph: Paragraph) -> int | None:
    """0 for Title, n for Heading n; a custom style based on a heading style is a heading too."""
    style = paragraph.style
    for _ in range(4):
        if style is None:
            return None
        if style.name == "Title":
            return 0
        if match := _HEADING_STYLE.fullmatch(style.name or ""):
            return int(match.group(1))
        style = style.base_style
    return None


def _row_line(row: _Row) -> str:
    """Cells joined by " | "; a cell spanning several grid columns is listed by python-docx once
    per column, and written once."""
    cells, texts, i = row.cells, [], 0
    while i < len(cells):
        texts.append(" ".join(cells[i].text.split()))
        i += max(cells[i].grid_span, 1)
    return " | ".join(texts) if any(texts) else ""


def _blocks(document: Document) -> Iterator[tuple[str | None, str]]:
    """The body in order, as (heading text or None, markdown) blocks. A Title is the root of the
    heading path (#) with Heading n under it, as in a markdown file; without one Heading 1 is #."""
    items = list(document.iter_inner_content())
    level_of = _HeadingLevels()
    levels = [None if isinstance(item, Table) else level_of(item) for item in items]
    shift = 1 if 0 in levels else 0
    for item, level in zip(items, levels):
        if isinstance(item, Table):
            text = "\n".join(line for line in map(_row_line, item.rows) if line)
        elif level is not None and (heading := " ".join(item.text.split())):
            yield heading, f"{'#' * min(level + shift, 6)} {heading}"
            continue
        else:
            text = "\n".join(line.rstrip() for line in item.text.strip().splitlines())
        if text:
            yield None, escape_markdown_blocks(text)


@register(DOCX_MIME)
def extract_docx(data: bytes, name: str, settings: Settings) -> Extracted:
    check_archive(data, settings)
    document = _open(data)
    blocks = list(_blocks(document))
    if all(heading for heading, _ in blocks):
        raise BadInputError("empty document: no text in this DOCX")
    properties = document.core_properties
    first_heading = next((heading for heading, _ in blocks if heading), None)
    title = " ".join((properties.title or "").split()) or first_heading or name
    metadata = {"author": properties.author} if properties.author else {}
    text = "\n\n".join(block for _, block in blocks)
    return Extracted(mime=DOCX_MIME, title=title, layout="markdown", text=text, metadata=metadata)
