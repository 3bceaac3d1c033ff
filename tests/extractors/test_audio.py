"""Audio: speech transcribed offline into timed units; damaged, silent or non-audio files refused with a reason.

Speech comes from espeak-ng (synthetic voices that tiny.en mostly gets right), so the transcript
assertions look for robust words only. The model loads once for the whole run.
"""

from __future__ import annotations

import importlib.util
import io
import math
import random
import shutil
import subprocess
import wave
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np
import pytest
from hypothesis import given, strategies as st

import mnemoflow.extractors.audio  # noqa: F401  (registers the audio types)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import Settings, load_settings
from mnemoflow.errors import BadInputError, ConfigError
from mnemoflow.extractors import Extracted, extractor_for
from mnemoflow.extractors.audio import SAMPLE_RATE, Spoken, speech_units, windows
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.hostile_inputs import mp3_silence

SCOPE = Scope("acme", "alex")
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None,
                                  reason="espeak-ng synthesises the test speech; apt-get install espeak-ng")

# A stand-up, one topic per clip, 2 s of silence between clips.
TOPICS = [
    "Good morning everyone, this is the weekly operations update.",
    "The warehouse in Denver finished its inventory count on Monday, and the numbers matched the system.",
    "Please send the budget spreadsheet to Maria before Friday. Finance still needs the travel costs for the "
    "second quarter.",
    "The support team answered four hundred tickets last week, and the average response time was under two hours.",
    "The new office in Lisbon opens in September. Twelve engineers will move there from the London team.",
    "The parking garage is closed for repairs next week, so please take the train.",
    "The quarterly review moved to Thursday at three pm.",
    "Our website will be down for maintenance on Saturday night between midnight and four in the morning.",
    "That is all for today. Thank you, and have a good week.",
]
REVIEW = 6  # the topic recall is asked about
PAUSE_S = 2.0


@dataclass(frozen=True)
class Recording:
    path: Path
    spans: list[tuple[float, float]]  # where each topic is spoken, in seconds

    @property
    def duration(self) -> float:
        return self.spans[-1][1]


def speak(text: str) -> bytes:
    return subprocess.run(["espeak-ng", "--stdout", text], check=True, capture_output=True).stdout


def join_with_pauses(clips: list[bytes], pause_s: float) -> tuple[bytes, list[tuple[float, float]]]:
    out, spans, at = io.BytesIO(), [], 0.0
    with wave.open(out, "wb") as joined:
        for n, clip in enumerate(clips):
            with wave.open(io.BytesIO(clip)) as part:
                if n == 0:
                    joined.setparams(part.getparams())
                frames, rate = part.readframes(part.getnframes()), part.getframerate()
            if n:
                joined.writeframes(b"\x00\x00" * int(rate * pause_s))
                at += int(rate * pause_s) / rate
            joined.writeframes(frames)
            spans.append((at, at + len(frames) / 2 / rate))
            at = spans[-1][1]
    return out.getvalue(), spans


