"""Hostile inputs users meet, written at full size (bench/hostile_input.py measures them) or small
(tests/test_hostile_inputs.py checks the outcome in the default suite).

Each case is one file: an input that costs far more to read than its size suggests (zip, PDF and
audio bombs, a file that claims gigabytes, nesting, one enormous line or row) or that is not what its
name says (binary as text, invalid UTF-8). `expect` is what ingest must make of it: "refused" (one
`ingest_errors` row whose reason matches `reason`) or "ingested". A small case keeps the mechanism
of the full one (the same check refuses it); a sparse file is full size either way, since it costs
nothing to write or to refuse.

Big files are written streaming or sparse: no generator holds more than a few MiB.
"""

from __future__ import annotations

import io
import json
import os
import random
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal

import docx
import pymupdf

MiB, GiB = 1 << 20, 1 << 30
WORDS = ("sync export notebook conflict merge history device offline release team note audit backup "
         "restore archive index search query shard replica vault token schedule window report").split()


@dataclass(frozen=True)
class Case:
    name: str  # also the file name
    what: str  # one line for the bench's table
    make: Callable[[Path, bool], None]  # (path, small) -> writes the file
    expect: Literal["refused", "ingested"]
    reason: str = ""  # a regular expression the ingest_errors reason must match
    cheap: bool = True  # its small version belongs in the default test suite


# ---------------------------------------------------------------------- helpers
def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def write_sparse(path: Path, head: bytes, size: int) -> None:
    """`head`, then a hole up to `size` bytes: the file claims the size and costs no disk."""
    path.write_bytes(head)
    with path.open("r+b") as handle:
        handle.truncate(size)


def deflate_stream(parts: Callable[[], Iterable[bytes]], level: int = 9) -> bytes:
    """zlib-compress what `parts` yields, holding only the compressed output."""
    compressor = zlib.compressobj(level)
    out = [compressor.compress(part) for part in parts()]
    return b"".join(out) + compressor.flush()


