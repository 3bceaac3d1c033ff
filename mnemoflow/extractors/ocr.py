"""OCR: the text of a picture (a photo, a screenshot, a scanned page, a video frame), line by line.

The default engine is RapidOCR (`rapidocr` on PyPI) with the PP-OCRv6 detection and recognition
models its wheel carries (Chinese, English, Japanese and the Latin alphabets), run by ONNX Runtime on
the CPU; nothing is downloaded. `ocr_engine = "tesseract"` uses Debian's Tesseract instead (through
pytesseract, with the languages in `ocr_tesseract_languages`; Korean needs it). bench/README.md has
the measurements behind the default.

Each engine returns boxes of text; they are put in reading order here: boxes whose vertical middles
overlap form a line, lines run top to bottom, a line's boxes left to right.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError, ConfigError
from mnemoflow.tokens import is_cjk

if TYPE_CHECKING:
    from PIL import Image

# One engine per process, one picture at a time: two at once would only fight over the cores.
_lock = threading.Lock()


@dataclass(frozen=True)
class Box:
    """A piece of text the engine found, and where: pixels from the top left."""

    text: str
    left: float
    top: float
    right: float
    bottom: float


# ---------------------------------------------------------------------- reading order
def _joined(left: str, right: str) -> str:
    """Boxes of one line joined by a space, except between two CJK characters (no spaces there)."""
    if left and right and is_cjk(left[-1]) and is_cjk(right[0]):
        return left + right
    return f"{left} {right}"


def reading_order(boxes: list[Box]) -> list[str]:
    """Lines of text: boxes whose vertical middle falls inside a line's band join it (a photo's
    slight tilt keeps a line together), lines top to bottom, boxes in a line left to right."""
    lines: list[list[Box]] = []
    for box in sorted(boxes, key=lambda b: (b.top + b.bottom) / 2):
        middle = (box.top + box.bottom) / 2
        for line in lines:
            top = sum(b.top for b in line) / len(line)
            bottom = sum(b.bottom for b in line) / len(line)
            if top <= middle <= bottom:
                line.append(box)
                break
        else:
            lines.append([box])
    text_lines = []
    for line in lines:
        text = ""
        for box in sorted(line, key=lambda b: b.left):
            text = _joined(text, box.text) if text else box.text
        if text.strip():
            text_lines.append(" ".join(text.split()))
    return text_lines


# ---------------------------------------------------------------------- engines
def _threads() -> int:
    return len(os.sched_getaffinity(0))


@lru_cache(maxsize=1)
def _rapidocr() -> Any:
    """RapidOCR on the models inside its wheel, named one by one so that nothing is looked up or
    fetched (it downloads a model it cannot find)."""
    try:
        import rapidocr
        from rapidocr import RapidOCR
    except ImportError:
        raise ConfigError("ocr_engine 'rapidocr' needs the rapidocr package, which is not installed "
                          "(pip install -c constraints.txt rapidocr)") from None
    models = Path(rapidocr.__file__).parent / "models"
    files = {"Det": "PP-OCRv6_det_small.onnx", "Rec": "PP-OCRv6_rec_small.onnx",
             "Cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx"}
    missing = [name for name in files.values() if not (models / name).is_file()]
    if missing:
        raise ConfigError(f"the rapidocr package has no {', '.join(missing)} in {models}: reinstall it "
                          "with the version in constraints.txt")
    threads = _threads()
    params: dict[str, Any] = {"Global.log_level": "error",
                              "EngineConfig.onnxruntime.intra_op_num_threads": threads,
                              "EngineConfig.onnxruntime.inter_op_num_threads": 1}
    params.update({f"{task}.model_path": str(models / name) for task, name in files.items()})
    return RapidOCR(params=params)


def _rapidocr_boxes(image: Image.Image) -> list[Box]:
    import numpy as np

    result = _rapidocr()(np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1]))  # it reads BGR
    if result.txts is None or result.boxes is None:
        return []
    return [Box(text, float(box[:, 0].min()), float(box[:, 1].min()), float(box[:, 0].max()),
                float(box[:, 1].max()))
            for text, box in zip(result.txts, result.boxes) if text.strip()]


def _tesseract_boxes(image: Image.Image, languages: str) -> list[Box]:
    """Tesseract's words grouped by its own lines (block, paragraph, line numbers)."""
    try:
        import pytesseract
    except ImportError:
        raise ConfigError("ocr_engine 'tesseract' needs the pytesseract package "
                          "(pip install -c constraints.txt 'mnemoflow[tesseract]')") from None
    try:
        data = pytesseract.image_to_data(image.convert("RGB"), lang=languages, output_type=pytesseract.Output.DICT)
    except pytesseract.TesseractNotFoundError:
        raise ConfigError("ocr_engine 'tesseract' needs Tesseract, which is not installed: apt-get install "
                          "tesseract-ocr tesseract-ocr-eng (and -chi-sim, -jpn, -kor for those languages)") from None
    except pytesseract.TesseractError as exc:
        raise ConfigError(f"Tesseract could not run with languages {languages!r}: {exc.message.strip()} "
                          "(is each language's tesseract-ocr-<lang> package installed?)") from None
    lines: dict[tuple[int, int, int], list[int]] = {}
    for i, word in enumerate(data["text"]):
        if word.strip() and float(data["conf"][i]) >= 0:
            lines.setdefault((data["block_num"][i], data["par_num"][i], data["line_num"][i]), []).append(i)
    boxes = []
    for members in lines.values():
        text = ""
        for i in members:
            text = _joined(text, data["text"][i]) if text else data["text"][i]
        boxes.append(Box(text, min(data["left"][i] for i in members), min(data["top"][i] for i in members),
                         max(data["left"][i] + data["width"][i] for i in members),
                         max(data["top"][i] + data["height"][i] for i in members)))
    return boxes


def read_lines(image: Image.Image, settings: Settings) -> list[str]:
    """The picture's text, line by line in reading order ([] when it holds none)."""
    with _lock:
        if settings.ocr_engine == "tesseract":
            boxes = _tesseract_boxes(image, settings.ocr_tesseract_languages)
        else:
            boxes = _rapidocr_boxes(image)
    return reading_order(boxes)


# ---------------------------------------------------------------------- bounds
def check_pixels(width: int, height: int, settings: Settings, what: str = "image") -> None:
    """A picture is measured before it is decoded: a few kilobytes of PNG can declare a
    gigapixel canvas (a decompression bomb), which would take gigabytes to hold."""
    if width * height > settings.ocr_max_pixels:
        raise BadInputError(f"{what} of {width}x{height} pixels, over the ocr_max_pixels limit of "
                            f"{settings.ocr_max_pixels} (a decompression bomb?)")


def scaled_for_ocr(image: Image.Image, settings: Settings) -> Image.Image:
    """A picture whose long side is over `ocr_max_side` is scaled down to it: past that the text
    is large enough already, and the engine's time grows with the pixels."""
    longest = max(image.size)
    if longest <= settings.ocr_max_side:
        return image
    ratio = settings.ocr_max_side / longest
    return image.resize((max(1, round(image.width * ratio)), max(1, round(image.height * ratio))))
