"""Pictures (PNG, JPEG, WebP, TIFF, GIF): their text read with OCR, line by line in reading order.

A photo of a whiteboard or a screenshot becomes one unit per page (a TIFF has several; a GIF is its
first frame) whose lines are numbered, so a chunk cites `whiteboard.png, lines 2-4`. A picture
without text is recorded as such (the document has no chunks, its metadata says why), not refused.
The time the camera wrote into the EXIF data (when the photo was taken) is the document's `date`.

Every page is measured before it is decoded (`ocr.check_pixels`): a decompression bomb goes to
ingest_errors with that reason. At most `ocr_max_pages` pages of a TIFF are read.
"""

from __future__ import annotations

import io
import warnings
from datetime import datetime, timedelta, timezone
from typing import Any

from mnemoflow.config import Settings
from mnemoflow.errors import BadInputError
from mnemoflow.extractors.ocr import check_pixels, read_lines, scaled_for_ocr
from mnemoflow.extractors.registry import Extracted, TextUnit, mime_for, register

NO_TEXT = "no text found in the picture"
_EXIF_IFD = 0x8769
_DATETIME_ORIGINAL, _DATETIME_DIGITIZED, _DATETIME = 36867, 36868, 306
_OFFSET_ORIGINAL = 36881


def _open(data: bytes, settings: Settings) -> Any:
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise BadInputError("empty file: no image")
    try:
        with warnings.catch_warnings():  # the size is checked here, against ocr_max_pixels
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))  # reads the header only
    except Image.DecompressionBombError as exc:  # Pillow's own ceiling, far past ocr_max_pixels
        raise BadInputError(f"image over the ocr_max_pixels limit of {settings.ocr_max_pixels} (a decompression "
                            f"bomb?): {exc}") from None
    except UnidentifiedImageError as exc:
        raise BadInputError(f"not a readable image: {exc}") from None
    except (OSError, SyntaxError, ValueError) as exc:  # a header cut short or damaged
        raise BadInputError(f"damaged image: {exc}") from None
    check_pixels(*image.size, settings)
    return image


def exif_time(image: Any) -> str | None:
    """When the photo was taken (EXIF DateTimeOriginal, else when digitised or last written), ISO 8601,
    with its offset when the camera wrote one."""
    try:
        exif = image.getexif()
        sub = exif.get_ifd(_EXIF_IFD)
    except Exception:  # noqa: BLE001  a damaged EXIF block is no reason to refuse the picture
        return None
    raw = sub.get(_DATETIME_ORIGINAL) or sub.get(_DATETIME_DIGITIZED) or exif.get(_DATETIME)
    if not isinstance(raw, str):
        return None
    try:
        taken = datetime.strptime(raw.strip("\x00 "), "%Y:%m:%d %H:%M:%S")
    except ValueError:
        return None
    offset = sub.get(_OFFSET_ORIGINAL)
    if isinstance(offset, str) and len(offset) == 6 and offset[0] in "+-":
        try:
            hours, minutes = int(offset[1:3]), int(offset[4:6])
        except ValueError:
            return taken.isoformat()
        sign = 1 if offset[0] == "+" else -1
        taken = taken.replace(tzinfo=timezone(sign * timedelta(hours=hours, minutes=minutes)))
    return taken.isoformat()


def _rgb(frame: Any) -> Any:
    """The frame as RGB on white (a screenshot's transparent background is not black)."""
    from PIL import Image, ImageOps

    frame = ImageOps.exif_transpose(frame) or frame  # a phone photo taken sideways reads upright
    if frame.mode in ("RGBA", "LA", "PA") or (frame.mode == "P" and "transparency" in frame.info):
        frame = frame.convert("RGBA")
        background = Image.new("RGBA", frame.size, "white")
        return Image.alpha_composite(background, frame).convert("RGB")
    return frame.convert("RGB")


def page_unit(lines: list[str], locator: dict[str, Any], context: str | None = None) -> TextUnit:
    """The lines of a picture as one unit cut by lines: each chunk cites the lines it holds."""
    return TextUnit("\n".join(lines), {**locator, "lines": [1, len(lines)]}, context=context, split="lines")


@register("image/png", "image/jpeg", "image/webp", "image/tiff", "image/gif")
def extract_image(data: bytes, name: str, settings: Settings) -> Extracted:
    image = _open(data, settings)
    frames = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
    units: list[TextUnit] = []
    try:
        for index in range(min(frames, settings.ocr_max_pages)):
            image.seek(index)
            check_pixels(*image.size, settings, what=f"page {index + 1}")
            lines = read_lines(scaled_for_ocr(_rgb(image), settings), settings)
            if lines:
                units.append(page_unit(lines, {"page": index + 1} if frames > 1 else {}))
    except (OSError, SyntaxError, ValueError) as exc:  # PIL's word for truncated or damaged image data
        raise BadInputError(f"damaged image: {exc}") from None
    metadata: dict[str, Any] = {"width": image.width, "height": image.height, "format": image.format,
                                "ocr_engine": settings.ocr_engine}
    if frames > 1:
        metadata["pages"] = frames
    if frames > settings.ocr_max_pages:
        metadata["pages_not_read"] = f"{settings.ocr_max_pages + 1}-{frames} (over ocr_max_pages)"
    if taken := exif_time(image):
        metadata["date"] = taken
    return Extracted(mime=mime_for(name), title=name, layout="units", units=units,
                     metadata=metadata, no_text=None if units else NO_TEXT)
