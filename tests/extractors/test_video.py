"""Video decoded with PyAV: speech transcribed (faster-whisper), text on screen read with OCR where the
picture changes, each cited by its time; containers MP4, MKV, MOV and WebM."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors import Extracted, extractor_for, mime_for
from tests.media import has_espeak, speech, text_image, video

needs_espeak = pytest.mark.skipif(not has_espeak(), reason="espeak-ng speaks the test audio; apt-get install espeak-ng")
SLIDES = [(0.0, text_image(["Launch review", "Q3 mobile release"], size=60)),
          (5.0, text_image(["Risks", "Push notifications lag on Android"], size=54))]


def extract(data: bytes, name: str, settings: Settings) -> Extracted:
    return extractor_for(mime_for(name))(data, name, settings)


@needs_espeak
def test_speech_and_slides_are_units_cited_by_time(settings: Settings, tmp_path: Path) -> None:
    audio = speech("Welcome to the launch review. The codeword for this release is pelican.", tmp_path)
    extracted = extract(video(SLIDES, audio=audio, seconds=9.0), "review.mp4", settings)
    spoken = [u for u in extracted.units if not u.locator.get("frame")]
    screens = [u for u in extracted.units if u.locator.get("frame")]
    assert "pelican" in " ".join(u.text for u in spoken).lower()
    assert spoken[0].locator["start"] < 1.0 and spoken[0].context.startswith("[00:0")
    assert len(screens) == 2 and extracted.metadata["frames_read_with_ocr"] == 2
    assert "Launch review" in screens[0].text and "Android" in screens[1].text
    assert screens[0].locator["start"] == 0.0 and 4.0 <= screens[0].locator["end"] <= 6.0
    assert 5.0 <= screens[1].locator["start"] <= 6.5 and screens[1].locator["end"] == pytest.approx(9.0, abs=0.3)
    assert screens[1].locator["lines"] == [1, 2] and screens[1].context.endswith("on screen")
    assert extracted.metadata["duration"] == pytest.approx(9.0, abs=0.3)


def test_a_silent_screen_recording_in_mkv_is_read_from_its_frames(settings: Settings) -> None:
    slides = [(0.0, text_image(["Quarterly budget"], size=60)), (3.0, text_image(["Hiring plan"], size=60))]
    extracted = extract(video(slides, seconds=6.0, container="matroska"), "screen.mkv", settings)
    assert [u.text for u in extracted.units] == ["Quarterly budget", "Hiring plan"]
    assert "language" not in extracted.metadata


def test_a_slide_shown_twice_in_a_row_is_one_unit_and_webm_and_mov_decode(settings: Settings) -> None:
    same = text_image(["Roadmap 2025"], size=60)
    slides = [(0.0, same), (2.0, text_image(["Roadmap 2025"], size=60, background="#fafafa"))]
    extracted = extract(video(slides, seconds=4.0, container="webm"), "deck.webm", settings)
    assert [u.text for u in extracted.units] == ["Roadmap 2025"]
    mov = extract(video(slides, seconds=3.0, container="mov"), "deck.mov", settings)
    assert mov.units[0].text == "Roadmap 2025" and mov.mime == "video/quicktime"


def test_a_video_of_nothing_is_recorded_as_such_and_garbage_is_refused(settings: Settings) -> None:
    from PIL import Image

    blank = Image.new("RGB", (320, 180), "#336699")
    extracted = extract(video([(0.0, blank)], seconds=2.0), "blank.mp4", settings)
    assert extracted.units == [] and extracted.no_text == "no speech and no text on screen"
    with pytest.raises(BadInputError, match="not readable as video"):
        extract(b"\x00\x00\x00\x18ftypmp42 this is not a movie", "fake.mp4", settings)
    with pytest.raises(BadInputError, match="empty file"):
        extract(b"", "empty.webm", settings)


def test_frames_past_the_limit_are_counted_not_read(settings: Settings) -> None:
    slides = [(n * 2.0, text_image([f"Slide number {n + 1}"], size=60)) for n in range(4)]
    capped = settings.model_copy(update={"video_max_ocr_frames": 2})
    extracted = extract(video(slides, seconds=8.5), "deck.mp4", capped)
    assert len(extracted.units) == 2 and extracted.metadata["frames_not_read"].startswith("2 ")
