"""Pictures, scans and videos made on the spot for the OCR and video tests: text drawn with PIL,
a photo-like copy (turned, blurred, noisy, JPEG), a PDF whose second page is only an image, and
an MP4 encoded with PyAV whose audio is espeak-ng speaking and whose picture is a few slides."""

from __future__ import annotations

import io
import random
import shutil
import subprocess
import wave
from fractions import Fraction
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def font(size: int = 40) -> ImageFont.FreeTypeFont:
    """DejaVu Sans where the system has it, else the scalable font Pillow carries."""
    if DEJAVU.is_file():
        return ImageFont.truetype(str(DEJAVU), size)
    return ImageFont.load_default(size=size)


def text_image(lines: list[str], *, size: int = 40, width: int = 1200, background: str = "white",
               ink: str = "black", face: ImageFont.FreeTypeFont | None = None) -> Image.Image:
    face = face or font(size)
    height = 60 + int(len(lines) * size * 1.8)
    image = Image.new("RGB", (width, height), background)
    draw = ImageDraw.Draw(image)
    for n, line in enumerate(lines):
        draw.text((40, 30 + int(n * size * 1.8)), line, fill=ink, font=face)
    return image


def photo_like(image: Image.Image, *, seed: int = 7, angle: float = 2.5) -> Image.Image:
    """A phone photo of the picture: slightly turned, a little out of focus, grainy, greyish paper."""
    rng = np.random.default_rng(seed)
    turned = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=(235, 232, 225))
    blurred = turned.filter(ImageFilter.GaussianBlur(1.2))
    pixels = np.asarray(blurred).astype(np.int16)
    pixels = pixels * 0.85 + 25 + rng.normal(0, 10, pixels.shape)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def encoded(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def scanned_pdf(page1: list[str], page2: list[str]) -> bytes:
    """Two A4 pages: the first with a text layer, the second only a picture of its text (a scan)."""
    import pymupdf

    doc = pymupdf.open()
    first = doc.new_page()
    first.insert_text((72, 90), "\n".join(page1), fontsize=12)
    second = doc.new_page()
    scan = photo_like(text_image(page2, size=34, width=1400), angle=0.8)
    second.insert_image(second.rect, stream=encoded(scan, "PNG"))
    data = doc.tobytes()
    doc.close()
    return data


def has_espeak() -> bool:
    return shutil.which("espeak-ng") is not None


def speech(text: str, tmp: Path, *, rate: int = 140) -> tuple[np.ndarray, int]:
    """espeak-ng saying `text`: mono int16 samples and their rate."""
    wav = tmp / f"speech-{random.randrange(1 << 30)}.wav"
    subprocess.run(["espeak-ng", "-s", str(rate), "-w", str(wav), text], check=True, capture_output=True)
    with wave.open(str(wav)) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16), w.getframerate()


def letterboxed(slide: Image.Image, width: int, height: int) -> Image.Image:
    """The slide scaled to fit the frame, its proportions kept, on its own background colour."""
    slide = slide.convert("RGB")
    ratio = min(width / slide.width, height / slide.height)
    scaled = slide.resize((round(slide.width * ratio), round(slide.height * ratio)), Image.Resampling.LANCZOS)
    canvas = Image.new("RGB", (width, height), slide.getpixel((0, 0)))
    canvas.paste(scaled, ((width - scaled.width) // 2, (height - scaled.height) // 2))
    return canvas


def video(slides: list[tuple[float, Image.Image]], *, audio: tuple[np.ndarray, int] | None = None,
          seconds: float | None = None, fps: int = 5, container: str = "mp4") -> bytes:
    """An H.264 video (with AAC audio when given) showing each slide from its start time on."""
    import av

    end = seconds or max(slides[-1][0] + 4.0, len(audio[0]) / audio[1] + 0.5 if audio else 0.0)
    width, height = 960, 540
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format=container) as out:
        picture = out.add_stream("libx264" if container != "webm" else "libvpx-vp9", rate=fps)
        picture.width, picture.height, picture.pix_fmt = width, height, "yuv420p"
        sound = None
        if audio is not None:
            sound = out.add_stream("aac" if container != "webm" else "libopus", rate=48000 if container == "webm"
                                   else audio[1])
            sound.layout = "mono"
        frames = [(t, letterboxed(slide, width, height)) for t, slide in slides]
        for n in range(int(end * fps)):
            at = n / fps
            current = [img for t, img in frames if t <= at][-1]
            frame = av.VideoFrame.from_image(current)
            frame.pts = n
            frame.time_base = Fraction(1, fps)
            out.mux(picture.encode(frame))
        out.mux(picture.encode(None))
        if audio is not None and sound is not None:
            samples, rate = audio
            total = int(end * rate)
            padded = np.zeros(total, dtype=np.int16)
            padded[: min(total, len(samples))] = samples[:total]
            resampler = av.AudioResampler(format=sound.format.name, layout="mono", rate=sound.rate)
            chunk = 1024
            for start in range(0, total, chunk):
                piece = av.AudioFrame.from_ndarray(padded[start : start + chunk].reshape(1, -1), format="s16",
                                                   layout="mono")
                piece.sample_rate = rate
                piece.pts = start
                piece.time_base = Fraction(1, rate)
                for converted in resampler.resample(piece):
                    out.mux(sound.encode(converted))
            for converted in resampler.resample(None):
                out.mux(sound.encode(converted))
            out.mux(sound.encode(None))
    return buffer.getvalue()
