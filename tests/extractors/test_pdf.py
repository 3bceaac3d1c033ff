"""PDF: one unit per page cited by page number; scans, passwords and damaged files fail with a reason."""

import re
import zlib
from pathlib import Path

import pymupdf
import pytest

import mnemoflow.extractors.pdf  # noqa: F401  (registers application/pdf)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings, load_settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.media import scanned_pdf

SCOPE = Scope("acme", "alex")
PAGES = [
    "Revenue grew twelve percent in the northern region during the third quarter, driven by renewals.",
    "The data centre migration to Frankfurt completes in March; Dana Reyes leads the cut-over weekend.",
    "Two backend engineers join the platform team in April to work on the billing service.",
]


def write_pdf(pages: list[str], *, title: str = "", heading: str = "Quarterly operations review") -> bytes:
    """Each page: a heading line, then its paragraph wrapped (with a hyphenated break) in a narrow box."""
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_text((72, 72), heading, fontsize=14)
        page.insert_textbox(pymupdf.Rect(72, 100, 320, 500), f"{text} The figures were check-\ned twice.", fontsize=11)
    doc.set_metadata({"title": title})
    return doc.tobytes(deflate=True)


def image_page(doc: pymupdf.Document) -> None:
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pixmap.clear_with(180)
    doc.new_page().insert_image(pymupdf.Rect(72, 72, 500, 700), pixmap=pixmap)


def extract(data: bytes, settings: Settings, name: str = "report.pdf") -> Extracted:
    return extractor_for("application/pdf")(data, name, settings)


def test_one_unit_per_page_with_its_page_number_and_paragraphs(settings: Settings) -> None:
    extracted = extract(write_pdf(PAGES), settings)
    assert extracted.layout == "units"
    assert [u.locator for u in extracted.units] == [{"page": 1}, {"page": 2}, {"page": 3}]
    for unit, text in zip(extracted.units, PAGES):
        # the heading and the paragraph are separate blocks; the wrapped lines are one paragraph
        assert unit.text == f"Quarterly operations review\n\n{text} The figures were checked twice."
    chunks = chunk_extracted("doc", extracted, settings.chunk_max_tokens)
    assert [c.locator["page"] for c in chunks] == [1, 2, 3]
    assert "Frankfurt" in chunks[1].text and "Frankfurt" not in chunks[0].text + chunks[2].text
    assert extracted.metadata == {"pages": 3}


def test_a_long_page_is_cut_into_parts_that_keep_the_page(settings: Settings) -> None:
    long_page = " ".join(f"Sentence {i} of the migration plan describes one more step." for i in range(120))
    doc = pymupdf.open()
    doc.new_page()  # page 1 blank
    doc.new_page().insert_textbox(pymupdf.Rect(36, 36, 560, 800), long_page, fontsize=6)
    extracted = extract(doc.tobytes(), settings)
    chunks = chunk_extracted("doc", extracted, 64)
    assert len(chunks) > 3
    assert {c.locator["page"] for c in chunks} == {2}
    assert [c.locator["part"] for c in chunks] == list(range(len(chunks)))
    assert extracted.metadata["pages_without_text"] == [1]


def test_title_from_metadata_then_a_short_first_line_then_the_file_name(settings: Settings) -> None:
    assert extract(write_pdf(PAGES, title="  Q3   Review "), settings).title == "Q3 Review"
    assert extract(write_pdf(PAGES), settings).title == "Quarterly operations review"
    prose_first = extract(write_pdf([PAGES[0] * 2], heading=""), settings, name="q3.pdf")
    assert len(prose_first.units[0].text) > 120 and prose_first.title == "q3.pdf"


def test_a_scan_of_blank_pages_is_refused_after_ocr_found_nothing(settings: Settings) -> None:
    doc = pymupdf.open()
    image_page(doc)
    image_page(doc)
    with pytest.raises(BadInputError, match=r"^no text: 2 of 2 pages are images \(a scan\?\) and OCR found no text "
                                            r"on the 2 it read"):
        extract(doc.tobytes(), settings)


def test_blank_scanned_pages_in_a_text_pdf_are_listed_not_fatal(settings: Settings) -> None:
    doc = pymupdf.open(stream=write_pdf(PAGES[:1]), filetype="pdf")
    image_page(doc)
    extracted = extract(doc.tobytes(), settings)
    assert [u.locator["page"] for u in extracted.units] == [1]
    assert extracted.metadata["pages_without_text"] == [2] and extracted.metadata["pages_read_with_ocr"] == [2]


def test_a_scanned_page_is_read_with_ocr_and_cited_by_its_page(settings: Settings) -> None:
    data = scanned_pdf(["Residential lease agreement", "Tenant: Jordan Avery"],
                       ["Clause 14: the deposit of 2,400 euros", "is returned within 30 days of move-out."])
    extracted = extract(data, settings, name="lease.pdf")
    assert [u.locator for u in extracted.units] == [{"page": 1}, {"page": 2, "ocr": True}]
    assert "deposit" in extracted.units[1].text and "30 days" in extracted.units[1].text
    assert extracted.metadata["pages_read_with_ocr"] == [2] and "pages_without_text" not in extracted.metadata
    capped = settings.model_copy(update={"ocr_max_pages": 0})  # 0 is refused by the settings; a copy skips that
    assert extract(data, capped).metadata["pages_not_read_with_ocr"] == [2]


