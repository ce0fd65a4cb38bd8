"""Requests as OpenAI chat messages: what a server decodes must be what the hf engine shows."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
import torch
from PIL import Image

from mmcritic.data.video import LoadedVideo
from mmcritic.inference import Media
from mmcritic.inference.engines import Request
from mmcritic.inference.engines.messages import chat_messages, image_data_url, video_data_url


def _payload(url: str) -> bytes:
    return base64.b64decode(url.split(",", 1)[1])


def test_an_image_arrives_with_the_exact_pixels_the_hf_engine_is_given() -> None:
    noise = np.random.default_rng(0).integers(0, 256, (84, 112, 3), dtype=np.uint8)
    picture = Media.image(Image.fromarray(noise))
    decoded = Image.open(io.BytesIO(_payload(image_data_url(picture.load()))))
    assert np.array_equal(np.asarray(decoded), np.asarray(picture.load()))


def test_a_video_arrives_as_its_sampled_frames_at_their_rate() -> None:
    import av

    frames = torch.stack([torch.full((3, 56, 84), float(level)) for level in (10, 80, 150, 220)])
    metadata = {"fps": 24.0, "frames_indices": [0, 8, 16, 24], "total_num_frames": 32}
    video = LoadedVideo(frames, metadata)
    with av.open(io.BytesIO(_payload(video_data_url(video)))) as container:
        stream = container.streams.video[0]
        decoded = [frame.to_ndarray(format="rgb24") for frame in container.decode(stream)]
        rate = float(stream.average_rate)
    assert len(decoded) == 4 and decoded[0].shape == (56, 84, 3)
    assert rate == pytest.approx(video.sample_fps, rel=1e-3)
    levels = [float(frame.mean()) for frame in decoded]
    assert levels == pytest.approx([10, 80, 150, 220], abs=2)


def test_each_placeholder_becomes_its_own_item_in_the_message_order() -> None:
    red, blue = (Media.image(Image.new("RGB", (56, 56), c)) for c in ("red", "blue"))
    [message] = chat_messages(Request("Compare", [red, blue], ("Compare", 1, "with", 0, ".")))
    kinds = [part["type"] for part in message["content"]]
    assert kinds == ["text", "image_url", "text", "image_url", "text"]
    urls = [part["image_url"]["url"] for part in message["content"] if part["type"] == "image_url"]
    assert urls == [image_data_url(blue.load()), image_data_url(red.load())]
    assert chat_messages(Request("Hi", None)) == [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
    ]
