"""Video (MP4, MOV, MKV, WebM): its speech transcribed as audio is, and the text on screen read with OCR.

Decoded with PyAV, whose wheel carries its own FFmpeg (the codecs included): no system ffmpeg.
The audio track goes through the audio extractor's path (faster-whisper, 30-60 s units cited
`00:00-00:41`). The picture is looked at every `video_frame_interval_s`; where it changed (a new
slide of a recorded deck, a new screen of a demo) and then held still for one interval, that frame
is read with OCR, at most `video_max_ocr_frames` of them. Its text is a unit cited by the time the
picture was shown (`00:12-00:30`) and its lines. A video with neither speech nor text on screen is
recorded as such, like a picture without text.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.audio import speech_units, transcribed
from mnemoflow.extractors.image import page_unit
from mnemoflow.extractors.ocr import check_pixels, read_lines, scaled_for_ocr
from mnemoflow.extractors.registry import Extracted, TextUnit, mime_for, register
from mnemoflow.timeutil import clock

# Pictures are compared as 320x180 grey thumbnails: a pixel changed when it moved by more than
# CHANGED_LEVEL of 255, the picture when more than CHANGED_SHARE of its pixels (29) did. One digit of
# slide text changes about 50 of them; a mouse pointer about 25, compression flicker none (it stays
# under the level once averaged into the thumbnail).
THUMB = (320, 180)
CHANGED_LEVEL = 32
CHANGED_SHARE = 0.0005


@dataclass
class _Shown:
    """A picture the video held still, from `start` to `end` seconds."""

    start: float
    end: float
    thumb: np.ndarray
    frame: Any = None  # the decoded frame, until it is read


def _differs(a: np.ndarray, b: np.ndarray) -> bool:
    changed = np.abs(a.astype(np.int16) - b.astype(np.int16)) > CHANGED_LEVEL
    return float(changed.mean()) > CHANGED_SHARE


def _probe(data: bytes, settings: Settings) -> tuple[bool, bool, float | None]:
    """(has audio, has video, declared seconds); refuses what cannot be opened or is too long."""
    import av

    if not data:
        raise BadInputError("empty file: no video")
    try:
        with av.open(io.BytesIO(data), metadata_errors="ignore") as container:
            seconds = container.duration / 1_000_000 if container.duration else None
            audio, video = bool(container.streams.audio), bool(container.streams.video)
            if video:
                context = container.streams.video[0].codec_context
                check_pixels(context.width, context.height, settings, what="video picture")
    except av.error.FFmpegError as exc:
        raise BadInputError(f"not readable as video: {exc.strerror or exc}") from None
    if seconds and seconds > settings.audio_max_seconds:
        raise BadInputError(f"{seconds / 3600:.1f} hours of video, over the audio_max_seconds limit of "
                            f"{settings.audio_max_seconds / 3600:.1f} hours")
    if not audio and not video:
        raise BadInputError("neither an audio nor a video stream in this file")
    return audio, video, seconds


def _samples(data: bytes, settings: Settings) -> Iterator[tuple[float, Any]]:
    """(seconds, frame) every `video_frame_interval_s` of the first video stream."""
    import av

    interval, due = settings.video_frame_interval_s, 0.0
    try:
        with av.open(io.BytesIO(data), metadata_errors="ignore") as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            for frame in container.decode(stream):
                if frame.time is None or frame.time < due:
                    continue
                if frame.time > settings.audio_max_seconds:
                    raise BadInputError(f"more than {settings.audio_max_seconds:.0f} s of video, over the "
                                        "audio_max_seconds limit")
                due = frame.time + interval
                yield frame.time, frame
    except av.error.FFmpegError as exc:
        raise BadInputError(f"damaged video: {exc.strerror or exc}") from None


def _still_pictures(data: bytes, settings: Settings) -> Iterator[_Shown]:
    """Pictures the video held still for at least one interval, each once, in order; the last one's
    `end` is where the video's last sample was."""
    shown: _Shown | None = None  # the picture last yielded (read), while the video still shows it
    pending: _Shown | None = None  # a new picture, waiting to be seen still once more
    last = 0.0
    for at, frame in _samples(data, settings):
        last = at
        thumb = frame.to_ndarray(width=THUMB[0], height=THUMB[1], format="gray")
        if shown is not None and not _differs(thumb, shown.thumb):
            shown.end, pending = at, None
            continue
        if pending is not None and not _differs(thumb, pending.thumb):
            if shown is not None:
                yield shown
            shown, pending = pending, None
            shown.end = at
            continue
        pending = _Shown(at, at, thumb, frame)
    if pending is not None and (shown is None or _differs(pending.thumb, shown.thumb)):
        if shown is not None:
            yield shown
        shown = pending
    if shown is not None:
        shown.end = max(shown.end, last)
        yield shown


def screen_units(data: bytes, settings: Settings, duration: float | None) -> tuple[list[TextUnit], dict[str, Any]]:
    """The text on screen, one unit per picture that held still (a picture that reads the same as the
    one before extends it), and what was left unread."""
    units: list[tuple[float, float, list[str]]] = []
    read = skipped = 0
    interval = settings.video_frame_interval_s
    for picture in _still_pictures(data, settings):
        if read >= settings.video_max_ocr_frames:
            skipped += 1
            continue
        read += 1
        lines = read_lines(scaled_for_ocr(picture.frame.to_image(), settings), settings)
        picture.frame = None
        end = picture.end + interval if duration is None else min(picture.end + interval, duration)
        if units and units[-1][2] == lines:
            units[-1] = (units[-1][0], end, lines)
        elif lines:
            units.append((picture.start, end, lines))
    found = [page_unit(lines, {"start": round(start, 2), "end": round(end, 2), "frame": True},
                       context=f"[{clock(start)}-{clock(end)}] on screen") for start, end, lines in units]
    facts: dict[str, Any] = {"frames_read_with_ocr": read}
    if skipped:
        facts["frames_not_read"] = f"{skipped} (over video_max_ocr_frames)"
    return found, facts


@register("video/mp4", "video/quicktime", "video/x-matroska", "video/webm")
def extract_video(data: bytes, name: str, settings: Settings) -> Extracted:
    has_audio, has_video, declared = _probe(data, settings)
    units: list[TextUnit] = []
    metadata: dict[str, Any] = {}
    duration = declared
    if has_audio:
        segments, heard, language, model = transcribed(data, settings)
        units += speech_units(segments, settings.chunk_max_tokens // 2)
        duration = duration or heard
        metadata.update({"language": language, "engine": settings.audio_engine, "model": model})
    if has_video:
        screen, facts = screen_units(data, settings, duration)
        units += screen
        metadata.update(facts, ocr_engine=settings.ocr_engine)
    if duration:
        metadata["duration"] = round(duration, 2)
    units.sort(key=lambda u: (u.locator["start"], bool(u.locator.get("frame"))))
    return Extracted(mime=mime_for(name), title=name, layout="units", units=units, metadata=metadata,
                     no_text=None if units else "no speech and no text on screen")
