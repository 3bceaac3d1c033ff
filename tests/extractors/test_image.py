"""Pictures read with the real OCR engine (RapidOCR, its bundled models): lines in reading order, cited
by line; a picture without text recorded as such; EXIF time; every page of a TIFF; bombs refused."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image

from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings
from mnemoflow.extractors import Extracted, extractor_for, mime_for
from mnemoflow.extractors.ocr import Box, reading_order
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.media import encoded, photo_like, text_image

SCOPE = Scope("acme", "alex")
BOARD = ["Sprint retro: action items", "1. Rotate the staging certificates", "2. Move standup to 9:15",
         "3. Owner of the billing bug: Priya"]


def extract(data: bytes, name: str, settings: Settings) -> Extracted:
    return extractor_for(mime_for(name))(data, name, settings)


def words(text: str) -> set[str]:
    return {w.strip(".,:;").lower() for w in text.split()}


def test_a_photo_of_a_whiteboard_reads_line_by_line_in_order(settings: Settings) -> None:
    extracted = extract(encoded(photo_like(text_image(BOARD)), "PNG"), "whiteboard.png", settings)
    [unit] = extracted.units
    lines = unit.text.split("\n")
    assert len(lines) == 4 and unit.locator == {"lines": [1, 4]}
    for read, written in zip(lines, BOARD):  # each line where it was written, most of its words right
        assert len(words(read) & words(written)) >= len(words(written)) - 1, (read, written)
    assert extracted.title == "whiteboard.png" and extracted.metadata["ocr_engine"] == "rapidocr"


def test_a_screenshot_with_light_text_on_dark_is_read_and_its_chunks_cite_lines(settings: Settings) -> None:
    shot = text_image(["Traceback (most recent call last):", 'File "worker.py", line 88, in drain',
                       "ConnectionResetError: broker closed the channel"], size=28, background="#1e1e1e",
                      ink="#dcdcdc")
    extracted = extract(encoded(shot, "JPEG", quality=85), "error.jpg", settings)
    assert "ConnectionResetError" in extracted.units[0].text
    chunks = chunk_extracted("doc_x", extracted, 12)  # a cap of about one line: the picture is cut by lines
    assert [c.locator["lines"] for c in chunks] == [[1, 1], [2, 2], [3, 3]]


def test_reading_order_groups_boxes_into_lines_left_to_right() -> None:
    boxes = [Box("world", 210, 12, 300, 40), Box("second", 10, 60, 120, 90), Box("hello", 10, 10, 200, 42),
             Box("line", 130, 58, 200, 92), Box("會議", 10, 110, 60, 140), Box("室", 62, 111, 90, 139)]
    assert reading_order(boxes) == ["hello world", "second line", "會議室"]


def test_a_picture_without_text_is_recorded_not_refused(service: MemoryService, tmp_path: Path) -> None:
    sky = Image.linear_gradient("L").resize((400, 300)).convert("RGB")
    (tmp_path / "sky.png").write_bytes(encoded(sky, "PNG"))
    extracted = extract((tmp_path / "sky.png").read_bytes(), "sky.png", service.settings)
    assert extracted.units == [] and extracted.no_text == "no text found in the picture"
    outcome = service.ingest(SCOPE, [tmp_path / "sky.png"])
    assert outcome.report.errors == [] and outcome.report.documents_changed == 1
    counts = service.store.counts(SCOPE)
    assert counts["documents"] == 1 and counts["chunks"] == 0


def test_exif_time_becomes_the_documents_date(settings: Settings) -> None:
    image = text_image(["Parking level B2, bay 41"])
    exif = Image.Exif()
    exif.get_ifd(0x8769).update({36867: "2024:03:09 17:42:05", 36881: "+01:00"})
    extracted = extract(encoded(image, "JPEG", exif=exif), "parking.jpg", settings)
    assert extracted.metadata["date"] == "2024-03-09T17:42:05+01:00"
    assert "date" not in extract(encoded(image, "PNG"), "parking.png", settings).metadata


def test_every_page_of_a_tiff_and_the_first_frame_of_a_gif(settings: Settings) -> None:
    pages = [text_image(["Invoice 2231 from Harbor Freight"]), text_image(["Total due 418 dollars"])]
    tiff = encoded(pages[0], "TIFF", save_all=True, append_images=[pages[1]])
    extracted = extract(tiff, "invoice.tiff", settings)
    assert [u.locator for u in extracted.units] == [{"page": 1, "lines": [1, 1]}, {"page": 2, "lines": [1, 1]}]
    assert "418" in extracted.units[1].text
    gif = encoded(pages[0].convert("P"), "GIF", save_all=True, append_images=[pages[1].convert("P")])
    [unit] = extract(gif, "invoice.gif", settings).units
    assert "2231" in unit.text and "418" not in unit.text
    webp = extract(encoded(pages[1], "WEBP", quality=90), "total.webp", settings)
    assert "418" in webp.units[0].text


def png_declaring(width: int, height: int) -> bytes:
    """A PNG of a few hundred bytes whose header declares `width` x `height` pixels."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 1024)) + chunk(b"IEND", b""))


def test_a_decompression_bomb_goes_to_ingest_errors(service: MemoryService, tmp_path: Path) -> None:
    (tmp_path / "bomb.png").write_bytes(png_declaring(100_000, 100_000))
    (tmp_path / "cut.jpg").write_bytes(encoded(text_image(["cut short"]), "JPEG")[:600])
    (tmp_path / "fake.png").write_bytes(b"\x89PNG\r\n not an image")
    outcome = service.ingest(SCOPE, [tmp_path])
    reasons = {Path(e.uri).name: e.reason for e in outcome.report.errors}
    assert "over the ocr_max_pixels limit" in reasons["bomb.png"] and "decompression bomb" in reasons["bomb.png"]
    assert reasons["cut.jpg"].startswith("damaged image")
    assert reasons["fake.png"].startswith("not a readable image")
    assert service.store.counts(SCOPE)["documents"] == 0


def test_tesseract_engine_missing_says_how_to_install_it(tmp_path: Path) -> None:
    """The system package is optional: without it the reason names the packages to install."""
    pytest.importorskip("pytesseract")
    (tmp_path / "note.png").write_bytes(encoded(text_image(["hello"]), "PNG"))
    code = ("from pathlib import Path; from mnemoflow.config import load_settings; "
            "from mnemoflow.extractors import extractor_for; from mnemoflow.errors import ConfigError\n"
            f"s = load_settings(home={str(tmp_path / 'h')!r}, ocr_engine='tesseract')\n"
            "try:\n    extractor_for('image/png')(Path(" + repr(str(tmp_path / 'note.png')) + ").read_bytes(), "
            "'note.png', s)\nexcept ConfigError as e:\n    print(e)\n")
    env = {**os.environ, "PATH": str(tmp_path / "empty-bin"), "PYTHONPATH": os.getcwd()}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert "needs Tesseract, which is not installed: apt-get install tesseract-ocr" in result.stdout, result.stderr


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="apt-get install tesseract-ocr tesseract-ocr-eng")
def test_tesseract_engine_reads_the_same_lines(settings: Settings) -> None:
    pytest.importorskip("pytesseract")
    english = settings.model_copy(update={"ocr_engine": "tesseract", "ocr_tesseract_languages": "eng"})
    [unit] = extract(encoded(text_image(BOARD), "PNG"), "whiteboard.png", english).units
    assert len(unit.text.split("\n")) == 4 and "certificates" in unit.text
