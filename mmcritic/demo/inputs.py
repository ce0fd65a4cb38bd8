"""Checks on what a visitor sends, made before any model call.

A public demo receives whatever people upload and type, and its HTTP API receives whatever JSON
a caller writes. Each check turns a bad input into an `InputError` whose message is written for
the visitor, so the page can show it next to the form instead of a stack trace, and the model
never sees a file that was not uploaded, a file that is not an image, or an image too large to
decode safely.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

# Uploads are refused above this size by the server itself (`launch(max_file_size=...)`).
MAX_IMAGE_BYTES = 10 * 1024 * 1024
# Decoding is what costs memory: a 1 kB PNG can declare 30,000 x 30,000 pixels. The processor
# downsizes to its own budget anyway, so nothing is lost by refusing larger images.
MAX_IMAGE_PIXELS = 4096 * 4096
IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "BMP", "GIF")
MAX_QUESTION_CHARS = 2_000
MAX_ANSWER_CHARS = 8_000
MIN_CANDIDATES = 2
MAX_CANDIDATES = 8
# How Gradio marks a file object (`FileData`) in event data.
UPLOAD_MARKER = {"_type": "gradio.FileData"}
NOT_UPLOADED = (
    "The image was not uploaded to this demo. Upload it with the image box, or through the API "
    "with gradio_client's handle_file()."
)


class InputError(ValueError):
    """An input the demo will not run the model on; the message is shown to the visitor."""


def uploaded_file(payload: Any, upload_dir: Path, max_bytes: int = MAX_IMAGE_BYTES) -> Path:
    """The real path of an image Gradio received as an upload, checked without opening it.

    Events run without preprocessing, and Gradio checks a file object's path against its upload
    folder only when the caller sent `UPLOAD_MARKER`; to an object without it, Gradio's
    `ImageData` adds the marker and passes the path on unchecked. The marker is required here
    too, but what refuses a file that was never uploaded is the rule Gradio applies to marked
    objects, applied again: the path, with symlinks resolved, must lie inside `upload_dir`
    (Gradio's upload folder, which holds the uploads and Gradio's copies of the examples). It
    must also name a regular file: a FIFO would block the worker on open, a folder or a device
    is no image. All of this uses `stat`, never `open`; the resolved path is returned, so the
    file checked is the file opened."""
    if payload is None:
        raise InputError("Upload an image first.")
    if not isinstance(payload, dict) or not isinstance(payload.get("path"), str):
        raise InputError(f"The image must be an uploaded file, got {_kind(payload)}.")
    if payload.get("meta") != UPLOAD_MARKER:
        raise InputError(NOT_UPLOADED)
    try:
        real = Path(os.path.realpath(payload["path"]))
    except ValueError:  # a NUL byte in the path
        raise InputError(NOT_UPLOADED) from None
    if not real.is_relative_to(os.path.realpath(upload_dir)):
        raise InputError(NOT_UPLOADED)
    try:
        info = os.stat(real)
    except OSError:
        raise InputError("The image is no longer on the server; please upload it again.") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError("The image path names a folder or a special file; upload an image file.")
    if info.st_size > max_bytes:
        raise InputError(
            f"The image file is too large ({info.st_size / 2**20:.1f} MiB, limit "
            f"{max_bytes / 2**20:.1f}); please upload a smaller file."
        )
    return real


def load_image(path: Path, max_pixels: int = MAX_IMAGE_PIXELS) -> Image.Image:
    """The image at `path` as RGB, after checking its real format (not its name) and its size.

    The header is read first and the pixels decoded only once the size is known to be within
    `max_pixels`, so a decompression bomb costs nothing."""
    with _open_header(path, max_pixels) as image:
        _check_pixels(*image.size, max_pixels)
        try:
            return image.convert("RGB")
        except (OSError, ValueError, SyntaxError, EOFError):
            raise InputError("The image file is damaged and could not be decoded.") from None


def _open_header(path: Path, max_pixels: int) -> Image.Image:
    """The image with only its header read. Pillow itself refuses, at this point, images over
    twice its own `Image.MAX_IMAGE_PIXELS` (179 megapixels by default) without saying their size,
    so a `max_pixels` above that has no effect; between the two it only logs a
    `DecompressionBombWarning`, and `_check_pixels` refuses the image with its size."""
    try:
        return Image.open(path, formats=IMAGE_FORMATS)
    except Image.DecompressionBombError:
        pillow_limit = 2 * (Image.MAX_IMAGE_PIXELS or 0)
        raise InputError(
            _too_large("The image is", f"over {pillow_limit / 1e6:.0f}", max_pixels)
        ) from None
    except (UnidentifiedImageError, OSError):
        raise InputError(
            f"The upload is not an image the demo can read ({', '.join(IMAGE_FORMATS)})."
        ) from None


def _check_pixels(width: int, height: int, max_pixels: int) -> None:
    if width * height > max_pixels:
        subject = f"The image, {width} x {height} pixels, is"
        raise InputError(_too_large(subject, f"{width * height / 1e6:.1f}", max_pixels))


def _too_large(subject: str, megapixels: str, max_pixels: int) -> str:
    return (
        f"{subject} too large ({megapixels} megapixels, limit {max_pixels / 1e6:.1f}); "
        "please upload a smaller one."
    )


def require_text(value: Any, field: str, max_chars: int) -> str:
    """The stripped text of a field that must not be empty or longer than `max_chars`. Events
    run without preprocessing, so an API caller can send any JSON value; null counts as empty."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InputError(f"The {field} must be text, got {_kind(value)}.")
    text = value.strip()
    if not text:
        raise InputError(f"The {field} is empty; please fill it in.")
    if len(text) > max_chars:
        raise InputError(
            f"The {field} has {len(text):,} characters; the demo takes at most {max_chars:,}."
        )
    return text


def require_flag(value: Any, field: str) -> bool:
    """A checkbox's value, which must be true or false (not merely truthy)."""
    if not isinstance(value, bool):
        raise InputError(f"The {field} setting must be true or false, got {_kind(value)}.")
    return value


def require_count(value: Any, field: str, low: int, high: int) -> int:
    """A whole number in [low, high]. Events run without preprocessing, so a slider's range is
    not enforced by Gradio for API callers, and anything JSON can carry may arrive."""
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if not _is_number(value) or not whole or not low <= value <= high:
        raise InputError(
            f"The {field} must be a whole number from {low} to {high}, got {_shown(value)}."
        )
    return int(value)


def require_positive(value: Any, field: str, high: float) -> float:
    """A number above 0 and at most `high`."""
    if not _is_number(value) or not 0 < value <= high:
        raise InputError(f"The {field} must be above 0 and at most {high:g}, got {_shown(value)}.")
    return float(value)


def _kind(value: Any) -> str:
    """What kind of value a caller sent, in a visitor's words (JSON has no other kinds)."""
    if value is None:
        return "nothing"
    kinds = ((bool, "true/false"), (int | float, "a number"), (str, "text"), (list, "a list"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "an object")


def _shown(value: Any) -> str:
    """A number as it is when short, anything else by its kind, so a message never grows with
    what a caller sent."""
    if isinstance(value, float) or (_is_number(value) and abs(value) < 10**15):
        return f"{value:g}"
    return _kind(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