def tone_wav(seconds: float = 2.0, rate: int = 16_000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(b"".join(int(8000 * math.sin(2 * math.pi * 440 * i / rate)).to_bytes(2, "little", signed=True)
                                 for i in range(int(seconds * rate))))
    return out.getvalue()


def silent_wav(seconds: float, rate: int = 16_000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(b"\x00\x00" * int(seconds * rate))
    return out.getvalue()


def reencode(wav_bytes: bytes, container: str, codec: str, rate: int) -> bytes:
    """The same sound in another container, encoded with the FFmpeg that PyAV bundles."""
    out = io.BytesIO()
    with av.open(io.BytesIO(wav_bytes)) as source, av.open(out, "w", format=container) as target:
        stream = target.add_stream(codec, rate=rate, layout="mono")
        resampler = av.AudioResampler(format=stream.codec_context.codec.audio_formats[0].name, layout="mono",
                                      rate=rate)
        for frame in [*source.decode(audio=0), None]:
            for resampled in resampler.resample(frame):
                target.mux(stream.encode(resampled))
        target.mux(stream.encode(None))
    return out.getvalue()


def extract(data: bytes, name: str, settings: Settings) -> Extracted:
    return extractor_for("audio/wav")(data, name, settings)


@pytest.fixture(scope="session")
def standup(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    data, spans = join_with_pauses([speak(t) for t in TOPICS], PAUSE_S)
    path = tmp_path_factory.mktemp("audio") / "standup.wav"
    path.write_bytes(data)
    return Recording(path, spans)


@pytest.fixture(scope="module")
def transcribed(standup: Recording, tmp_path_factory: pytest.TempPathFactory) -> Extracted:
    return extract(standup.path.read_bytes(), standup.path.name, load_settings(tmp_path_factory.mktemp("home")))


# ---------------------------------------------------------------------- units, without a model
def test_units_close_at_the_token_cap_at_a_long_pause_and_at_a_minute() -> None:
    line = "x" * 96  # 24 tokens
    under_cap = speech_units([Spoken(i * 5.0, i * 5.0 + 4.0, line) for i in range(5)], max_tokens=50)
    assert [u.locator["segments"] for u in under_cap] == [2, 2, 1]

    steady = [Spoken(i * 4.0, i * 4.0 + 3.9, "word") for i in range(20)]  # 80 s, no pause
    assert [(u.locator["start"], u.locator["end"]) for u in speech_units(steady, 1000)] == [(0.0, 59.9), (60.0, 79.9)]

    paused = [Spoken(i * 4.0, i * 4.0 + 3.9, "word") for i in range(9)] + [Spoken(40.0, 43.9, "after")]
    assert [u.locator["segments"] for u in speech_units(paused, 1000)] == [9, 1]  # 4.1 s of silence after 35.9 s of speech
    early_pause = [Spoken(0.0, 5.0, "a"), Spoken(10.0, 15.0, "b")]
    assert len(speech_units(early_pause, 1000)) == 1  # 5 s of speech is too little to close on


def test_a_unit_cites_its_time_range() -> None:
    units = speech_units([Spoken(3723.456, 3725.0, " Hello there. "), Spoken(3725.2, 3731.999, " "),
                          Spoken(3726.0, 3729.994, "Bye now.")], 100)

    assert [(u.text, u.locator, u.context, u.split) for u in units] == [
        ("Hello there. Bye now.", {"start": 3723.46, "end": 3729.99, "segments": 2}, "[1:02:03-1:02:09]", "prose")]


@given(st.lists(st.tuples(st.floats(0, 20), st.floats(0, 20), st.text(min_size=1, max_size=80)), max_size=60),
       st.integers(16, 128))
def test_units_keep_every_word_in_order_under_the_cap(raw: list[tuple[float, float, str]], max_tokens: int) -> None:
    at, segments = 0.0, []
    for gap, length, text in raw:
        segments.append(Spoken(at + gap, at + gap + length, text))
        at += gap + length
    units = speech_units(segments, max_tokens)

    assert " ".join(u.text for u in units).split() == " ".join(s.text for s in segments).split()
    for unit, following in zip(units, units[1:]):
        assert unit.locator["start"] <= unit.locator["end"] <= following.locator["start"]
    for unit in units:
        assert len(unit.text) <= max_tokens * 4 or unit.locator["segments"] == 1
        assert unit.locator["end"] - unit.locator["start"] <= 60.01 or unit.locator["segments"] == 1


# ---------------------------------------------------------------------- bad input, refused before the model runs
def flip_bits(data: bytes, share: float, seed: int = 7) -> bytes:
    rng, damaged = random.Random(seed), bytearray(data)
    for _ in range(int(len(data) * share)):
        at = rng.randrange(64, len(data))
        damaged[at] ^= 1 << rng.randrange(8)
    return bytes(damaged)


def test_unreadable_audio_is_refused_with_the_decoders_reason(settings: Settings) -> None:
    wav = tone_wav()
    mp3 = reencode(wav, "mp3", "libmp3lame", 16_000)
    cases = {
        "empty.wav": (b"", "empty file"),
        "notes.mp3": (b"Minutes of the meeting: nothing to report.\n" * 40, "not readable as audio: Invalid data"),
        "noise.mp3": (random.Random(1).randbytes(20_000), "not readable as audio: Invalid data"),
        "cut.wav": (wav[: len(wav) // 2], r"truncated or damaged audio: decoded 1\.0 s of the 2\.0 s the file declares"),
        "header-only.wav": (wav[:44], "truncated or damaged audio: decoded 0.0 s of the 2.0 s"),
        "cut.mp3": (mp3[: len(mp3) // 2], r"truncated or damaged audio: decoded [01]\.\d s of the 2\.\d s"),
        "flipped.mp3": (flip_bits(mp3, 0.02), "damaged audio"),
    }
    for name, (data, reason) in cases.items():
        with pytest.raises(BadInputError, match=reason):
            extract(data, name, settings)


def test_silence_is_refused_rather_than_ingested_empty(settings: Settings) -> None:
    with pytest.raises(BadInputError, match=r"^no speech found in 5 s of audio$"):
        extract(silent_wav(5.0), "quiet.wav", settings)


def test_a_recording_past_the_length_limit_is_refused_before_it_is_decoded(settings: Settings,
                                                                           tmp_path: Path) -> None:
    short = settings.model_copy(update={"audio_max_seconds": 300})
    with pytest.raises(BadInputError, match="^5 s of audio, over the audio_max_seconds limit of 2 s$"):
        extract(silent_wav(5.0), "quiet.wav", settings.model_copy(update={"audio_max_seconds": 2}))
    mp3_silence(12)(tmp_path / "long.mp3", True)  # ten minutes of repeated frames, no header with a length
    with pytest.raises(BadInputError, match=r"^\d+ s of audio, over the audio_max_seconds limit of 300 s$"):
        extract((tmp_path / "long.mp3").read_bytes(), "long.mp3", short)


def test_a_recording_is_cut_into_windows_where_it_is_quiet() -> None:
    """Memory stays that of one window whatever the length; a cut falls in the quietest 0.1 s of
    the ten seconds before each mark, not inside a word."""
    signal = np.random.default_rng(1).uniform(-0.5, 0.5, 45 * SAMPLE_RATE).astype(np.float32)
    for pause in (17.3, 35.0):  # one before each mark (20 s, then 17.3 + 20 s)
        signal[int(pause * SAMPLE_RATE) : int((pause + 0.2) * SAMPLE_RATE)] = 0.0
    pieces = np.array_split(signal, 97)

    cut = list(windows(pieces, window_s=20))

    assert [start for start, _ in cut] == [0.0, 17.3, 35.0]
    assert [len(audio) / SAMPLE_RATE for _, audio in cut] == [17.3, 17.7, 10.0]
    assert np.array_equal(np.concatenate([audio for _, audio in cut]), signal)


def test_a_missing_engine_or_model_is_a_configuration_error(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a CTranslate2 model directory"):
        extract(tone_wav(), "a.wav", settings.model_copy(update={"whisper_model_path": tmp_path}))
    openai = settings.model_copy(update={"audio_engine": "openai-whisper"})
    with pytest.raises(ConfigError, match="whisper_model_path to name a checkpoint file"):
        extract(tone_wav(), "a.wav", openai)
    if importlib.util.find_spec("whisper") is None:
        checkpoint = tmp_path / "tiny.en.pt"
        checkpoint.write_bytes(b"not used")
        with pytest.raises(ConfigError, match="needs the openai-whisper package"):
            extract(tone_wav(), "a.wav", openai.model_copy(update={"whisper_model_path": checkpoint}))


# ---------------------------------------------------------------------- speech
@needs_espeak
def test_speech_becomes_timed_units_that_cover_the_recording(transcribed: Extracted, standup: Recording,
                                                            settings: Settings) -> None:
    text = " ".join(u.text for u in transcribed.units).lower()
    assert "quarterly review" in text and "thursday" in text
    heard = [w for w in ("warehouse", "denver", "budget", "spreadsheet", "lisbon", "september", "parking", "website")
             if w in text]
    assert len(heard) >= 6, text

    assert (transcribed.mime, transcribed.title, transcribed.layout) == ("audio/wav", "standup.wav", "units")
    assert transcribed.metadata == {"duration": pytest.approx(standup.duration, abs=0.05), "language": "en",
                                    "engine": "faster-whisper", "model": "tiny.en"}
    assert len(transcribed.units) >= 2
    bounds = [(u.locator["start"], u.locator["end"]) for u in transcribed.units]
    assert bounds[0][0] < standup.spans[0][0] + 1.0 and bounds[-1][1] > standup.spans[-1][1] - 1.5
    for (start, end), (following, _) in zip(bounds, bounds[1:]):
        assert 0 <= start < end <= following
    assert all(end - start <= 60 for start, end in bounds) and bounds[-1][1] <= standup.duration + 0.01
    for unit in transcribed.units:
        assert unit.context == "[{:02d}:{:02d}-{:02d}:{:02d}]".format(
            *divmod(int(unit.locator["start"]), 60), *divmod(int(unit.locator["end"]), 60))

    chunks = chunk_extracted("doc", transcribed, settings.chunk_max_tokens)
    assert [c.locator for c in chunks] == [u.locator for u in transcribed.units]  # a unit fits one chunk


@needs_espeak
@pytest.mark.parametrize(("name", "container", "codec", "rate"), [
    ("memo.ogg", "ogg", "libopus", 48_000), ("memo.m4a", "ipod", "aac", 22_050), ("memo.mp3", "mp3", "libmp3lame", 22_050)])
def test_other_containers_decode_the_same_speech(settings: Settings, name: str, container: str, codec: str,
                                                 rate: int) -> None:
    data = reencode(speak(TOPICS[REVIEW]), container, codec, rate)
    extracted = extract(data, name, settings)

    assert "quarterly" in extracted.units[0].text.lower() and "thursday" in extracted.units[0].text.lower()
    assert extracted.mime == {"ogg": "audio/ogg", "m4a": "audio/mp4", "mp3": "audio/mpeg"}[name.rsplit(".")[1]]
    assert 2.0 < extracted.metadata["duration"] < 4.5


@needs_espeak
@pytest.mark.slow
def test_recall_cites_when_the_answer_was_said(standup: Recording, tmp_path: Path) -> None:
    broken = tmp_path / "broken.mp3"
    broken.write_bytes(b"ID3 this is not really an mp3")
    with MemoryService(load_settings(tmp_path / "home")) as service:
        outcome = service.ingest(SCOPE, [standup.path, broken])
        assert [(Path(e.uri).name, e.reason) for e in outcome.report.errors] == [
            ("broken.mp3", "not readable as audio: Invalid data found when processing input")]

        hit = service.recall(SCOPE, "when is the quarterly review?", k=3).items[0]

    said_from, said_to = standup.spans[REVIEW]
    citation = hit.citations[0]
    assert "quarterly review" in hit.text.lower()
    assert citation.title == "standup.wav"
    assert citation.locator["start"] <= said_from + 1.0 and citation.locator["end"] >= said_to - 1.0
    assert citation.locator["end"] - citation.locator["start"] < standup.duration - 10  # not the whole recording
