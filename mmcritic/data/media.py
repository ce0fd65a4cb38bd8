"""Media normalisation: every way a source can hold an image or video becomes one path.

Sources hold media as relative or absolute paths, as `{"bytes", "path"}` structs (parquet and hub
datasets read with `decode=False`), or as PIL images. `MediaResolver` turns each into a path a
record can carry, checks the file is there and readable *without decoding pixels*, and reads the
size the token estimate needs. One function per medium, so every reader gets the same checks.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import re
import stat
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from PIL import Image, UnidentifiedImageError

from mmcritic.data.resize import PATCH_SIZE, smart_resize, token_side
from mmcritic.data.schema import MEDIA_DIR, RecordError
from mmcritic.data.video import VideoBudget, VideoInfo, load_video, probe_video

REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
MediaCheck = Literal["verify", "decode"]
# Pillow's own decompression-bomb threshold: larger images are refused from their header.
DEFAULT_MAX_IMAGE_PIXELS = 89_478_485


@dataclass(frozen=True)
class PixelBudget:
    """Bounds an image is resized into before it reaches the model.

    Defaults are LLaVA-Critic-R1's: images resized into [262,144; 4,194,304] pixels, the one
    place these numbers live. `resize_twice` sizes an image as lmms-eval's Qwen2.5-VL path
    does: qwen-vl-utils' default rounding first, then the budget (its processor's resize), which
    lands on another grid than one resize for about one image in five.
    """

    min_pixels: int = 262_144
    max_pixels: int = 4_194_304
    resize_twice: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.min_pixels <= self.max_pixels:
            raise ValueError(
                f"pixel budget needs 0 < min_pixels <= max_pixels, got "
                f"min_pixels={self.min_pixels}, max_pixels={self.max_pixels}"
            )


@dataclass(frozen=True)
class MediaBudget:
    """The image and the video budget of a run, passed around together, and the vision patch
    size of the model they are spent on (`mmcritic.models.families`): images and frames are
    resized to multiples of its token side, or the processor would resize them again."""

    image: PixelBudget = field(default_factory=PixelBudget)
    video: VideoBudget = field(default_factory=VideoBudget)
    patch_size: int = PATCH_SIZE


@lru_cache(maxsize=65536)
def image_token_count(
    width: int, height: int, budget: PixelBudget, patch_size: int = PATCH_SIZE
) -> int:
    """Visual tokens a model of this patch size spends on an image of this size, computed from
    the size alone.

    Follows qwen-vl-utils' `smart_resize` (`mmcritic.data.resize`), the arithmetic the
    processor's resize follows, so the estimate matches what training will see; cached, since
    a source holds few distinct sizes."""
    side = token_side(patch_size)
    try:
        resized_h, resized_w = smart_resize(
            height,
            width,
            factor=side,
            min_pixels=budget.min_pixels,
            max_pixels=budget.max_pixels,
        )
    except ValueError as err:
        raise RecordError("media_aspect_ratio", f"a {width}x{height} image: {err}") from err
    return (resized_h * resized_w) // side**2


@lru_cache(maxsize=8192)
def _checked_image_size(path: str, check: MediaCheck, max_pixels: int) -> tuple[int, int]:
    """Opens an image file and returns (width, height); cached because sources reuse images.

    The size comes from the header and is checked against `max_pixels` before any pixel is
    decoded: a 20000x20000 PNG is a rejection, not gigabytes of memory."""
    _require_regular_file(path, "image")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                size = image.size
                _check_pixels(size, max_pixels, path)
                if check == "decode":
                    image.load()
                else:
                    image.verify()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
        raise RecordError("image_too_large", f"image {path}: {err}") from err
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        raise RecordError("media_corrupt", f"image {path} cannot be read: {err}") from err
    if size[0] <= 0 or size[1] <= 0:
        raise RecordError("media_corrupt", f"image {path} has an empty size {size}")
    return size


def _check_pixels(size: tuple[int, int], max_pixels: int, name: str) -> None:
    pixels = size[0] * size[1]
    if pixels > max_pixels:
        raise RecordError(
            "image_too_large",
            f"image {name} is {size[0]}x{size[1]} ({pixels / 1e6:.0f} megapixels), over the "
            f"limit of {max_pixels / 1e6:.0f} megapixels (--max-image-pixels)",
        )


def _require_regular_file(path: str, kind: str) -> None:
    """Refuses anything but a regular file without opening it: a FIFO would block the run, a
    device would be read forever, a directory is no image."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError as err:
        raise RecordError("media_missing", f"{kind} file not found: {path}") from err
    except (OSError, ValueError) as err:  # a NUL byte, a name too long, no permission
        raise RecordError("media_missing", f"{kind} path {path!r} cannot be used: {err}") from err
    if not stat.S_ISREG(mode):
        raise RecordError("media_not_a_file", f"{kind} path {path} is not a regular file")


