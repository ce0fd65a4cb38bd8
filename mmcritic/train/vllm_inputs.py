"""Prompts for vLLM in the form its multimodal processor expands, with the media they show.

TRL 1.16 hands vLLM prompt ids in which every image is already expanded into its pad tokens,
plus the image: vLLM's Qwen2.5-VL processor then expands the first pad again, so the engine runs
a prompt with the image's tokens doubled. Videos reach vLLM as pad tokens with no video at all,
and images are sized by the checkpoint's default pixel budget rather than the run's.

Here every image or video becomes one pad between its vision start and end tokens (on Qwen3-VL,
a video's per-frame timestamps and wrappers go too, as vLLM writes them again), the row's images
and videos go along, and the processor arguments repeat the trainer's own processor call: its
image pixel budget, videos already sampled and resized (no second resize), each video's metadata
(the model's temporal positions derive from it). vLLM then expands each pad into exactly the tokens,
grids and video timing the trainer encoded (`tests/test_vllm_inputs.py` checks this with
vLLM's own processor).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mmcritic.data.video import LoadedVideo
from mmcritic.models.families import VISION_END_TOKEN, VISION_START_TOKEN, Family
from mmcritic.models.vllm_media import media_fields


@dataclass(frozen=True)
class MediaTokens:
    """The pad token ids an image and a video expand into, and the vision start and end tokens
    the chat template wraps each item in."""

    image: int
    video: int
    start: int
    end: int

    @classmethod
    def of(cls, processor: Any) -> MediaTokens:
        token_id = processor.tokenizer.convert_tokens_to_ids
        return cls(
            processor.image_token_id,
            processor.video_token_id,
            token_id(VISION_START_TOKEN),
            token_id(VISION_END_TOKEN),
        )


def collapse_media_pads(prompt_ids: Sequence[int], tokens: MediaTokens) -> list[int]:
    """The prompt with each media item cut back to the placeholder vLLM expands: start, one pad,
    end. The chat template wraps every item in vision start and end tokens; inside, an item is
    a run of pads, or on Qwen3-VL a video is one `<t seconds>` text and a wrapped run of pads
    per frame pair, all of which goes. A run of pads outside any item becomes one pad."""
    collapsed: list[int] = []
    index = 0
    while index < len(prompt_ids):
        token = prompt_ids[index]
        if token == tokens.start:
            end = _item_end(prompt_ids, index, tokens)
            item = prompt_ids[index : end + 1]
            pads = [pad for pad in (tokens.image, tokens.video) if pad in item]
            collapsed += [tokens.start, pads[0], tokens.end] if len(pads) == 1 else item
            index = end + 1
            continue
        if not (token in (tokens.image, tokens.video) and collapsed and collapsed[-1] == token):
            collapsed.append(token)
        index += 1
    return collapsed


def _item_end(prompt_ids: Sequence[int], start: int, tokens: MediaTokens) -> int:
    """The index of the end token that closes the item opened at `start` (nested items are
    Qwen3-VL's frame pairs); the last index when it is never closed."""
    depth = 0
    for index in range(start, len(prompt_ids)):
        depth += (prompt_ids[index] == tokens.start) - (prompt_ids[index] == tokens.end)
        if depth == 0:
            return index
    return len(prompt_ids) - 1


def vllm_prompt(
    prompt_ids: Sequence[int],
    images: Sequence[Any],
    videos: Sequence[LoadedVideo],
    tokens: MediaTokens,
    image_size: dict[str, int],
    family: Family | None = None,
) -> dict[str, Any]:
    """The vLLM prompt dict that expands to `prompt_ids` (the trainer's expanded ids) given the
    row's images (PIL, already in the run's budget) and videos (loaded frames), for a model of
    `family` (None: Qwen2.5-VL)."""
    collapsed = collapse_media_pads(prompt_ids, tokens)
    _check_count(collapsed.count(tokens.image), len(images), "image")
    _check_count(collapsed.count(tokens.video), len(videos), "video")
    return {"prompt_token_ids": collapsed, **media_fields(images, videos, image_size, family)}


def _check_count(placeholders: int, items: int, kind: str) -> None:
    if placeholders != items:
        raise ValueError(
            f"a prompt has {placeholders} {kind} placeholder(s) but {items} {kind}(s) to show"
        )


RowMedia = tuple[Sequence[Any], Sequence[LoadedVideo]]


class MediaPromptLLM:
    """vLLM's `LLM` as TRL's `VLLMGeneration` calls it (colocate mode), each prompt rewritten
    by `vllm_prompt` on its way in; everything else passes through to the engine.

    A row's images come from the prompt dict TRL built; a batch that holds a video (whose media
    the trainer keeps out of TRL's hands) hands every row's images and videos over through
    `media`, in the order of the prompts."""

    def __init__(
        self,
        llm: Any,
        tokens: MediaTokens,
        image_size: dict[str, int],
        family: Family | None = None,
    ):
        self.llm = llm
        self.tokens = tokens
        self.image_size = dict(image_size)
        self.family = family
        self._rows: list[RowMedia] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)

    @contextmanager
    def media(self, images: Sequence[Sequence[Any]], videos: Sequence[Sequence[Any]]) -> Iterator:
        self._rows = list(zip(images, videos, strict=True))
        try:
            yield
        finally:
            self._rows = None

    def generate(self, prompts: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        if self._rows is not None and len(self._rows) != len(prompts):
            raise ValueError(
                f"{len(prompts)} prompts reached vLLM for {len(self._rows)} rows of media"
            )
        rows = self._rows or [(_trl_images(prompt), []) for prompt in prompts]
        rewritten = [
            vllm_prompt(
                prompt["prompt_token_ids"],
                images,
                videos,
                self.tokens,
                self.image_size,
                self.family,
            )
            for prompt, (images, videos) in zip(prompts, rows, strict=True)
        ]
        return self.llm.generate(rewritten, *args, **kwargs)


def _trl_images(prompt: dict[str, Any]) -> list[Any]:
    """The images TRL put in a prompt dict: one image alone, several as a list."""
    image = prompt.get("multi_modal_data", {}).get("image")
    if image is None:
        return []
    return list(image) if isinstance(image, list) else [image]


class SameSizeServerImages:
    """TRL's `_place_features` for a vLLM server, refusing images the server sized otherwise than
    the trainer did. The server turns each image into features with its own processor settings,
    and TRL points them at the runs of image pads in the trainer's ids: a server launched with
    another pixel budget (the checkpoint's default is 12.8 M pixels) makes more or fewer image
    tokens than the trainer's ids hold, and the prompt would be generated from misplaced
    features."""

    def __init__(self, place: Any, budget: dict[str, int]):
        self.place = place
        self.budget = dict(budget)

    def __call__(self, features: dict | None, prompt_ids: list[int]) -> dict | None:
        placed = self.place(features, prompt_ids)
        if features is None:
            return placed
        served = [item["length"] for item in features["mm_placeholders"]["image"]]
        ours = [item["length"] for item in placed["mm_placeholders"]["image"]]
        if served != ours:
            raise ValueError(
                f"the vLLM server made {served} tokens of the images the trainer made {ours} of: "
                f"launch it with the run's image budget, vLLM's --mm-processor-kwargs "
                f"'{json.dumps({'size': self.budget})}'"
            )
        return placed
