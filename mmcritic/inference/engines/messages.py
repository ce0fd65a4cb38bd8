"""Requests as OpenAI chat messages, with the media the hf engine would show the model.

Images go as lossless PNG data URLs of the picture qwen-vl-utils already sized into the run's
pixel budget on the served model's grid (28 pixels a token, 32 for Qwen3-VL, when its config can
be read here): a server's Qwen processor finds it on its grid inside its own bounds and leaves its
size alone, so it sees the same pixels. Videos go as the frames mmcritic sampled and
sized, encoded as an H.264 MP4 (4:4:4, constant quality 0) at the rate they were sampled at:
a server that samples at that rate or takes every frame sees the same frames, though the
colour conversion moves pixel values by a level or two. Each picture is encoded once, however
many requests show it (Best-of-N shows one picture to the critic many times).
"""

from __future__ import annotations

import base64
import io
import weakref
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from PIL import Image

from mmcritic.data.resize import PATCH_SIZE
from mmcritic.data.video import LoadedVideo
from mmcritic.inference.engines.base import Request

_encoded: dict[int, str] = {}


def chat_messages(request: Request, patch_size: int = PATCH_SIZE) -> list[dict[str, Any]]:
    """The request's one user turn with each media placeholder replaced by its data URL part,
    the media loaded on the grid of a model with this vision patch size."""
    media = {kind: iter(request.loaded(kind, patch_size)) for kind in ("image", "video")}
    parts = []
    for part in request.message()[0]["content"]:
        if part["type"] == "image":
            url = _once(next(media["image"]), image_data_url)
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif part["type"] == "video":
            url = _once(next(media["video"]), video_data_url)
            parts.append({"type": "video_url", "video_url": {"url": url}})
        else:
            parts.append(part)
    return [{"role": "user", "content": parts}]


def image_data_url(image: Image.Image) -> str:
    """A PNG data URL: lossless, so the server decodes the pixels the hf engine is given."""
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def video_data_url(video: LoadedVideo) -> str:
    """An MP4 data URL of the sampled frames at the rate they were sampled at."""
    import av
    import torch

    frames = torch.as_tensor(video.frames).round().clamp(0, 255).to(torch.uint8)
    frames = frames.permute(0, 2, 3, 1).contiguous().numpy()
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream(
            "libx264", rate=Fraction(video.sample_fps).limit_denominator(1000)
        )
        stream.height, stream.width = frames.shape[1], frames.shape[2]
        stream.pix_fmt = "yuv444p"
        stream.options = {"crf": "0"}
        for frame in frames:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode())
    return "data:video/mp4;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _once(item: Any, encode: Callable[[Any], str]) -> str:
    """`encode(item)`, kept while `item` lives (a `Media` caches what it loaded)."""
    key = id(item)
    if key not in _encoded:
        _encoded[key] = encode(item)
        weakref.finalize(item, _encoded.pop, key, None)
    return _encoded[key]