class MediaResolver:
    """Turns a source's media values into record paths under one output folder.

    Relative paths resolve against `media_root` (the source's folder unless the user names
    another). Embedded bytes are written once to `out_dir/media/` under a content hash, so a resumed
    or repeated run writes the same file names.
    """

    def __init__(
        self,
        out_dir: Path,
        media_root: Path,
        check: MediaCheck = "verify",
        max_image_pixels: int = DEFAULT_MAX_IMAGE_PIXELS,
        confine: bool = False,
    ):
        self.out_dir = out_dir.resolve()
        self.media_root = media_root.resolve()
        self.check = check
        self.max_image_pixels = max_image_pixels
        self.confine = confine
        self._seen_images: dict[str, tuple[str, tuple[int, int]]] = {}
        # every image's size is checked here from its header before decoding, so Pillow's own
        # bomb guard must not refuse what the user's larger limit allows
        Image.MAX_IMAGE_PIXELS = max(Image.MAX_IMAGE_PIXELS or 0, max_image_pixels)

    def image(self, value: Any) -> tuple[str, tuple[int, int]]:
        """A record path for an image value and its (width, height); a path value seen before
        is answered from memory (sources name the same image for many rows)."""
        if isinstance(value, str) and value in self._seen_images:
            return self._seen_images[value]
        path = self._to_path(value, kind="image")
        size = _checked_image_size(str(path), self.check, self.max_image_pixels)
        answer = self._record_path(path), size
        if isinstance(value, str):
            self._seen_images[value] = answer
        return answer

    def video(self, value: Any) -> tuple[str, VideoInfo]:
        """A record path for a video value and its header; `decode` also decodes the frames the
        model would see, which finds files damaged past their header."""
        path = self._to_path(value, kind="video")
        _require_regular_file(str(path), "video")
        info = probe_video(path)
        if self.check == "decode":
            load_video(str(path), VideoBudget())
        return self._record_path(path), info

    def _to_path(self, value: Any, kind: str) -> Path:
        if isinstance(value, dict):
            if value.get("bytes"):
                return self._write_bytes(_as_bytes(value["bytes"], kind), kind)
            value = value.get("path")
        if isinstance(value, Image.Image):
            buffer = io.BytesIO()
            value.save(buffer, format="PNG")
            return self._write_bytes(buffer.getvalue(), kind)
        if not isinstance(value, str) or not value.strip():
            raise RecordError("media_missing", f"{kind} value is empty or not a path: {value!r}")
        if REMOTE.match(value):
            raise RecordError(
                "media_remote",
                f"{kind} {value!r} is a URL; download it and pass --media-root to a local copy",
            )
        if "\x00" in value:
            raise RecordError("media_missing", f"{kind} path {value!r} holds a NUL byte")
        if self.confine:
            return self._confined(value, kind)
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.media_root / path

    def _confined(self, value: str, kind: str) -> Path:
        """A path under the media root and nowhere else: no absolute path, no `..`, no symlink
        that leads out (for data from sources that are not trusted)."""
        relative = Path(value)
        if relative.is_absolute() or ".." in relative.parts or value.startswith("~"):
            raise RecordError(
                "media_outside_root",
                f"{kind} path {value!r} is absolute or climbs out of "
                "the media root (--confine-media)",
            )
        resolved = (self.media_root / relative).resolve()
        if not resolved.is_relative_to(self.media_root):
            raise RecordError(
                "media_outside_root",
                f"{kind} path {value!r} leads out of the media root through a symlink",
            )
        return resolved

    def _write_bytes(self, data: bytes, kind: str) -> Path:
        digest = hashlib.sha1(data).hexdigest()[:20]
        suffix = _image_suffix(data) if kind == "image" else ".mp4"
        path = self.out_dir / MEDIA_DIR / f"{digest}{suffix}"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            # a name of this process's own: conversion workers may write the same file at once
            temporary = path.with_suffix(f"{path.suffix}.{os.getpid()}.tmp")
            temporary.write_bytes(data)
            temporary.replace(path)
        return path

    def _record_path(self, path: Path) -> str:
        resolved = path.resolve()
        if resolved.is_relative_to(self.out_dir):
            return resolved.relative_to(self.out_dir).as_posix()
        return str(resolved)


def _as_bytes(value: Any, kind: str) -> bytes:
    """Embedded media must be bytes; a string or a list of numbers in their place is a bad row."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise RecordError(
        "media_corrupt", f"embedded {kind} bytes are a {type(value).__name__}, not bytes"
    )


def _image_suffix(data: bytes) -> str:
    """The file suffix matching the encoded bytes, so viewers and PIL agree on the format."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                image_format = (image.format or "png").lower()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
        raise RecordError("image_too_large", f"embedded image: {err}") from err
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        raise RecordError("media_corrupt", f"embedded image bytes cannot be read: {err}") from err
    return ".jpg" if image_format == "jpeg" else f".{image_format}"


def text_token_estimate(text: str, bytes_per_token: float = 3.5) -> int:
    """A tokenizer-free token estimate: Qwen's BPE averages ~4 bytes a token on English text;
    3.5 errs on the long side so over-long prompts are caught rather than missed."""
    return math.ceil(len(text.encode("utf-8")) / bytes_per_token)