def test_an_image_bomb_on_a_scanned_page_is_not_drawn(settings: Settings) -> None:
    doc = pymupdf.open(stream=write_pdf(PAGES[:1]), filetype="pdf")
    image_page(doc)
    small = settings.model_copy(update={"ocr_max_pixels": 64 * 64 - 1})  # the page's image is 64x64
    extracted = extract(doc.tobytes(), small)
    assert extracted.metadata["pages_over_pixel_limit"] == [2] and len(extracted.units) == 1


def test_a_blank_pdf_is_refused(settings: Settings) -> None:
    doc = pymupdf.open()
    doc.new_page()
    with pytest.raises(BadInputError, match="^no text on any of its 1 page"):
        extract(doc.tobytes(), settings)


def test_a_password_protected_pdf_is_refused(settings: Settings) -> None:
    doc = pymupdf.open(stream=write_pdf(PAGES), filetype="pdf")
    locked = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    with pytest.raises(BadInputError, match="^encrypted PDF: it needs a password"):
        extract(locked, settings)


@pytest.mark.parametrize("keep", [0.2, 0.3, 0.6, 0.95])
def test_a_truncated_pdf_is_refused_not_half_read(settings: Settings, keep: float) -> None:
    data = write_pdf(PAGES)
    with pytest.raises(BadInputError, match="^truncated PDF"):
        extract(data[: int(len(data) * keep)], settings)


@pytest.mark.parametrize("data", [b"%PDF-1.7\n" + b"\x00garbage" * 5 + b"\n%%EOF\n", b"plain text, not a pdf", b""])
def test_bytes_that_are_not_a_pdf_are_refused(settings: Settings, data: bytes) -> None:
    with pytest.raises(BadInputError, match="^(not a readable PDF|empty file)"):
        extract(data, settings)


@pytest.mark.parametrize("bit", range(8))
def test_a_bit_flip_in_a_page_stream_is_reported_with_its_page(settings: Settings, bit: int) -> None:
    data = write_pdf(PAGES)
    xref = pymupdf.open(stream=data, filetype="pdf")[1].get_contents()[0]
    stream = re.search(rb"\n%d 0 obj\b.*?stream\r?\n" % xref, data, re.S)
    assert stream is not None
    flipped = bytearray(data)
    flipped[stream.end() + 20] ^= 1 << bit
    with pytest.raises(BadInputError, match=r"^damaged PDF: the content of page 2 is corrupt \(.*zlib error"):
        extract(bytes(flipped), settings)


def test_recall_cites_the_page(service: MemoryService, tmp_path: Path) -> None:
    path = tmp_path / "review.pdf"
    path.write_bytes(write_pdf(PAGES, title="Q3 operations review"))
    outcome = service.ingest(SCOPE, [path])
    assert outcome.report.errors == [] and outcome.report.chunks_added == 3
    hit = service.recall(SCOPE, "When does the Frankfurt data centre migration complete?", k=3).items[0]
    assert "Frankfurt" in hit.text
    assert hit.citations[0].locator["page"] == 2
    assert hit.citations[0].title == "Q3 operations review"


def test_unreadable_pdfs_land_in_ingest_errors_with_their_reason(service: MemoryService, tmp_path: Path) -> None:
    doc = pymupdf.open()
    image_page(doc)
    (tmp_path / "scan.pdf").write_bytes(doc.tobytes())
    (tmp_path / "cut.pdf").write_bytes(write_pdf(PAGES)[:900])
    service.ingest(SCOPE, [tmp_path / "scan.pdf", tmp_path / "cut.pdf"])
    reasons = {Path(e.uri).name: e.reason for e in service.store.ingest_errors(SCOPE)}
    assert reasons["scan.pdf"].startswith("no text: 1 of 1 pages are images")
    assert reasons["cut.pdf"].startswith("truncated PDF")
    assert service.store.counts(SCOPE)["documents"] == 0


def with_inflating_page(pages: list[str], inflated: int) -> bytes:
    """The pages, then one whose content stream inflates to `inflated` bytes of text operators."""
    doc = pymupdf.open(stream=write_pdf(pages), filetype="pdf") if pages else pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "x")
    font = page.get_fonts()[0][4]
    shown = b"(" + b"A" * 1000 + b") Tj\n"
    operators = f"BT /{font} 1 Tf 0 0 Td\n".encode() + shown * (inflated // len(shown)) + b"ET\n"
    xref = page.get_contents()[0]
    doc.update_stream(xref, zlib.compress(operators, 9), compress=False)
    doc.xref_set_key(xref, "Filter", "/FlateDecode")
    return doc.tobytes()


def test_a_page_whose_content_inflates_past_the_limit_is_left_out(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", pdf_max_page_content_bytes=1_000_000)

    extracted = extract(with_inflating_page(PAGES[:1], 4_000_000), settings)
    assert [u.locator["page"] for u in extracted.units] == [1]
    assert extracted.metadata["pages_over_content_limit"] == [2]

    with pytest.raises(BadInputError, match="content of 1 of 1 page.* inflates past the 1000000-byte limit"):
        extract(with_inflating_page([], 4_000_000), settings)
    assert "pages_over_content_limit" not in extract(with_inflating_page([], 900_000), settings).metadata
