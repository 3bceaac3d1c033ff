"""A folder as a person has one: a whiteboard photo, an error screenshot, a scanned two-page lease and a
recorded meeting. `mnemoflow ingest` reads all of it (exit 0) and each is recalled with its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemoflow.cli import main
from tests.media import encoded, has_espeak, photo_like, scanned_pdf, speech, text_image, video


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def recall(capsys: pytest.CaptureFixture[str], home: str, query: str) -> list[dict]:
    code, out, _ = run(capsys, "recall", query, "--home", home, "--json", "--budget", "512")
    assert code == 0
    return json.loads(out)["items"]


def cited(items: list[dict], file_name: str, word: str) -> dict:
    """The locator of the first item from `file_name` whose text holds `word`."""
    for item in items:
        for citation in item["citations"]:
            if (citation.get("uri") or "").endswith(file_name) and word.lower() in item["text"].lower():
                return citation["locator"]
    raise AssertionError(f"{word!r} from {file_name} not recalled: {[i['text'] for i in items]}")


@pytest.mark.skipif(not has_espeak(), reason="espeak-ng speaks the meeting; apt-get install espeak-ng")
def test_photo_screenshot_scan_and_video_are_ingested_and_recalled_with_their_places(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    board = ["Offsite planning", "Venue: the boathouse in Hamble", "Budget owner: Teodora"]
    (folder / "whiteboard.png").write_bytes(encoded(photo_like(text_image(board)), "PNG"))
    shot = text_image(["Deploy failed", "ERROR: quota exceeded for bucket invoices-eu"], size=30,
                      background="#202124", ink="#e8eaed")
    (folder / "screenshot.jpg").write_bytes(encoded(shot, "JPEG", quality=88))
    (folder / "lease.pdf").write_bytes(scanned_pdf(
        ["Tenancy agreement", "Landlord: Harbour Lettings"],
        ["Clause 9: pets are allowed with a deposit", "of 350 pounds paid before moving in."]))
    audio = speech("Thanks for joining the retro. The codeword for the next sprint is marmalade.", tmp_path)
    (folder / "retro.mp4").write_bytes(video([(0.0, text_image(["Sprint retro"], size=60))], audio=audio))

    home = str(tmp_path / "home")
    code, out, err = run(capsys, "ingest", str(folder), "--home", home)
    assert code == 0, err
    assert "4 documents changed" in out

    assert cited(recall(capsys, home, "Where is the offsite venue?"), "whiteboard.png", "boathouse")["lines"][0] >= 1
    assert "lines" in cited(recall(capsys, home, "why did the deploy fail? quota"), "screenshot.jpg", "quota")
    lease = cited(recall(capsys, home, "what deposit do pets need?"), "lease.pdf", "350")
    assert lease["page"] == 2 and lease["ocr"] is True
    retro = cited(recall(capsys, home, "what is the codeword for the next sprint?"), "retro.mp4", "marmalade")
    assert retro["start"] < retro["end"] and "frame" not in retro
