"""The tiny Qwen2.5-VL is a faithful stand-in: real classes, ids, template, images and video."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw

from mmcritic.models.tiny import SPECIAL_TOKENS, build_tiny_model

MAX_PARAMETERS = 1_000_000
MAX_BYTES_ON_DISK = 10 * 1024 * 1024
MERGE_LENGTH = 4  # 2x2 patches per visual token
VIDEO_FPS = 4
VIDEO_FRAMES = 8
VIDEO_SIDE = 64
SAMPLED_FRAMES = 4
FRAME_PIXELS = 56 * 56  # 64x64 frames resized to 2x2 visual tokens


def _count(input_ids: torch.Tensor, token_id: int) -> int:
    return int((input_ids == token_id).sum())


def _generate(model, inputs) -> torch.Tensor:
    with torch.no_grad():
        output = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    return output[0, inputs["input_ids"].shape[1] :]


def _write_moving_dot_mp4(path: Path) -> Path:
    """A real H.264 file, so the decord reader is exercised as on user data."""
    import av

    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=VIDEO_FPS)
        stream.width = stream.height = VIDEO_SIDE
        stream.pix_fmt = "yuv420p"
        for index in range(VIDEO_FRAMES):
            frame = np.zeros((VIDEO_SIDE, VIDEO_SIDE, 3), dtype=np.uint8)
            frame[28:36, index * 7 : index * 7 + 8] = 255
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode())
    return path


@pytest.fixture
def decord_video_reader(monkeypatch: pytest.MonkeyPatch):
    """qwen-vl-utils reads FORCE_QWENVL_VIDEO_READER once, at import, and caches the backend it
    picks, so setting the environment variable in a test would come too late."""
    from qwen_vl_utils import vision_process

    monkeypatch.setattr(vision_process, "FORCE_QWENVL_VIDEO_READER", "decord")
    vision_process.get_video_reader_backend.cache_clear()
    yield
    vision_process.get_video_reader_backend.cache_clear()


def test_tiny_model_reloads_with_auto_classes(tiny_model_dir: Path) -> None:
    from transformers import (
        AutoModelForImageTextToText,
        AutoProcessor,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2Tokenizer,
    )

    processor = AutoProcessor.from_pretrained(tiny_model_dir)
    model = AutoModelForImageTextToText.from_pretrained(tiny_model_dir)

    assert isinstance(processor, Qwen2_5_VLProcessor)
    assert isinstance(processor.tokenizer, Qwen2Tokenizer)
    assert isinstance(model, Qwen2_5_VLForConditionalGeneration)
    assert model.num_parameters() < MAX_PARAMETERS
    assert sum(f.stat().st_size for f in tiny_model_dir.iterdir()) < MAX_BYTES_ON_DISK


def test_special_token_ids_match_model_config(tiny_model_and_processor) -> None:
    model, processor = tiny_model_and_processor
    tokenizer, config = processor.tokenizer, model.config
    token_id = tokenizer.convert_tokens_to_ids

    assert tokenizer.eos_token == "<|im_end|>"
    assert tokenizer.pad_token == "<|endoftext|>"
    assert [tokenizer.encode(t) for t in SPECIAL_TOKENS] == [[token_id(t)] for t in SPECIAL_TOKENS]
    assert config.image_token_id == token_id("<|image_pad|>") == processor.image_token_id
    assert config.video_token_id == token_id("<|video_pad|>") == processor.video_token_id
    assert config.vision_start_token_id == token_id("<|vision_start|>")
    assert config.vision_end_token_id == token_id("<|vision_end|>")
    assert config.text_config.eos_token_id == tokenizer.eos_token_id
    assert config.text_config.pad_token_id == tokenizer.pad_token_id
    assert config.text_config.bos_token_id == token_id("<|endoftext|>")
    assert model.generation_config.eos_token_id == [
        token_id("<|im_end|>"),
        token_id("<|endoftext|>"),
    ]
    assert len(tokenizer) <= config.text_config.vocab_size


def test_chat_template_renders_image_and_video_placeholders(tiny_model_and_processor) -> None:
    _, processor = tiny_model_and_processor
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "image"},
                {"type": "video"},
                {"type": "text", "text": "Which response is better?"},
            ],
        }
    ]

    text = processor.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, add_vision_id=True
    )

    assert text == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\n"
        "Picture 1: <|vision_start|><|image_pad|><|vision_end|>"
        "Video 1: <|vision_start|><|video_pad|><|vision_end|>"
        "Which response is better?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert processor.tokenizer.chat_template == processor.chat_template


def test_chat_template_is_the_one_trl_patches_for_assistant_only_loss(
    tiny_model_and_processor,
) -> None:
    from trl.chat_template_utils import get_training_chat_template

    _, processor = tiny_model_and_processor

    assert "{%- generation -%}" in get_training_chat_template(processor)


def test_tiny_model_generates_from_an_image_prompt(tiny_model_and_processor) -> None:
    model, processor = tiny_model_and_processor
    image = Image.new("RGB", (80, 60), "white")
    ImageDraw.Draw(image).ellipse((20, 10, 60, 50), fill="red")
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Hi"}]}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    inputs = processor(text=[text], images=[image], return_tensors="pt")
    new_tokens = _generate(model, inputs)

    expected_pads = int(inputs["image_grid_thw"].prod()) // MERGE_LENGTH
    assert _count(inputs["input_ids"], model.config.image_token_id) == expected_pads
    assert len(new_tokens) > 0
    assert isinstance(processor.decode(new_tokens), str)


def test_tiny_model_generates_from_a_video_prompt(
    tiny_model_and_processor, decord_video_reader, tmp_path: Path
) -> None:
    from qwen_vl_utils import process_vision_info

    model, processor = tiny_model_and_processor
    video = {
        "type": "video",
        "video": str(_write_moving_dot_mp4(tmp_path / "dot.mp4")),
        "nframes": SAMPLED_FRAMES,
        "min_pixels": FRAME_PIXELS,
        "max_pixels": FRAME_PIXELS,
    }
    messages = [{"role": "user", "content": [video, {"type": "text", "text": "Where?"}]}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    _, videos, video_kwargs = process_vision_info(
        messages, return_video_kwargs=True, return_video_metadata=True
    )
    frames, metadata = zip(*videos, strict=True)
    inputs = processor(
        text=[text],
        videos=list(frames),
        video_metadata=list(metadata),
        return_tensors="pt",
        **video_kwargs,
    )
    seen_by_vision_tower = []
    hook = model.model.visual.register_forward_hook(
        lambda _module, args, kwargs, _output: seen_by_vision_tower.append(kwargs["grid_thw"]),
        with_kwargs=True,
    )
    try:
        new_tokens = _generate(model, inputs)
    finally:
        hook.remove()

    sampled_fps = SAMPLED_FRAMES / VIDEO_FRAMES * VIDEO_FPS
    assert metadata[0]["video_backend"] == "decord"
    assert inputs["pixel_values_videos"].shape[0] == int(inputs["video_grid_thw"].prod())
    assert inputs["second_per_grid_ts"].tolist() == [2 / sampled_fps]
    assert torch.equal(seen_by_vision_tower[0], inputs["video_grid_thw"])
    expected_pads = int(inputs["video_grid_thw"].prod()) // MERGE_LENGTH
    assert _count(inputs["input_ids"], model.config.video_token_id) == expected_pads
    assert len(new_tokens) > 0


def test_build_is_deterministic_under_a_seed(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    sizes = {"hidden_size": 32, "num_heads": 2, "num_kv_heads": 1, "num_layers": 1}
    sizes |= {"vision_hidden_size": 32, "vision_heads": 2, "vision_depth": 1, "vocab_size": 300}
    rng_before = torch.random.get_rng_state()

    weights = [
        load_file(build_tiny_model(tmp_path / name, seed=seed, **sizes) / "model.safetensors")
        for name, seed in (("first", 7), ("again", 7), ("other", 8))
    ]

    first, again, other = (w["lm_head.weight"] for w in weights)
    assert torch.equal(first, again)
    assert not torch.equal(first, other)
    assert torch.equal(torch.random.get_rng_state(), rng_before)


def test_language_weights_start_at_a_width_scaled_std(tiny_model_and_processor) -> None:
    """Qwen's std of 0.02 is for widths in the thousands; a 64-wide model needs ~1/8."""
    model, _ = tiny_model_and_processor
    width = model.config.text_config.hidden_size
    weight = model.model.language_model.layers[0].mlp.up_proj.weight
    assert abs(weight.std().item() - width**-0.5) < 0.1 * width**-0.5
