"""Batched generation with a vision-language model, independent of training and UI.

Prompts are chat messages with `{"type": "image"}` and `{"type": "video"}` parts; images are PIL
images and videos are frame tensors, both already resized by qwen-vl-utils into the run's pixel
budget. Sampling is seeded explicitly, so the same call gives the same answers, and vision
placeholder tokens are suppressed for the reason given in `mmcritic.models.loading`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from mmcritic.data.video import LoadedVideo, processor_video_kwargs
from mmcritic.models.loading import vision_token_ids


@torch.no_grad()
def generate(
    model: Any,
    processor: Any,
    prompts: list[list[dict[str, Any]]],
    images: list[list[Any]],
    max_new_tokens: int = 256,
    temperature: float = 0.0,
    top_p: float = 1.0,
    num_samples: int = 1,
    seed: int | None = 0,
    videos: list[list[LoadedVideo]] | None = None,
    stop: Sequence[str] = (),
) -> list[list[str]]:
    """`num_samples` completions for each prompt; temperature 0 means greedy decoding; a row
    ends at its end-of-turn token or once it has written one of `stop` (kept in the text).

    `images[i]` and `videos[i]` hold the media of prompt i in the order of its placeholders.
    """
    inputs = encode_batch(processor, prompts, images, videos).to(model.device)
    if seed is not None:
        torch.manual_seed(seed)
    sampling = temperature > 0
    output = model.generate(
        **inputs,
        max_new_tokens=max_new_tokens,
        do_sample=sampling,
        temperature=temperature if sampling else None,
        top_p=top_p if sampling else None,
        top_k=None,
        num_return_sequences=num_samples,
        suppress_tokens=vision_token_ids(processor.tokenizer),
        pad_token_id=processor.tokenizer.pad_token_id,
        stop_strings=list(stop) or None,
        tokenizer=processor.tokenizer if stop else None,
    )
    new_tokens = output[:, inputs["input_ids"].shape[1] :]
    decoded = processor.batch_decode(new_tokens, skip_special_tokens=True)
    return [decoded[i * num_samples : (i + 1) * num_samples] for i in range(len(prompts))]


def encode_batch(
    processor: Any,
    prompts: list[list[dict[str, Any]]],
    images: list[list[Any]],
    videos: list[list[LoadedVideo]] | None,
) -> Any:
    """One left-padded processor call for prompts and all their media, in placeholder order."""
    texts = [
        processor.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        for prompt in prompts
    ]
    flat_images = [image for prompt_images in images for image in prompt_images]
    flat_videos = [video for prompt_videos in videos or [] for video in prompt_videos]
    return processor(
        text=texts,
        images=flat_images or None,
        padding=True,
        padding_side="left",
        return_tensors="pt",
        **processor_video_kwargs(flat_videos),
    )
