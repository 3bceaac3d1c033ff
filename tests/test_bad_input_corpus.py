"""Bad input, nothing lost: over a thousand broken inputs and the good files beside them go through
one `mnemoflow ingest` run. Every input is either ingested or recorded in `ingest_errors` with its
path, kind and a reason a person can act on; the good files all land; the process never dies.

The corpus is generated here, deterministically (one seeded `random.Random`), from small real files
the libraries write: truncated and bit-flipped PDF, DOCX and audio (WAV, MP3, OGG); zero-byte files
of every supported type; files under the wrong extension; non-UTF-8 and mixed encodings; binary
garbage named as text; deeply nested HTML, JSON and mail; broken transcripts, CSV and mail; a DOCX
zip bomb; and sparse 200 MB files over the size cap. A bad input that still reads (a flipped bit in a
PDF's text or in audio samples) may be ingested: "ingested or recorded", never neither.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import time
import wave
import zipfile
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import unquote, urlsplit

import av
import docx
import duckdb
import numpy as np
import pymupdf
import pytest

from mnemoflow.config import load_settings
from mnemoflow.extractors import supported_suffixes
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

pytestmark = pytest.mark.slow

TENANT, USER = "acme", "alex"
SCOPE = Scope(TENANT, USER)
SEED = 20240611
MIN_BAD = 1000
OVER_CAP_BYTES = 200 * 1024 * 1024  # sparse: costs no disk
HAS_ESPEAK = shutil.which("espeak-ng") is not None

# Distinctive phrases, one per good file, asked for by recall.
PHRASES = {
    "md": "The saffron lighthouse keeper logs every ferry that passes Quillon Point.",
    "txt": "Packing list for the Arvika field trip: headlamp, spare fuses and two thermoses.",
    "pdf": "The cobalt reference lamp calibrates the Vesterberg spectrograph every morning.",
    "docx": "The Halvorsen bakery delivers rye loaves to the harbour canteen on Thursdays.",
    "eml": "The Tamsin quarry inspection moved to the second week of October.",
    "html": "Volunteers repaint the Oberlin footbridge railings each spring.",
    "py": "Compute the Krenshaw tariff for a parcel by weight band.",
    "csv": "Marrowby orchard",
    "json": "Plinth gallery loan",
    "jsonl": "The Dunmore sensor array needs new batteries before the winter survey.",
    "wav": "The blue train leaves at seven in the morning.",
}


@dataclass
class Corpus:
    root: Path
    good: dict[str, Path] = field(default_factory=dict)  # kind -> file
    bad: dict[Path, str] = field(default_factory=dict)  # file -> category

    def add(self, category: str, name: str, data: bytes) -> Path:
        folder = self.root / "bad" / category
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        assert not path.exists(), path
        path.write_bytes(data)
        self.bad[path] = category
        return path


# ---------------------------------------------------------------------- good files, made by the libraries
def make_pdf() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Observatory maintenance notes", fontsize=16)
    page.insert_textbox(pymupdf.Rect(72, 100, 520, 300), PHRASES["pdf"], fontsize=11)
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(72, 72, 520, 300), "The dome motor was serviced in March; the next "
                        "service is due after two hundred hours of rotation.", fontsize=11)
    data = doc.tobytes(garbage=3, deflate=True)
    doc.close()
    return data


def make_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Harbour suppliers", 0)
    document.add_paragraph(PHRASES["docx"])
    document.add_heading("Contacts", 1)
    document.add_paragraph("Ask for Ingrid at the loading bay; the gate code changes monthly.")
    table = document.add_table(rows=2, cols=2)
    for row, cells in zip(table.rows, [("Supplier", "Day"), ("Halvorsen", "Thursday")]):
        for cell, text in zip(row.cells, cells):
            cell.text = text
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def make_eml() -> bytes:
    message = EmailMessage()
    message["From"] = "Rowan Pike <rowan@example.org>"
    message["To"] = "site-team@example.org"
    message["Subject"] = "Quarry inspection"
    message["Date"] = "Tue, 11 Jun 2024 09:30:00 +0000"
    message["Message-ID"] = "<inspection-1@example.org>"
    message.set_content(f"Hello all,\n\n{PHRASES['eml']}\n\nRowan\n")
    message.add_attachment(b"site,visit\nTamsin,October\n", maintype="text", subtype="csv", filename="visits.csv")
    return message.as_bytes()


def make_html() -> bytes:
    return (f"<!doctype html><html><head><meta charset=utf-8><title>Town notices</title></head><body>"
            f"<nav><a href=/>Home</a></nav><article><h1>Bridge upkeep</h1><p>{PHRASES['html']}</p>"
            f"<p>Paint is donated by the hardware shop on Mill Lane.</p></article></body></html>").encode()


def make_python() -> bytes:
    return (f'"""Tariffs."""\n\nBANDS = [(1, 4.5), (5, 7.25), (20, 12.0)]\n\n\n'
            f'def krenshaw_tariff(weight_kg: float) -> float:\n    """{PHRASES["py"]}"""\n'
            f'    for limit, price in BANDS:\n        if weight_kg <= limit:\n            return price\n'
            f'    return 20.0\n').encode()


def make_csv() -> bytes:
    return f"name,crop,acres\n{PHRASES['csv']},apples,14\nFenwick farm,barley,40\n".encode()


def make_json() -> bytes:
    return json.dumps({"data": [{"title": PHRASES["json"], "lender": "Harwick museum", "months": 6},
                                {"title": "Bronze horse", "lender": "City archive", "months": 3}]}).encode()


def turn_line(session: str, turn_id: str, text: str, **extra: object) -> str:
    return json.dumps({"session_id": session, "turn_id": turn_id, "speaker": "Ada", "role": "user",
                       "ts": "2024-06-11T09:00:00Z", "text": text, **extra}) + "\n"


def make_transcript() -> bytes:
    return (turn_line("good-session", "1", PHRASES["jsonl"])
            + turn_line("good-session", "2", "Noted, I will order them today.", speaker="Ben")).encode()


def pcm_wav(samples: np.ndarray, rate: int) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


def speech_wav(text: str) -> bytes:
    """espeak-ng's speech, rewritten with a finalised header (it streams one with no length)."""
    raw = subprocess.run(["espeak-ng", "--stdout", "-s", "150", text], check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(raw)) as spoken:
        rate = spoken.getframerate()
        frames = spoken.readframes(spoken.getnframes())
    samples = np.frombuffer(frames, "<i2").astype(np.float32) / 32767
    return pcm_wav(samples, rate)


