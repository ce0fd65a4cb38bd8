"""Qwen-VL's resize arithmetic: the size an image or video frame is resized to before it is cut
into square tokens of `token_side(patch_size)` pixels (28 for Qwen2-VL and Qwen2.5-VL's 14-pixel
patches, 32 for Qwen3-VL's 16-pixel ones).

The same arithmetic as qwen-vl-utils' `smart_resize` (which the processor's resize follows), kept
here so that counting a prompt's visual tokens does not import qwen-vl-utils, and through it
torch and torchvision: `mmcritic preprocess` reads 100k rows in the time that import takes.
`tests/test_media.py` holds the two to the same answers.
"""

from __future__ import annotations

import math

# qwen-vl-utils refuses images more than 200 times wider than high, or the reverse
MAX_ASPECT_RATIO = 200
# Qwen2-VL and Qwen2.5-VL's vision patch side, the default grid; every family merges 2x2
# patches into one visual token.
PATCH_SIZE = 14
SPATIAL_MERGE_SIZE = 2


def token_side(patch_size: int = PATCH_SIZE) -> int:
    """Pixels along one side of the square one visual token covers."""
    return patch_size * SPATIAL_MERGE_SIZE


def smart_resize(
    height: int, width: int, factor: int, min_pixels: int, max_pixels: int
) -> tuple[int, int]:
    """(height, width), each a multiple of `factor`, with their product in [min_pixels,
    max_pixels] and the aspect ratio kept as closely as that allows."""
    if max_pixels < min_pixels:
        raise ValueError("max_pixels must be at least min_pixels")
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise ValueError(
            f"absolute aspect ratio must be smaller than {MAX_ASPECT_RATIO}, got "
            f"{max(height, width) / min(height, width)}"
        )
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar
