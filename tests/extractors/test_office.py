"""DOCX: headings give heading paths, tables give rows; zip bombs and damaged archives are refused."""

import io
import random
import struct
import zipfile
from pathlib import Path

import docx
import pytest

import mnemoflow.extractors.office  # noqa: F401  (registers the DOCX type)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for
from mnemoflow.extractors.office import DOCX_MIME, MAX_RATIO, uncompressed_cap
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("acme", "alex")


def handbook(*, core_title: str = "", with_title: bool = True) -> bytes:
    document = docx.Document()
    document.core_properties.title = core_title
    if with_title:
        document.add_heading("Operations Handbook", 0)
    document.add_paragraph("How the platform team runs production.")
    document.add_heading("Deployment", 1)
    document.add_paragraph("Deploys go out on Tuesdays after the change review.")
    document.add_heading("Rollback", 2)
    document.add_paragraph("Roll back first and debug later; the previous image stays warm for an hour.")
    document.add_heading("On-call", 1)
    document.add_paragraph("# of pages per week stays under five.")
    table = document.add_table(rows=3, cols=3)
    for row, cells in zip(table.rows, [("Region", "Owner", "Pager"), ("eu-west-1", "Dana", "+44 20 7946 0001"),
                                       ("Note", "", "")]):
        for cell, text in zip(row.cells, cells):
            cell.text = text
    table.cell(2, 0).merge(table.cell(2, 2)).text = "Escalate to the SRE lead after 30 minutes"
    document.add_paragraph("Hand over every Monday at 10:00.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def extract(data: bytes, settings: Settings, name: str = "handbook.docx") -> Extracted:
    return extractor_for(DOCX_MIME)(data, name, settings)


def zip_of(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_headings_become_heading_paths_and_tables_rows(settings: Settings) -> None:
    extracted = extract(handbook(), settings)
    assert extracted.layout == "markdown" and extracted.title == "Operations Handbook"
    assert "# Operations Handbook\n\nHow the platform team" in extracted.text
    assert "## Deployment" in extracted.text and "### Rollback" in extracted.text
    chunks = chunk_extracted("doc", extracted, settings.chunk_max_tokens)
    paths = {c.text.split(".")[0].split(";")[0]: c.locator["heading_path"] for c in chunks}
    assert paths["How the platform team runs production"] == ["Operations Handbook"]
    assert paths["Deploys go out on Tuesdays after the change review"] == ["Operations Handbook", "Deployment"]
    assert paths["Roll back first and debug later"] == ["Operations Handbook", "Deployment", "Rollback"]
    on_call = chunks[-1]
    assert on_call.locator["heading_path"] == ["Operations Handbook", "On-call"]
    # a paragraph that looks like a markdown heading stays text; a merged cell is written once
    assert on_call.text == (
        "\\# of pages per week stays under five.\n\n"
        "Region | Owner | Pager\neu-west-1 | Dana | +44 20 7946 0001\nEscalate to the SRE lead after 30 minutes\n\n"
        "Hand over every Monday at 10:00."
    )


def test_without_a_title_style_heading_1_is_the_root(settings: Settings) -> None:
    extracted = extract(handbook(with_title=False), settings)
    chunks = chunk_extracted("doc", extracted, settings.chunk_max_tokens)
    assert [c.locator["heading_path"] for c in chunks] == [[], ["Deployment"], ["Deployment", "Rollback"], ["On-call"]]
    assert extracted.title == "Deployment"


def test_title_prefers_the_core_properties(settings: Settings) -> None:
    assert extract(handbook(core_title="Ops  Handbook v2"), settings).title == "Ops Handbook v2"
    empty = docx.Document()
    empty.add_paragraph("Just one line.")
    buffer = io.BytesIO()
    empty.save(buffer)
    assert extract(buffer.getvalue(), settings, name="notes.docx").title == "notes.docx"


def test_a_custom_style_based_on_a_heading_is_a_heading(settings: Settings) -> None:
    document = docx.Document()
    custom = document.styles.add_style("Runbook Step", docx.enum.style.WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = document.styles["Heading 1"]
    document.add_paragraph("Restart the queue", style="Runbook Step")
    document.add_paragraph("Drain it first.")
    buffer = io.BytesIO()
    document.save(buffer)
    chunks = chunk_extracted("doc", extract(buffer.getvalue(), settings), 256)
    assert [(c.text, c.locator["heading_path"]) for c in chunks] == [("Drain it first.", ["Restart the queue"])]


def test_a_document_without_text_is_refused(settings: Settings) -> None:
    document = docx.Document()
    document.add_heading("Only a heading", 1)
    buffer = io.BytesIO()
    document.save(buffer)
    with pytest.raises(BadInputError, match="^empty document"):
        extract(buffer.getvalue(), settings)


def test_a_zip_bomb_is_refused_before_it_is_inflated(settings: Settings) -> None:
    bomb = zip_of({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:t>" + b"A" * 8_000_000})
    assert len(bomb) < 20_000
    with pytest.raises(BadInputError, match=rf"^DOCX member word/document.xml inflates \d+x .*{MAX_RATIO}x limit"):
        extract(bomb, settings)


def test_the_total_inflated_size_is_capped_by_the_file_limit(settings: Settings) -> None:
    small = settings.model_copy(update={"max_file_bytes": 50_000})
    assert uncompressed_cap(small) == 1_000_000 and uncompressed_cap(settings) == 100_000_000
    noise = random.Random(3).randbytes(600_000)  # incompressible: the ratio check does not fire
    archive = zip_of({"word/media/a.bin": noise, "word/media/b.bin": noise}, zipfile.ZIP_STORED)
    with pytest.raises(BadInputError, match=r"^DOCX inflates to 1200000 bytes, over the 1000000-byte limit"):
        extract(archive, small)


def test_a_truncated_docx_is_refused(settings: Settings) -> None:
    data = handbook()
    with pytest.raises(BadInputError, match="^not a DOCX: not a zip archive"):
        extract(data[: len(data) // 2], settings)


def _member_data_offset(data: bytes, name: str) -> tuple[int, int]:
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
    return info.header_offset + 30 + name_len + extra_len, info.compress_size


@pytest.mark.parametrize("position", [0.25, 0.5, 0.75])
def test_a_bit_flip_in_the_document_is_refused(settings: Settings, position: float) -> None:
    data = handbook()
    start, size = _member_data_offset(data, "word/document.xml")
    flipped = bytearray(data)
    flipped[start + int(size * position)] ^= 0x20
    with pytest.raises(BadInputError, match="^corrupt DOCX: "):
        extract(bytes(flipped), settings)


@pytest.mark.parametrize(("data", "reason"), [
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500), "^not an Office Open XML zip: a password-protected DOCX or a legacy"),
    (b"PK\x03\x04 not really a zip", "^not a DOCX: not a zip archive"),
    (zip_of({"hello.txt": b"hi"}), "^not a Word document: "),
])
def test_other_files_named_docx_are_refused(settings: Settings, data: bytes, reason: str) -> None:
    with pytest.raises(BadInputError, match=reason):
        extract(data, settings)


def test_recall_cites_the_heading_path(service: MemoryService, tmp_path: Path) -> None:
    path = tmp_path / "handbook.docx"
    path.write_bytes(handbook())
    bomb = tmp_path / "bomb.docx"
    bomb.write_bytes(zip_of({"word/document.xml": b"A" * 8_000_000}))
    outcome = service.ingest(SCOPE, [path, bomb])
    assert [Path(e.uri).name for e in outcome.report.errors] == ["bomb.docx"]
    assert "zip bomb" in outcome.report.errors[0].reason
    hit = service.recall(SCOPE, "what do we do when a deploy goes wrong, roll back?", k=3).items[0]
    assert "Roll back first" in hit.text
    assert hit.citations[0].locator["heading_path"] == ["Operations Handbook", "Deployment", "Rollback"]
    assert hit.citations[0].title == "Operations Handbook"