def tone_wav(seconds: float = 1.5, rate: int = 16_000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return pcm_wav(0.3 * np.sin(2 * math.pi * 440 * t), rate)


def transcode(wav: bytes, container: str, codec: str, rate: int) -> bytes:
    """The WAV's audio encoded with PyAV (FFmpeg), in memory."""
    out = io.BytesIO()
    with av.open(io.BytesIO(wav)) as source, av.open(out, "w", format=container) as target:
        stream = target.add_stream(codec, rate=rate)
        stream.layout = "mono"
        resampler = av.AudioResampler(format=stream.format.name, layout="mono", rate=stream.rate)
        for frame in source.decode(audio=0):
            frame.pts = None
            for piece in resampler.resample(frame):
                target.mux(stream.encode(piece))
        for piece in resampler.resample(None):
            target.mux(stream.encode(piece))
        target.mux(stream.encode(None))
    return out.getvalue()


def write_good(corpus: Corpus) -> dict[str, bytes]:
    audio = speech_wav(PHRASES["wav"]) if HAS_ESPEAK else tone_wav()
    made = {
        "md": f"# Harbour log\n\n## Ferries\n\n{PHRASES['md']}\n\nSee the tide tables for times.\n".encode(),
        "txt": PHRASES["txt"].encode(), "pdf": make_pdf(), "docx": make_docx(), "eml": make_eml(),
        "html": make_html(), "py": make_python(), "csv": make_csv(), "json": make_json(),
        "jsonl": make_transcript(), "wav": audio,
    }
    made["mp3"] = transcode(audio, "mp3", "libmp3lame", 22_050)
    made["ogg"] = transcode(audio, "ogg", "libopus", 48_000)  # FFmpeg's own Vorbis encoder is experimental
    folder = corpus.root / "good"
    folder.mkdir(parents=True)
    for kind, data in made.items():
        if kind in ("wav", "mp3", "ogg") and not HAS_ESPEAK:
            continue  # a tone has no speech: it is refused, so it is no good file
        corpus.good[kind] = folder / f"good.{kind}"
        corpus.good[kind].write_bytes(data)
    return made


# ---------------------------------------------------------------------- mutations
def truncations(data: bytes, count: int, rng: random.Random) -> list[int]:
    """Cut points: the very start and the last bytes (a trailer) and many in between."""
    fixed = {1, 2, 8, 64, len(data) // 2, len(data) - 1, len(data) - 2, len(data) - 8, len(data) - 64}
    points = {p for p in fixed if 0 < p < len(data)}
    while len(points) < count:
        points.add(rng.randrange(1, len(data)))
    return sorted(points)


def bit_flip(data: bytes, rng: random.Random) -> bytes:
    """1-4 flipped bits; half the variants aim at the first or last 2 KiB, where headers, the PDF
    cross-reference table and the zip central directory are."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.5:
            edge = min(2048, len(out))
            position = rng.randrange(edge) if rng.random() < 0.5 else len(out) - 1 - rng.randrange(edge)
        else:
            position = rng.randrange(len(out))
        out[position] ^= 1 << rng.randrange(8)
    return bytes(out)


def damage(corpus: Corpus, made: dict[str, bytes], kind: str, cuts: int, flips: int, rng: random.Random) -> None:
    data = made[kind]
    for point in truncations(data, cuts, rng):
        corpus.add(f"truncated-{kind}", f"cut-at-{point}.{kind}", data[:point])
    for n in range(flips):
        corpus.add(f"bitflip-{kind}", f"flip-{n:03d}.{kind}", bit_flip(data, rng))


# ---------------------------------------------------------------------- crafted bad inputs
SAMPLE = "Café déjà vu, naïve résumé: Größe und Maße — 東京の会議 — ½ €5"
WRAPPERS = {  # how a line of text sits in each text format
    ".md": "# Notes\n\n{}\n", ".txt": "{}\n", ".py": "# {}\nNOTE = '{}'\n", ".js": "// {}\nconst note = '{}';\n",
    ".ts": "// {}\nconst note: string = '{}';\n", ".go": "package main\n\n// {}\nvar note = \"{}\"\n",
    ".rs": "// {}\nconst NOTE: &str = \"{}\";\n", ".java": "// {}\nclass Note {{ String s = \"{}\"; }}\n",
    ".csv": "name,note\nalpha,{}\n", ".json": '{{"note": "{}"}}\n',
    ".jsonl": '{{"session_id": "enc", "turn_id": "1", "speaker": "Ada", "ts": "2024-06-11T09:00:00Z", "text": "{}"}}\n',
    ".html": "<html><body><p>{}</p></body></html>\n", ".eml": "From: a@example.org\nSubject: {}\n\n{}\n",
}


def wrapped(suffix: str, text: str) -> str:
    template = WRAPPERS[suffix]
    return template.format(*([text] * template.count("{}")))


def encodings(suffix: str) -> dict[str, bytes]:
    text = wrapped(suffix, SAMPLE)
    utf8 = text.encode()
    ascii_part = wrapped(suffix, "plain words")
    return {
        "latin1": text.encode("latin-1", errors="replace"),
        "cp1252": text.encode("cp1252", errors="replace"),
        "utf16le-nobom": text.encode("utf-16-le"),
        "utf16be-nobom": text.encode("utf-16-be"),
        "utf16-bom": text.encode("utf-16"),
        "utf32": text.encode("utf-32"),
        "shift-jis": text.encode("shift_jis", errors="replace"),
        "gb18030": text.encode("gb18030"),
        "koi8r": wrapped(suffix, "Привет, это заметка").encode("koi8-r"),
        "mixed-lines": ascii_part.encode() + "naïve".encode("latin-1") + b"\n" + "naïve €".encode() + b"\n"
                       + "€uro".encode("cp1252") + b"\n",
        "lone-surrogate": utf8 + b"\xed\xa0\x80 surrogate\n",  # UTF-8 forbids encoding U+D800
        "overlong-slash": utf8 + b"\xc0\xaf\n",
        "cut-multibyte": utf8 + "東".encode()[:2],  # ends inside a character
        "bad-continuation": utf8 + b"\xe2\x28\xa1\n",
        "nul-bytes": utf8[:10] + b"\x00\x00" + utf8[10:],
        "bom-then-latin1": b"\xef\xbb\xbf" + text.encode("latin-1", errors="replace"),
    }


def png_bytes() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 4 for _ in range(4))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def foreign_formats() -> dict[str, bytes]:
    """Non-text formats no extractor reads, to be named as if they were one."""
    return {
        "png": png_bytes(),
        "jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + bytes(range(256))
                + b"\xff\xd9",
        "gzip": gzip.compress(b"compressed notes " * 50, mtime=0),
        "elf": b"\x7fELF\x02\x01\x01\x00" + bytes(56) + bytes(range(256)) * 2,
        "sqlite": b"SQLite format 3\x00" + bytes(4080),
    }


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def docx_members(good_docx: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(good_docx)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def bomb_docx(good_docx: bytes, inflated: int) -> bytes:
    """A DOCX whose document.xml inflates to `inflated` bytes (zeros), written streaming so the test
    never holds more than 1 MiB of it; about 1 KiB of zip per MiB of zeros."""
    buffer = io.BytesIO()
    block = bytes(1 << 20)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in docx_members(good_docx).items():
            if name != "word/document.xml":
                archive.writestr(name, data)
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            for _ in range(inflated // len(block)):
                member.write(block)
    return buffer.getvalue()


def understated_bomb(bomb: bytes, inflated: int, stated: int) -> bytes:
    """The bomb with its headers claiming `stated` bytes instead of `inflated`: a reader that trusts
    the directory must stop there rather than inflate it all."""
    for width in ("<Q", "<I"):  # the zip64 extra field and the central directory's own field
        assert struct.pack(width, inflated) in bomb
        bomb = bomb.replace(struct.pack(width, inflated), struct.pack(width, stated))
    return bomb


def nested_mail(depth: int) -> bytes:
    message = EmailMessage()
    message["From"], message["Subject"] = "deep@example.org", "level 0"
    message.set_content("the innermost message")
    for level in range(1, depth + 1):
        outer = EmailMessage()
        outer["From"], outer["Subject"] = "deep@example.org", f"level {level}"
        outer.set_content(f"forwarding level {level}")
        outer.add_attachment(message)
        message = outer
    return message.as_bytes()


def nested_multipart(depth: int) -> bytes:
    head = "From: deep@example.org\nSubject: nested parts\nMIME-Version: 1.0\n"
    body = "innermost text\n"
    for level in range(depth):
        boundary = f"b{level}"
        body = (f"Content-Type: multipart/mixed; boundary={boundary}\n\n--{boundary}\n"
                + ("Content-Type: text/plain\n\n" + body if level == 0 else body) + f"\n--{boundary}--\n")
    return (head + body).encode()


def write_crafted(corpus: Corpus, made: dict[str, bytes], rng: random.Random) -> None:
    suffixes = sorted(supported_suffixes())

    # zero-byte files of every supported type
    for suffix in suffixes:
        corpus.add("zero-byte", f"empty{suffix}", b"")

    # real files of one type named as another, and non-text formats named as text
    sources = {kind: made[kind] for kind in ("pdf", "docx", "wav", "mp3", "ogg", "eml", "md", "py", "html", "csv")}
    sources |= foreign_formats()
    targets = [".pdf", ".docx", ".wav", ".mp3", ".ogg", ".m4a", ".eml", ".md", ".txt", ".py", ".js", ".go",
               ".html", ".csv", ".json", ".jsonl"]
    for kind, data in sources.items():
        for suffix in targets:
            if suffix != f".{kind}":
                corpus.add("wrong-extension", f"{kind}-as{suffix}", data)

    # non-UTF-8 and mixed encodings in every text format
    for suffix in WRAPPERS:
        for label, data in encodings(suffix).items():
            corpus.add("encoding", f"{label}{suffix}", data)

    # binary garbage under every supported extension
    for suffix in suffixes:
        for n in range(3):
            corpus.add("garbage", f"random-{n}{suffix}", rng.randbytes(rng.choice([1, 7, 100, 4096, 65_536])))

    # deep nesting
    corpus.add("nested", "divs-100k.html", b"<html><body>" + b"<div>" * 100_000 + b"deep" + b"</div>" * 100_000)
    corpus.add("nested", "spans-unclosed-50k.html", b"<p>" + b"<span><b><i>" * 50_000 + b"text")
    corpus.add("nested", "tables-2k.html", b"<table><tr><td>" * 2_000 + b"cell" + b"</td></tr></table>" * 2_000)
    corpus.add("nested", "divs-300.html", b"<html><body>" + b"<div>" * 300 + b"past the limit" + b"</div>" * 300)
    corpus.add("nested", "arrays-100k.json", b"[" * 100_000 + b"]" * 100_000)
    corpus.add("nested", "objects-100k.json", b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    corpus.add("nested", "records-deep-line.jsonl", b'{"id": 1}\n' + b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n")
    corpus.add("nested", "turn-deep-metadata.jsonl",
               (turn_line("deep", "1", "ok") + turn_line("deep", "2", "x").replace('"x"', '"x", "metadata": '
                + '{"a":' * 100_000 + "1" + "}" * 100_000)).encode())
    corpus.add("nested", "quotes-50k.md", b"# Quotes\n\n" + b">" * 50_000 + b" deep quote\n")
    corpus.add("nested", "lists-5k.md", b"# Lists\n\n" + b"".join(b"  " * i + b"- item\n" for i in range(5_000)))
    corpus.add("nested", "parens-100k.py", b"x = " + b"(" * 100_000 + b"1" + b")" * 100_000 + b"\n")
    corpus.add("nested", "brackets-100k.js", b"const x = " + b"[" * 100_000 + b"]" * 100_000 + b";\n")
    corpus.add("nested", "forwarded-6.eml", nested_mail(6))
    corpus.add("nested", "multipart-200.eml", nested_multipart(200))
    corpus.add("nested", "multipart-2000.eml", nested_multipart(2_000))

    # zip bombs (a DOCX is a zip; archives themselves are not accepted, so the .zip is unsupported)
    bomb = bomb_docx(made["docx"], 300 << 20)
    corpus.add("zip-bomb", "bomb-300MB.docx", bomb)
    corpus.add("zip-bomb", "bomb-ratio-64MB.docx", bomb_docx(made["docx"], 64 << 20))
    corpus.add("zip-bomb", "bomb-understated.docx", understated_bomb(bomb, 300 << 20, 4096))
    corpus.add("zip-bomb", "many-members.docx", zip_bytes({**docx_members(made["docx"]),
                                                           **{f"customXml/item{i}.xml": b"" for i in range(10_050)}}))
    corpus.add("zip-bomb", "bomb.zip", bomb)
    corpus.add("unsupported", "archive.zip", zip_bytes({"notes.md": made["md"]}))
    corpus.add("unsupported", "archive.tar.gz", foreign_formats()["gzip"])
    corpus.add("unsupported", "picture.png", png_bytes())
    corpus.add("unsupported", "no-extension", made["md"])

    # broken archives that say they are DOCX
    members = docx_members(made["docx"])
    corpus.add("docx-structure", "no-document-xml.docx", zip_bytes({k: v for k, v in members.items()
                                                                    if k != "word/document.xml"}))
    corpus.add("docx-structure", "no-content-types.docx", zip_bytes({k: v for k, v in members.items()
                                                                     if k != "[Content_Types].xml"}))
    corpus.add("docx-structure", "broken-xml.docx",
               zip_bytes({**members, "word/document.xml": b"<w:document><w:body>"}))
    corpus.add("docx-structure", "empty-zip.docx", zip_bytes({}))
    corpus.add("docx-structure", "ole-container.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4096))
    corpus.add("docx-structure", "stored-not-deflated.docx", b"PK\x03\x04" + bytes(26))
    xlsx_like = {k: v for k, v in members.items() if not k.startswith("word/")}
    corpus.add("docx-structure", "no-word-part.docx", zip_bytes({**xlsx_like, "xl/workbook.xml": b"<workbook/>"}))

    # PDFs that are not quite PDFs
    pdf = made["pdf"]
    corpus.add("pdf-structure", "header-only.pdf", b"%PDF-1.7\n")
    corpus.add("pdf-structure", "header-and-eof.pdf", b"%PDF-1.7\n%%EOF\n")
    corpus.add("pdf-structure", "no-xref.pdf", re.sub(rb"xref.*?trailer", b"trailer", pdf, flags=re.S))
    corpus.add("pdf-structure", "zero-pages.pdf", b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
               b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
    corpus.add("pdf-structure", "text-as-pdf.pdf", b"%PDF-1.7\nthis is just text pretending\n%%EOF\n")
    corpus.add("pdf-structure", "doubled.pdf", pdf + pdf)
    corpus.add("pdf-structure", "junk-prefix.pdf", rng.randbytes(2048) + pdf)

    # transcripts and records that are broken in the ways people break them
    good_line = turn_line("t", "1", "a good turn")
    transcripts = {
        "not-json.jsonl": b"hello there\nstill not json\n",
        "one-bad-line.jsonl": (good_line + "{oops\n" + turn_line("t", "2", "another good turn")).encode(),
        "missing-text.jsonl": json.dumps({"session_id": "t", "turn_id": "1", "speaker": "A",
                                          "ts": "2024-06-11T09:00:00Z"}).encode() + b"\n",
        "bad-timestamp.jsonl": turn_line("t", "1", "when?", ts="yesterday-ish").encode(),
        "bad-role.jsonl": turn_line("t", "1", "who?", role="wizard").encode(),
        "empty-ids.jsonl": turn_line("", "", "no ids").encode(),
        "duplicate-turns.jsonl": (good_line + good_line).encode(),
        "array-lines.jsonl": b"[1, 2, 3]\n[4]\n",
        "scalar-lines.jsonl": b"1\n\"two\"\nnull\ntrue\n",
        "blank-lines.jsonl": b"\n\n   \n\t\n",
        "truncated-line.jsonl": good_line.encode()[:-20],
        "crlf.jsonl": good_line.replace("\n", "\r\n").encode(),
        "nan.jsonl": turn_line("t", "1", "numbers", metadata={"x": float("nan")}).encode(),
        "metadata-not-object.jsonl": turn_line("t", "1", "meta", metadata=[1, 2]).encode(),
        "huge-line.jsonl": turn_line("t", "1", "long " * 200_000).encode(),
        "lone-surrogate-escape.jsonl": turn_line("t", "1", "@").replace('"@"', '"bad \\ud800 here"').encode(),
        "not-a-list.json": json.dumps({"session_id": "t", "turn_id": "1"}).encode(),
        "list-of-strings.json": b'["a", "b"]',
        "list-of-lists.json": b"[[1], [2]]",
        "transcript-bad-items.json": json.dumps([json.loads(good_line), 5, {"session_id": "t"}]).encode(),
        "trailing-comma.json": b'[{"session_id": "t", "turn_id": "1",}]',
        "empty-list.json": b"[]",
        "empty-object.json": b"{}",
        "scalar.json": b"42",
        "string.json": b'"just a string"',
        "records-mixed.json": b'[{"name": "ok"}, 5, "x"]',
        "records-empty-objects.json": b"[{}, {}]",
        "envelope-two-lists.json": json.dumps({"a": [{"x": 1}], "b": [{"y": 2}]}).encode(),
        "huge-number.json": b'[{"n": 1e999999, "m": -1e999999}]',
        "infinity.json": b'[{"n": Infinity, "m": NaN}]',
        "lone-surrogate-escape.json": b'[{"name": "bad \\ud800 here"}]',
        "unpaired-low-surrogate.jsonl": b'{"name": "bad \\udc80 here"}\n',
        "records-bad-lines.jsonl": b'{"name": "fine"}\nnot json\n[1]\n',
        "records-only-bad.jsonl": b'{"name": \n{"x"\n',
        "bom.json": b"\xef\xbb\xbf" + json.dumps([{"title": "with a bom"}]).encode(),
        "many-records.jsonl": b"".join(b'{"n": %d}\n' % i for i in range(100_001)),
        "copy-of-good.jsonl": made["jsonl"],  # the same session and turns as good/good.jsonl
    }
    for name, data in transcripts.items():
        corpus.add("json", name, data)

    # CSV broken the ways spreadsheets break it
    csvs = {
        "unterminated-quote.csv": b'name,note\nalpha,"never closed\nbeta,x\n',
        "header-only.csv": b"name,note\n",
        "numeric-header.csv": b"1,2,3\n4,5,6\n",
        "blank-rows.csv": b"\n\n,,\n , \n",
        "huge-field.csv": b"name,note\nalpha," + b"x" * 200_000 + b"\n",
        "ragged.csv": b"a,b,c\n1\n1,2,3,4,5\n",
        "quote-in-field.csv": b'a,b\n1,he said "hi"\n',
        "semicolons.csv": b"a;b;c\n1;2;3\n",
        "nul.csv": b"a,b\n1,\x002\n",
        "only-commas.csv": b",,,,\n,,,,\n",
        "newline-cr-only.csv": b"a,b\r1,2\r3,4\r",
        "too-many-records.csv": b"n\n" + b"".join(b"%d\n" % i for i in range(100_001)),
    }
    for name, data in csvs.items():
        corpus.add("csv", name, data)

    # mail that is barely mail
    truncated_pdf = pdf[: len(pdf) // 2]

    def mail_with(attachment: bytes, filename: str, maintype: str, subtype: str) -> bytes:
        message = EmailMessage()
        message["From"], message["Subject"] = "a@example.org", f"with {filename}"
        message.set_content("see attached")
        message.add_attachment(attachment, maintype=maintype, subtype=subtype, filename=filename)
        return message.as_bytes()

    mails = {
        "no-headers.eml": b"just a body with no headers at all\n",
        "garbage-address.eml": b"From: <<<@@>>>\nTo: ,,,;;;\nSubject: x\n\nbody\n",
        "bad-message-id.eml": b"From: a@example.org\nMessage-ID: <<<>\nSubject: id\n\nbody\n",
        "bad-date.eml": b"From: a@example.org\nDate: the day after tomorrow\nSubject: date\n\nbody\n",
        "bad-encoded-word.eml": b"From: =?utf-8?b?!!!?= <a@example.org>\nSubject: =?x-unknown?q?=ZZ?=\n\nbody\n",
        "unknown-charset.eml": b"From: a@example.org\nSubject: cs\nContent-Type: text/plain; charset=x-klingon\n\n"
                               b"caf\xe9 body\n",
        "missing-boundary.eml": b"From: a@example.org\nSubject: mp\nContent-Type: multipart/mixed; boundary=zzz\n\n"
                                b"no boundary ever appears\n",
        "no-boundary-param.eml": b"From: a@example.org\nSubject: mp\nContent-Type: multipart/mixed\n\n--x\n\nbody\n",
        "unclosed-multipart.eml": b"From: a@example.org\nSubject: mp\nContent-Type: multipart/mixed; boundary=b\n\n"
                                  b"--b\nContent-Type: text/plain\n\nfirst part\n--b\nContent-Type: text/plain\n\n",
        "bad-base64.eml": b"From: a@example.org\nSubject: b64\nContent-Type: text/plain\n"
                          b"Content-Transfer-Encoding: base64\n\n!!!not base64@@@\n",
        "bad-qp.eml": b"From: a@example.org\nSubject: qp\nContent-Transfer-Encoding: quoted-printable\n\n=ZZ=\n=",
        "html-only-empty.eml": b"From: a@example.org\nSubject: h\nContent-Type: text/html\n\n<html><!-- --></html>\n",
        "header-only.eml": b"From: a@example.org\nSubject: nothing else\n",
        "nul-in-body.eml": b"From: a@example.org\nSubject: nul\n\nbody\x00with nul\n",
        "attachment-truncated-pdf.eml": mail_with(truncated_pdf, "report.pdf", "application", "pdf"),
        "attachment-empty-docx.eml": mail_with(b"", "empty.docx", "application", "octet-stream"),
        "attachment-zip-bomb.eml": mail_with(bomb_docx(made["docx"], 128 << 20), "bomb.docx", "application",
                                             "octet-stream"),
        "attachment-unsupported.eml": mail_with(png_bytes(), "photo.png", "image", "png"),
        "attachment-garbage-wav.eml": mail_with(rng.randbytes(3000), "memo.wav", "audio", "wav"),
        "attachment-no-name.eml": mail_with(b"data", "", "application", "octet-stream"),
        "attachment-path-name.eml": mail_with(b"# hi\n\ntext\n", "../../etc/passwd.md", "text", "markdown"),
    }
    for name, data in mails.items():
        corpus.add("mail", name, data)

    # text and code mutated like a bad disk or a cut-off download
    for kind in ("md", "eml", "py", "html", "csv", "json", "jsonl"):
        data = made[kind]
        for point in truncations(data, 8, rng):
            corpus.add(f"truncated-{kind}", f"cut-at-{point}.{kind}", data[:point])
        for n in range(8):
            corpus.add(f"bitflip-{kind}", f"flip-{n:03d}.{kind}", bit_flip(data, rng))

    # code over the code size cap, and odd but valid-ish source
    corpus.add("code", "huge.py", b"x = 1\n" * 200_000)
    corpus.add("code", "one-long-line.js", b"const s = '" + b"a" * 900_000 + b"';\n")
    corpus.add("code", "syntax-soup.rs", b"fn {{{ impl <<< for >>> ;;; }\n" * 50)
    corpus.add("code", "cr-only.go", b"package main\rfunc main() {\r}\r")
    corpus.add("code", "only-comments.java", b"// nothing\n/* at all */\n")
    corpus.add("code", "control-chars.ts", b"const a = 1;\x01\x02\x03\x1b[31m\n")

    # the file limit: sparse files, so 200 MB cost no disk (nor time to write)
    for name, head in (("over-cap.pdf", pdf[:1024]), ("over-cap.md", b"# big\n\n"),
                       ("over-cap.jsonl", good_line.encode()), ("over-cap.wav", made["wav"][:44])):
        path = corpus.add("over-cap", name, head)
        with path.open("r+b") as handle:
            handle.truncate(OVER_CAP_BYTES)

    # odd file names (spaces, non-ASCII, percent signs, bytes that are not UTF-8) must still be named
    corpus.add("names", "with space and ünïcode.pdf", pdf[: len(pdf) // 3])
    corpus.add("names", "percent%20sign 100%.md", b"\xff\xfe")
    corpus.add("names", "UPPER.PDF", b"not a pdf")
    corpus.add("names", os.fsdecode(b"latin1-caf\xe9.txt"), b"a plain note under a Latin-1 file name\n")
    corpus.add("names", os.fsdecode(b"latin1-r\xe9sum\xe9.pdf"), pdf[:200])
    corpus.add("names", os.fsdecode(b"latin1-\xe9t\xe9.jsonl"), turn_line("latin1-name", "1", "summer notes").encode())


def build_corpus(root: Path) -> tuple[Corpus, dict[str, bytes]]:
    rng = random.Random(SEED)
    corpus = Corpus(root)
    made = write_good(corpus)
    damage(corpus, made, "pdf", cuts=90, flips=130, rng=rng)
    damage(corpus, made, "docx", cuts=90, flips=130, rng=rng)
    damage(corpus, made, "wav", cuts=30, flips=40, rng=rng)
    damage(corpus, made, "mp3", cuts=20, flips=25, rng=rng)
    damage(corpus, made, "ogg", cuts=20, flips=25, rng=rng)
    write_crafted(corpus, made, rng)
    return corpus, made


# ---------------------------------------------------------------------- reading the run back
def named_path(uri: str) -> Path:
    """The local file an error or a document names: a file:// URI (attachments carry a #fragment;
    a name's bytes that are not UTF-8 are percent-encoded) or the path itself."""
    if uri.startswith("file://"):
        return Path(unquote(urlsplit(uri).path, errors="surrogateescape"))
    return Path(uri)


RAW_EXCEPTION = re.compile(
    r"\b[A-Z]\w*(Error|Exception)\b: |object has no attribute|index out of range|NoneType|not subscriptable"
    r"|unhashable type|positional argument|unexpected keyword|maximum recursion depth|codec can't"
)


def summary(errors: list[tuple[str, str, str]]) -> str:
    """Reasons grouped by kind, numbers and names blanked so alike reasons count together."""
    groups: dict[str, Counter] = defaultdict(Counter)
    for _, kind, reason in errors:
        prefix = re.sub(r"\d+", "N", reason.split("(")[0].split(": byte")[0])[:90].strip()
        groups[kind][prefix] += 1
    lines = []
    for kind in sorted(groups, key=lambda k: -sum(groups[k].values())):
        lines.append(f"{kind} ({sum(groups[kind].values())})")
        lines += [f"  {count:5d}  {prefix}" for prefix, count in groups[kind].most_common()]
    return "\n".join(lines)


def test_a_thousand_bad_inputs_are_each_ingested_or_recorded_and_the_good_ones_land(tmp_path: Path) -> None:
    started = time.monotonic()
    root = (tmp_path / "corpus").resolve()
    corpus, _ = build_corpus(root)
    built = time.monotonic()
    assert len(corpus.bad) >= MIN_BAD, Counter(corpus.bad.values())

    home = tmp_path / "home"
    script = Path(sys.executable).with_name("mnemoflow")
    command = [str(script)] if script.exists() else [sys.executable, "-c", "from mnemoflow.cli import main; main()"]
    run = subprocess.run([*command, "ingest", str(root), "--home", str(home), "--tenant", TENANT, "--user", USER],
                         capture_output=True, text=True, timeout=1500)
    ingested_at = time.monotonic()
    # the process never dies: 1 is "done, some input could not be read"; a crash is a traceback or a signal
    assert run.returncode == 1, f"exit {run.returncode}\n{run.stderr[-4000:]}"
    assert "Traceback" not in run.stderr, run.stderr[-4000:]
    assert "ingested:" in run.stdout, run.stdout

    settings = load_settings(home=home)
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        # a picture without text is a document without chunks, its metadata saying so
        documents = dict(con.execute(
            "SELECT d.uri, count(c.chunk_id) + max(CASE WHEN json_extract_string(d.metadata, '$.no_text') IS NULL "
            "THEN 0 ELSE 1 END) "
            "FROM source_documents d LEFT JOIN chunks c "
            "ON c.document_id = d.document_id AND c.deleted_at IS NULL "
            "WHERE d.tenant_id = ? AND d.user_id = ? AND d.deleted_at IS NULL GROUP BY d.uri",
            [TENANT, USER]).fetchall())
        # a transcript is ingested when its turns are memory; a copy's turns merge into the same ones, a
        # file that says something else under the same ids is a conversation of its own (its turns name it)
        transcripts = {r[0] for r in con.execute(
            "SELECT DISTINCT r.file_url FROM raw_conversations.turns r JOIN turns t ON t.tenant_id = r.tenant_id "
            "AND t.user_id = r.user_id AND t.turn_id = r.turn_id "
            "AND (t.session_id = r.session_id OR t.source_uri = r.file_url) "
            "WHERE r.tenant_id = ? AND r.user_id = ?", [TENANT, USER]).fetchall()}
        errors = con.execute("SELECT uri, kind, reason FROM ingest_errors WHERE tenant_id = ? AND user_id = ?",
                             [TENANT, USER]).fetchall()
    report = summary(errors)
    print(f"\ncorpus: {len(corpus.bad)} bad inputs, {len(corpus.good)} good files; built in {built - started:.0f} s, "
          f"ingested in {ingested_at - built:.0f} s\n{report}")

    # every input is accounted for: ingested (a document, or turns of a transcript) or recorded
    landed = {named_path(uri) for uri, chunks in documents.items() if chunks} | {named_path(u) for u in transcripts}
    recorded: dict[Path, list[tuple[str, str]]] = defaultdict(list)
    for uri, kind, reason in errors:
        recorded[named_path(uri)].append((kind, reason))
        assert kind and reason and reason.strip(), (uri, kind, reason)
    everything = [*corpus.good.values(), *corpus.bad]
    lost = [str(p.relative_to(root)) for p in everything if p not in landed and p not in recorded]
    assert not lost, f"{len(lost)} inputs neither ingested nor recorded: {lost[:40]}\n{report}"
    strangers = sorted(str(p) for p in recorded if p not in set(everything))
    assert not strangers, f"errors that name no input: {strangers[:20]}"

    # the good files all land, whole, and can be recalled
    for kind, path in corpus.good.items():
        assert path in landed, f"good {kind} file did not land: {recorded.get(path)}"
        assert path not in recorded, f"good {kind} file has errors: {recorded[path]}"
    with MemoryService(settings) as service:
        for kind in ("md", "pdf", "docx", "html"):
            hits = service.recall(SCOPE, PHRASES[kind], k=5).items
            assert any(PHRASES[kind].split()[1] in item.text for item in hits), (kind, [h.text for h in hits])

    # reasons a person can act on, never a raw exception
    raw = [(uri, reason) for uri, _, reason in errors if RAW_EXCEPTION.search(reason)]
    listed = "\n".join(f"{uri}: {reason}" for uri, reason in raw[:30])
    assert not raw, f"{len(raw)} reasons are raw exceptions:\n{listed}\n{report}"

    def reasons(category: str) -> list[tuple[Path, str]]:
        return [(p, r) for p, c in corpus.bad.items() if c == category for _, r in recorded.get(p, [])]

    for path, reason in reasons("over-cap"):
        assert f"over the {settings.max_file_bytes}-byte limit" in reason, (path.name, reason)
    assert len(reasons("over-cap")) == 4
    for path, reason in reasons("zero-byte"):
        assert reason.startswith("empty"), (path.name, reason)
    assert {p for p, _ in reasons("zero-byte")} == {p for p, c in corpus.bad.items() if c == "zero-byte"}
    bombs = {p.name: r for p, r in reasons("zip-bomb")}
    assert bombs.keys() == {p.name for p, c in corpus.bad.items() if c == "zip-bomb"}, bombs
    for name, reason in bombs.items():
        expected = {".zip": "no extractor", "understated": "damaged", "many": "zip members, over the limit"}
        pattern = next((v for k, v in expected.items() if k in name), "zip bomb")
        assert pattern in reason, (name, reason)
    for path, reason in reasons("truncated-pdf"):
        assert re.search(r"truncated|damaged|corrupt", reason), (path.name, reason)
    for path, reason in reasons("truncated-docx"):
        assert re.search(r"truncated|damaged|corrupt|not a zip", reason), (path.name, reason)
    for path, reason in reasons("truncated-wav"):
        assert re.search(r"truncated|damaged|not readable as audio|no audio", reason), (path.name, reason)
