"""Ingest speed of scanned pages and of video, through `MemoryService.ingest` (extraction with OCR and
transcription, chunks, DuckDB, embeddings, LanceDB), wall and CPU time.

A scanned PDF of `--pages` pages (each a photo-like image of eight lines of text, no text layer) and a
video of `--minutes` minutes: espeak-ng reading a text, over slides that change every 20 s (960x540,
5 fps, H.264 and AAC, encoded with PyAV). Reported: seconds per scanned page and per minute of video.

    .venv/bin/python bench/ingest_media.py --pages 4 --minutes 1
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mnemoflow.config import configure_runtime, load_settings  # noqa: E402
from mnemoflow.service import MemoryService  # noqa: E402
from mnemoflow.storage import Scope  # noqa: E402
from tests.media import encoded, has_espeak, photo_like, speech, text_image, video  # noqa: E402

SCOPE = Scope("bench", "media")
WORDS = ("invoice shipment budget review planning deadline contract supplier warehouse customer refund "
         "schedule meeting report quarter target release feature roadmap hiring").split()


def lines(page: int) -> list[str]:
    return [f"{page}.{n} " + " ".join(WORDS[(page * 7 + n * 3 + k) % len(WORDS)] for k in range(6))
            for n in range(1, 9)]


def scanned(pages: int) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for page in range(1, pages + 1):
        image = photo_like(text_image(lines(page), size=34, width=1400), seed=page, angle=0.7)
        doc.new_page().insert_image(pymupdf.Rect(0, 0, 595, 842), stream=encoded(image, "PNG"))
    return doc.tobytes()


def meeting(minutes: float, tmp: Path) -> bytes:
    sentence = "We reviewed the supplier contract and the warehouse schedule for the next quarter. "
    audio = speech(sentence * int(minutes * 6), tmp)
    seconds = minutes * 60
    slides = [(t, text_image(lines(int(t // 20) + 1)[:4], size=48)) for t in range(0, int(seconds), 20)]
    return video(slides, audio=audio, seconds=seconds)


def timed(service: MemoryService, path: Path) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = service.ingest(SCOPE, [path])
    assert not outcome.report.errors, outcome.report.errors
    return {"seconds": round(time.perf_counter() - wall, 1), "cpu_s": round(time.process_time() - cpu, 1),
            "chunks": outcome.report.chunks_added}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=1.0)
    args = parser.parse_args()
    configure_runtime()
    with tempfile.TemporaryDirectory(prefix="bench-media-") as scratch:
        tmp = Path(scratch)
        (tmp / "scan.pdf").write_bytes(scanned(args.pages))
        with MemoryService(load_settings(home=tmp / "home")) as service:
            service.recall(SCOPE, "warm-up", token_budget=64)  # the embedder loads outside the timing
            warm = tmp / "warm.png"  # and so do the OCR models
            warm.write_bytes(encoded(text_image(["warm up"]), "PNG"))
            service.ingest(SCOPE, [warm])
            pdf = timed(service, tmp / "scan.pdf")
            report = {"scanned_pdf": {**pdf, "pages": args.pages,
                                      "s_per_page": round(pdf["seconds"] / args.pages, 2),
                                      "cpu_s_per_page": round(pdf["cpu_s"] / args.pages, 2)}}
            if has_espeak():
                (tmp / "meeting.mp4").write_bytes(meeting(args.minutes, tmp))
                mp4 = timed(service, tmp / "meeting.mp4")
                report["video"] = {**mp4, "minutes": args.minutes,
                                   "s_per_minute": round(mp4["seconds"] / args.minutes, 1),
                                   "cpu_s_per_minute": round(mp4["cpu_s"] / args.minutes, 1)}
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
