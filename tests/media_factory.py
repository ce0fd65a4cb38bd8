"""Media files made on the spot for tests: real PNGs, a corrupt one, nothing downloaded."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image


def write_png(path: Path, size: tuple[int, int] = (64, 48), color=(200, 30, 30)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)
    return path


def png_bytes(size: tuple[int, int] = (64, 48), color=(30, 30, 200)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def write_corrupt_png(path: Path) -> Path:
    """A file with a PNG name and a truncated PNG body."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes()[:40])
    return path