def small_docx(text: str = "The quarterly audit moved to the second week of October.") -> bytes:
    document = docx.Document()
    document.add_heading("Audit schedule", 1)
    document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def docx_members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def zeros_member(archive: zipfile.ZipFile, name: str, size: int) -> None:
    """A member of `size` zero bytes, written 1 MiB at a time (about 1 KiB of zip per MiB)."""
    block = bytes(MiB)
    with archive.open(name, "w", force_zip64=True) as member:
        for _ in range(size // MiB):
            member.write(block)


def bomb_zip(size: int, name: str = "data.bin") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        zeros_member(archive, name, size)
    return buffer.getvalue()


# ---------------------------------------------------------------------- office
def docx_bomb(path: Path, small: bool) -> None:
    """word/document.xml inflates to 2 GiB (8 MiB small: the ratio check, not the total, refuses it)."""
    size = 8 * MiB if small else 2 * GiB
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in docx_members(small_docx()).items():
            if name != "word/document.xml":
                archive.writestr(name, data)
        zeros_member(archive, "word/document.xml", size)


def docx_understated_bomb(path: Path, small: bool) -> None:
    """The bomb with its zip headers claiming 4 KiB: a reader trusting them must stop, not inflate.
    Only the headers are patched (the local header of document.xml and the central directory),
    never the compressed data, which can hold the same bytes."""
    size = 8 * MiB if small else 2 * GiB
    docx_bomb(path, small)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        member = archive.getinfo("word/document.xml")
        central = archive.start_dir
    local = slice(member.header_offset, member.header_offset + 30 + len(member.filename) + len(member.extra))
    for region in (local, slice(central, len(data))):
        part = bytes(data[region])
        for width in (8, 4):
            part = part.replace(size.to_bytes(width, "little"), (4096).to_bytes(width, "little"))
        data[region] = part
    path.write_bytes(bytes(data))


def docx_nested_zips(path: Path, small: bool) -> None:
    """A zip of zips of zips (42.zip's shape) named .docx: 16 x 16 leaves of 1 GiB each."""
    leaf = bomb_zip(8 * MiB if small else GiB)
    fan = 4 if small else 16
    middle = io.BytesIO()
    with zipfile.ZipFile(middle, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(fan):
            archive.writestr(f"leaf{n}.zip", leaf)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(fan):
            archive.writestr(f"part{n}.zip", middle.getvalue())


def docx_embedded_bomb(path: Path, small: bool) -> None:
    """A real DOCX carrying an embedded zip bomb (an attached package, stored): the document is
    readable and nothing needs to open the package."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in docx_members(small_docx()).items():
            archive.writestr(name, data)
        archive.writestr(zipfile.ZipInfo("word/embeddings/package.zip"), bomb_zip(8 * MiB if small else 2 * GiB))


def docx_billion_laughs(path: Path, small: bool) -> None:
    """document.xml declares entities that expand to 10^9 'lol's if a parser resolves them."""
    members = docx_members(small_docx())
    entities = ['<!ENTITY lol0 "lol">'] + [f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10)]
    xml = members["word/document.xml"].decode()
    head, body = xml.split("?>", 1) if xml.startswith("<?xml") else ("", xml)
    doctype = "<!DOCTYPE w:document [" + "".join(entities) + "]>"
    body = body.replace("The quarterly audit", "&lol9; The quarterly audit", 1)
    members["word/document.xml"] = ((head + "?>" if head else "") + doctype + body).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def docx_large_valid(path: Path, small: bool) -> None:
    """A real, very long DOCX: document.xml of about 95 MB in 140,000 paragraphs (about 9 MB of
    zip), just under the uncompressed cap. Valid: read within bounds or refused for its size."""
    rng = random.Random(5)
    paragraphs = 2_000 if small else 140_000
    members = docx_members(small_docx())
    xml = members["word/document.xml"].decode()
    start, end = xml.index("<w:body>") + len("<w:body>"), xml.index("<w:sectPr")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            if name != "word/document.xml":
                archive.writestr(name, data)
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            member.write(xml[:start].encode())
            for n in range(paragraphs):
                if n % 500 == 0:
                    member.write(f'<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Part {n // 500}'
                                 f"</w:t></w:r></w:p>".encode())
                member.write(f"<w:p><w:r><w:t>{prose(rng, 80)}</w:t></w:r></w:p>".encode())
            member.write(xml[end:].encode())


# ---------------------------------------------------------------------- html
def html_nested(path: Path, small: bool) -> None:
    depth = 100_000
    path.write_bytes(b"<html><body>" + b"<div>" * depth + b"<p>Buried.</p>" + b"</div>" * depth + b"</body></html>")


def html_large_valid(path: Path, small: bool) -> None:
    """A 45 MB page (about 1.2 million elements): navigation, then sections of paragraphs."""
    rng = random.Random(6)
    sections = 20 if small else 9_000
    with path.open("w") as out:
        out.write("<!doctype html><html><head><meta charset='utf-8'><title>Archive</title></head><body>"
                  "<nav><a href='/'>Home</a> <a href='/a'>About</a></nav><main><h1>Archive</h1>")
        for n in range(sections):
            out.write(f"<h2>Section {n}</h2>")
            for _ in range(10):
                out.write(f"<p>{prose(rng, 70)} <a href='/s/{n}'>more</a></p>")
        out.write("</main><footer>All rights reserved</footer></body></html>")


# ---------------------------------------------------------------------- size claims and binary content
def sparse(suffix: str, head: bytes) -> Callable[[Path, bool], None]:
    def make(path: Path, small: bool) -> None:
        write_sparse(path, head, 2 * GiB)

    make.__doc__ = f"a {suffix} file that is 2 GiB long and almost all hole"
    return make


def text_size(path: Path, small: bool) -> int:
    """8 MiB, or just under the 1 MB cap on source files for code; 64 KiB small."""
    return 64 * 1024 if small else 900_000 if path.suffix == ".py" else 8 * MiB


def binary(path: Path, small: bool) -> None:
    """Random bytes under a text name."""
    path.write_bytes(random.Random(path.suffix).randbytes(text_size(path, small)))


def nul_bytes(path: Path, small: bool) -> None:
    """All zeros: valid UTF-8, but NUL bytes are binary content."""
    path.write_bytes(bytes(64 * 1024 if small else 8 * MiB))


def invalid_utf8(path: Path, small: bool) -> None:
    """Valid text in the file's format, then one byte that is not UTF-8."""
    rng = random.Random(7)
    lines, size, n = [], 0, 0
    while size < text_size(path, small):
        text = prose(rng, 12)
        line = {
            ".py": f"NOTE_{n} = '{text}'\n",
            ".jsonl": json.dumps({"session_id": "s", "turn_id": str(n), "speaker": "Ada",
                                  "ts": "2024-06-11T09:00:00Z", "text": text}) + "\n",
            ".md": f"## Note {n}\n\n{text}\n\n" if n % 20 == 0 else f"{text}\n\n",
        }.get(path.suffix, f"{text}\n")
        lines.append(line)
        size, n = size + len(line), n + 1
    path.write_bytes("".join(lines).encode() + b"caf\xe9\n")


# ---------------------------------------------------------------------- pdf
def pdf_pages(path: Path, small: bool) -> None:
    """5,000 pages of a few paragraphs each (200 small)."""
    rng = random.Random(8)
    doc = pymupdf.open()
    for n in range(200 if small else 5_000):
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(50, 50, 545, 800), f"Page {n + 1}\n\n" + prose(rng, 150), fontsize=10)
    doc.save(path, garbage=3, deflate=True)
    doc.close()


def _pdf_with_stream(path: Path, content: bytes, image: bytes | None = None) -> None:
    """A one-page PDF whose page content is `content`, already Flate-compressed; with `image`, the
    page draws a Flate-compressed 8-bit grey image of 40000 x (len // 40000) pixels."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "x")  # a font resource the content can use
    xref = page.get_contents()[0]
    doc.update_stream(xref, content, compress=False)
    doc.xref_set_key(xref, "Filter", "/FlateDecode")
    if image is not None:
        image_xref = doc.get_new_xref()
        doc.update_object(image_xref, "<< /Type /XObject /Subtype /Image /Width 40000 /Height 40000 "
                                      "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode >>")
        doc.update_stream(image_xref, image, compress=False)
        doc.xref_set_key(image_xref, "Filter", "/FlateDecode")
        resources = doc.xref_get_key(page.xref, "Resources")
        if resources[0] == "xref":
            doc.xref_set_key(int(resources[1].split()[0]), "XObject", f"<< /Im1 {image_xref} 0 R >>")
        else:
            doc.xref_set_key(page.xref, "Resources/XObject", f"<< /Im1 {image_xref} 0 R >>")
    doc.save(path)
    doc.close()


def pdf_text_bomb(path: Path, small: bool) -> None:
    """A page whose content stream inflates to 1 GiB (9 MiB small: past the 8 MB page limit) of text operators:
    about a billion characters from a 2 MB file."""
    size = 9 * MiB if small else GiB
    block = b"(" + b"A" * 1000 + b") Tj\n"

    def parts() -> Iterator[bytes]:
        yield b"BT /F0 1 Tf 0 0 Td\n"
        for _ in range(size // len(block)):
            yield block
        yield b"ET\n"

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "x")
    font = next(iter(page.get_fonts()))[4]
    content = deflate_stream(lambda: (p.replace(b"/F0", f"/{font}".encode()) for p in parts()))
    doc.close()
    _pdf_with_stream(path, content)


def pdf_image_bomb(path: Path, small: bool) -> None:
    """A page with no text and one image of 40000 x 40000 grey pixels (1.6 GB decoded; the small
    one declares the same size and holds 1 MiB) in about 1.6 MB: a scan-like page that a reader must
    not decode to say it has no text."""
    size = MiB if small else 40_000 * 40_000
    image = deflate_stream(lambda: (bytes(min(MiB, size - done)) for done in range(0, size, MiB)))
    _pdf_with_stream(path, zlib.compress(b"q 400 0 0 400 0 0 cm /Im1 Do Q\n"), image)


# ---------------------------------------------------------------------- mail, records, text
def eml_huge_attachment(path: Path, small: bool) -> None:
    """A mail with a 30 MB attachment (base64, 40 MB of mail; 1 MB small) of a type nobody reads."""
    message = EmailMessage()
    message["From"], message["To"] = "ops@example.org", "team@example.org"
    message["Subject"], message["Date"] = "Nightly backup", "Tue, 11 Jun 2024 09:30:00 +0000"
    message.set_content("The nightly backup is attached; restore it with the usual script.\n")
    payload = random.Random(9).randbytes(MiB if small else 30 * MiB)
    message.add_attachment(payload, maintype="application", subtype="octet-stream", filename="backup.tar")
    path.write_bytes(message.as_bytes())


def eml_many_attachments(path: Path, small: bool) -> None:
    """A mail with 10,000 small text attachments (200 small): each becomes a document of its own."""
    message = EmailMessage()
    message["From"], message["To"] = "ops@example.org", "team@example.org"
    message["Subject"], message["Date"] = "Daily reports", "Tue, 11 Jun 2024 09:30:00 +0000"
    message.set_content("One report per site is attached.\n")
    rng = random.Random(12)
    for n in range(200 if small else 10_000):
        message.add_attachment(f"Site {n}: {prose(rng, 20)}\n".encode(), maintype="text", subtype="plain",
                               filename=f"site-{n}.txt")
    path.write_bytes(message.as_bytes())


def jsonl_huge_line(size: int, small_size: int) -> Callable[[Path, bool], None]:
    def make(path: Path, small: bool) -> None:
        text = prose(random.Random(10), 12)
        words = " ".join([text] * ((small_size if small else size) // (len(text) + 1)))
        path.write_text(json.dumps({"session_id": "long", "turn_id": "1", "speaker": "Ada",
                                    "ts": "2024-06-11T09:00:00Z", "text": words}) + "\n")

    make.__doc__ = "a transcript whose one turn is a single line of the given size"
    return make


LONE_SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff", "key \ud83d", "\ude00 end")  # halves of a pair, alone


def count_strings(value: Any) -> int:
    """The strings in a JSON value, dict keys included (what `with_lone_surrogate` may pick)."""
    if isinstance(value, str):
        return 1
    if isinstance(value, list):
        return sum(count_strings(v) for v in value)
    if isinstance(value, dict):
        return sum(1 + count_strings(v) for v in value.values())
    return 0


def with_lone_surrogate(value: Any, pick: int, surrogate: str) -> Any:
    """A JSON value with its `pick`-th string (dict keys included, depth first) ending in `surrogate`:
    what an API must refuse wherever it sits (json.dumps sends it as its escape)."""
    counter = iter(range(count_strings(value)))

    def walk(part: Any) -> Any:
        if isinstance(part, str):
            return part + surrogate if next(counter) == pick else part
        if isinstance(part, list):
            return [walk(v) for v in part]
        if isinstance(part, dict):
            return {walk(k): walk(v) for k, v in part.items()}
        return part

    return walk(value)


def jsonl_lone_surrogate(path: Path, small: bool) -> None:
    """A transcript whose second turn escapes half a surrogate pair (JSON can, no UTF-8 text can hold it)."""
    turns = [{"session_id": "s", "turn_id": str(n), "speaker": "Ada", "ts": f"2024-06-11T09:0{n}:00Z",
              "text": f"Ada's gate code is {code}"} for n, code in enumerate(("4417", f"44{LONE_SURROGATES[0]}17"))]
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))  # ensure_ascii: the surrogate as its escape


def json_lone_surrogates(path: Path, small: bool) -> None:
    """Records whose keys and values escape lone surrogates: read, each replaced by U+FFFD."""
    path.write_text(json.dumps([{f"field{s}": f"value {s}"} for s in LONE_SURROGATES]))


def csv_columns(path: Path, small: bool) -> None:
    """A header of 1,000,000 columns (20,000 small) and two rows."""
    columns = 20_000 if small else 1_000_000
    with path.open("w") as out:
        out.write(",".join(f"c{n}" for n in range(columns)) + "\n")
        for row in range(2):
            out.write(",".join(str(row * n % 97) for n in range(columns)) + "\n")


def json_many_records(path: Path, small: bool) -> None:
    """A JSON array of 3,400,000 tiny records (47 MB, under the file cap; 120,000 small): over the
    record cap, and a parser's objects for it would take gigabytes."""
    count = 120_000 if small else 3_400_000
    with path.open("w") as out:
        out.write("[")
        out.write(",".join(f'{{"n":{n}}}' for n in range(count)))
        out.write("]")


def text_one_line(path: Path, small: bool) -> None:
    """40 MB of text with no space and no line break (1 MB small): every cut is a hard cut."""
    path.write_bytes(b"abcdefghij" * ((MiB if small else 40 * MiB) // 10))


def text_prose(path: Path, small: bool) -> None:
    """Paragraphs of about 800 characters: one chunk each, 24,000 of them (200 small)."""
    rng = random.Random(11)
    with path.open("w") as out:
        for _ in range(200 if small else 24_000):
            out.write(prose(rng, 120) + "\n\n")


def mp3_silence(hours: float) -> Callable[[Path, bool], None]:
    """MP3 frames of silence repeated to `hours` (10 minutes small), 8 kbit/s at 8 kHz: 3.6 MB an
    hour that decode to 230 MB of 16 kHz samples. MP3 frames stand alone, so repeating one encoder's
    steady-state frames makes a stream any decoder reads."""

    def make(path: Path, small: bool) -> None:
        import av
        import numpy as np

        buffer = io.BytesIO()
        with av.open(buffer, "w", format="mp3") as target:
            stream = target.add_stream("libmp3lame", rate=8000)
            stream.layout = "mono"
            stream.bit_rate = 8000
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 8000 * 20), dtype="int16"), format="s16",
                                               layout="mono")
            frame.sample_rate = 8000
            packets = [bytes(packet) for packet in [*stream.encode(frame), *stream.encode(None)]]
        steady = packets[len(packets) // 4 : 3 * len(packets) // 4]  # 10 s of frames past the encoder's start
        unit = b"".join(steady)
        repeats = round((600 if small else hours * 3600) / (len(steady) * 576 / 8000))
        with path.open("wb") as out:
            for _ in range(repeats):
                out.write(unit)

    return make


def special(kind: str) -> Callable[[Path, bool], None]:
    def make(path: Path, small: bool) -> None:
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")

    make.__doc__ = {"fifo": "a named pipe with a text name (nobody writes to it)",
                    "zero": "a symbolic link to /dev/zero with a text name"}[kind]
    return make


# ---------------------------------------------------------------------- the catalogue
SIZE_LIMIT = "over the .*-byte limit"
CASES = [
    Case("docx-bomb.docx", "DOCX whose document.xml inflates to 2 GiB", docx_bomb, "refused", "zip bomb"),
    Case("docx-bomb-understated.docx", "the same, its zip headers claiming 4 KiB", docx_understated_bomb, "refused",
         "inflates past the 4096 bytes its zip headers state"),
    Case("docx-nested-zips.docx", "zip of zips of 1 GiB bombs (42.zip's shape) named .docx", docx_nested_zips,
         "refused", "not a Word document|zip bomb|inflates"),
    Case("docx-embedded-bomb.docx", "real DOCX carrying a 2 GiB zip bomb as an embedded package", docx_embedded_bomb,
         "ingested"),
    Case("docx-billion-laughs.docx", "DOCX whose XML declares 10^9 nested entity expansions", docx_billion_laughs,
         "refused", "entit|broken XML|not a Word document"),
    Case("docx-large.docx", "real DOCX of 140,000 paragraphs (95 MB of XML in 12 MB)", docx_large_valid, "refused",
         "max_chunks_per_document", cheap=False),
    Case("html-nested.html", "100,000 nested <div>s", html_nested, "refused", "parser's limits"),
    Case("html-large.html", "47 MB page of 90,000 paragraphs (1.2 million elements)", html_large_valid, "refused",
         "max_chunks_per_document", cheap=False),
    Case("sparse-2GiB.txt", "2 GiB sparse .txt", sparse(".txt", b"notes\n"), "refused", SIZE_LIMIT),
    Case("sparse-2GiB.pdf", "2 GiB sparse .pdf", sparse(".pdf", b"%PDF-1.7\n"), "refused", SIZE_LIMIT),
    Case("sparse-2GiB.jsonl", "2 GiB sparse transcript", sparse(".jsonl", b'{"session_id": "s"}\n'), "refused",
         SIZE_LIMIT),
    *[Case(f"binary{suffix}", f"{'0.9 MB' if suffix == '.py' else '8 MiB'} of random bytes named {suffix}", binary,
           "refused", "not UTF-8")
      for suffix in (".md", ".txt", ".py", ".json", ".jsonl")],
    Case("zeros.txt", "8 MiB of NUL bytes named .txt", nul_bytes, "refused", "binary content"),
    *[Case(f"invalid-utf8{suffix}", f"{'0.9 MB' if suffix == '.py' else '8 MiB'} of {kind} ending in a Latin-1 byte",
           invalid_utf8, "refused",
           "not UTF-8 text: byte 0xe9 at offset")
      for suffix, kind in ((".txt", "text"), (".md", "markdown"), (".py", "code"), (".jsonl", "transcript"))],
    Case("pdf-5000-pages.pdf", "valid PDF of 5,000 pages", pdf_pages, "ingested", cheap=False),
    Case("pdf-text-bomb.pdf", "page content inflating to 1 GiB of text operators", pdf_text_bomb, "refused",
         "inflates|over the"),
    Case("pdf-image-bomb.pdf", "textless page drawing a 40000 x 40000 image", pdf_image_bomb, "refused",
         "ocr_max_pixels limit .* no other page has text"),
    Case("eml-attachment.eml", "mail with a 30 MB base64 attachment", eml_huge_attachment, "ingested", cheap=False),
    Case("eml-10k-attachments.eml", "mail with 10,000 small attachments", eml_many_attachments, "ingested",
         cheap=False),
    Case("jsonl-100MB-line.jsonl", "transcript of one 100 MB line", jsonl_huge_line(100 * MiB, 2 * MiB), "refused",
         SIZE_LIMIT, cheap=False),  # the size check before reading: sparse-2GiB.jsonl in the tests
    Case("jsonl-40MB-line.jsonl", "transcript whose one turn is 40 MB", jsonl_huge_line(40 * MiB, 2 * MiB),
         "refused", "character limit for one turn"),
    Case("jsonl-lone-surrogate.jsonl", "transcript with a turn escaping a lone surrogate", jsonl_lone_surrogate,
         "refused", "not valid Unicode text"),
    Case("json-lone-surrogates.json", "records escaping lone surrogates in keys and values", json_lone_surrogates,
         "ingested"),
    Case("csv-1M-columns.csv", "CSV with 1,000,000 columns", csv_columns, "refused", "columns"),
    Case("json-3M-records.json", "JSON array of 3,400,000 tiny records (47 MB)", json_many_records, "refused",
         "more than 100000 records in one array"),
    Case("text-one-line.txt", "40 MB of text without a space or line break", text_one_line, "refused",
         "max_chunks_per_document", cheap=False),
    Case("text-prose.txt", "20 MB of prose in paragraphs (just under the chunk limit)", text_prose, "ingested",
         cheap=False),
    Case("mp3-12h-silence.mp3", "MP3 of 12 hours of silence in 43 MB", mp3_silence(12), "refused",
         "over the audio_max_seconds limit", cheap=False),
    Case("mp3-3h-silence.mp3", "MP3 of 3 hours of silence (under the limit: decoded and heard)", mp3_silence(3),
         "refused", "no speech found", cheap=False),
    Case("fifo.txt", "named pipe named .txt", special("fifo"), "refused", "not a regular file"),
    Case("dev-zero.txt", "symbolic link to /dev/zero named .txt", special("zero"), "refused", "not a regular file"),
]
