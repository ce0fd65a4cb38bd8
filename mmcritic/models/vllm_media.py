"""The media part of a vLLM prompt: images, videos with their metadata and cache keys, and the
processor settings that make vLLM's processor encode them as mmcritic's processor call does.

Rollouts in training (`mmcritic.train.vllm_inputs`) and the in-process vLLM engine
(`mmcritic.inference.engines.vllm`) both send media this way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import torch

from mmcritic.data.video import LoadedVideo, processor_video_kwargs
from mmcritic.models.families import Family


def processor_kwargs(image_size: dict[str, int], videos: Sequence[LoadedVideo]) -> dict[str, Any]:
    """vLLM's `mm_processor_kwargs` for one prompt: the trainer's processor settings, scoped to
    each modality as vLLM hashes them for its processor cache."""
    kwargs: dict[str, Any] = {"images_kwargs": {"size": dict(image_size)}}
    if videos:
        kwargs["videos_kwargs"] = {
            **processor_video_kwargs(list(videos))["videos_kwargs"],
            "video_metadata": [video.metadata for video in videos],
        }
    return kwargs


def media_fields(
    images: Sequence[Any],
    videos: Sequence[LoadedVideo],
    image_size: dict[str, int],
    family: Family | None = None,
) -> dict[str, Any]:
    """The media part of a vLLM prompt dict (nothing for a text-only prompt): the images, the
    videos with their metadata and cache keys, and the processor settings. Videos for a model of
    a family vLLM cannot encode videos of (`Family.vllm_video`) are refused; `family` None is
    a Qwen2.5-VL model."""
    if videos and family is not None and not family.vllm_video:
        raise ValueError(vllm_video_refusal(family))
    if not images and not videos:
        return {}
    data: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    if images:
        data["image"] = list(images)
    if videos:
        data["video"] = [(video.frames, video.metadata) for video in videos]
        fields["multi_modal_uuids"] = {"video": video_uuids(videos)}
    fields["multi_modal_data"] = data
    fields["mm_processor_kwargs"] = processor_kwargs(image_size, videos)
    return fields


def video_uuids(videos: Sequence[LoadedVideo]) -> list[str]:
    """Cache keys for a prompt's videos, each naming all of them. The metadata travels as one
    list per prompt, so vLLM's processor cache must never hit some videos of a prompt and
    process the rest alone under the whole list."""
    digest = hashlib.sha256()
    for video in videos:
        frames = torch.as_tensor(video.frames).contiguous()
        digest.update(frames.cpu().numpy().tobytes())
        digest.update(json.dumps(video.metadata, sort_keys=True).encode())
    key = digest.hexdigest()[:32]
    return [f"{key}-{index}" for index in range(len(videos))]


def vllm_video_refusal(family: Family) -> str:
    """Why a video prompt for a model of `family` cannot go through vLLM, and what to do."""
    return (
        f"vLLM cannot encode {family.name} video prompts as the model's processor does (vLLM "
        "0.30's processor fails on them with transformers 5.23, vllm-project/vllm#46817): use "
        "grpo.use_vllm: false for video data, or --engine hf"
    )
