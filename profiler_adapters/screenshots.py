"""Profiler screenshots (Nsight Compute / Systems, Xcode Instruments): validated, normalised and sized
for multimodal models with Pillow. Corrupt, huge or non-image uploads are refused with a clear reason."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from kforge_core.llm.base import ImageData

MAX_UPLOAD_BYTES = 20 << 20
MAX_PIXELS = 40_000_000  # a 8K screenshot is 33 MP; larger is a mistake or a decompression bomb
MODEL_LONG_SIDE = 1568  # what multimodal models read without further downscaling
ACCEPTED = {"PNG": "image/png", "JPEG": "image/jpeg"}


class ImageRejected(ValueError):
    pass


def normalise_screenshot(data: bytes, filename: str = "upload", label: str = "") -> ImageData:
    """Validate an upload and return a metadata-free PNG no longer than MODEL_LONG_SIDE on its long side."""
    if not data:
        raise ImageRejected(f"{filename}: the file is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ImageRejected(f"{filename}: {len(data) / 2**20:.1f} MB is over the {MAX_UPLOAD_BYTES >> 20} MB limit")
    try:
        with Image.open(io.BytesIO(data)) as probe:
            fmt, size = probe.format, probe.size
            if fmt not in ACCEPTED:
                raise ImageRejected(f"{filename}: {fmt} images are not accepted; upload PNG or JPEG")
            if size[0] * size[1] > MAX_PIXELS:
                raise ImageRejected(f"{filename}: {size[0]}x{size[1]} is {size[0] * size[1] / 1e6:.0f} megapixels; "
                                    f"the limit is {MAX_PIXELS / 1e6:.0f}")
            probe.verify()  # structure and checksums
        with Image.open(io.BytesIO(data)) as img:
            img.load()  # decodes every pixel: truncated data fails here
            rgb = img.convert("RGB")
    except ImageRejected:
        raise
    except UnidentifiedImageError:
        raise ImageRejected(f"{filename}: not an image (PNG or JPEG expected)") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise ImageRejected(f"{filename}: corrupt or truncated image ({e})") from None
    rgb.thumbnail((MODEL_LONG_SIDE, MODEL_LONG_SIDE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    rgb.save(out, format="PNG", optimize=True)  # a fresh encode carries no EXIF or text chunks
    return ImageData(out.getvalue(), "image/png", label or Path(filename).stem)


def save_screenshot(image: ImageData, folder: Path, stem: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.png"
    path.write_bytes(image.data)
    return path
