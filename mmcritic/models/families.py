"""The model families mmcritic trains and serves, and everything that differs between them.

Qwen2-VL, Qwen2.5-VL and Qwen3-VL share Qwen's vocabulary of media tokens and the 3-D rotary
positions (`get_rope_index`) that the shared-prefix pass reuses, but not the classes, the pixel
grid, the chat template or how a video reaches the prompt. Each of those facts lives here, once;
the tiny builder, the loaders, the rollout's media handling, the shared-prefix pass, the media
budgets and the evaluation protocols read them from a `Family`. A model whose `config.json`
names another architecture fails at load with the list of families supported.

Versions: the classes are transformers 5.23's; the chat templates are the released checkpoints'
own (Qwen2-VL ships Qwen2.5-VL's template byte for byte).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib.resources import files
from pathlib import Path
from typing import Any

from mmcritic.data.media import MediaBudget
from mmcritic.data.resize import SPATIAL_MERGE_SIZE

# Qwen's media tokens, the same strings and roles in every family here.
VISION_START_TOKEN = "<|vision_start|>"
VISION_END_TOKEN = "<|vision_end|>"
IMAGE_TOKEN = "<|image_pad|>"
VIDEO_TOKEN = "<|video_pad|>"
VISION_PAD_TOKEN = "<|vision_pad|>"
# Tokens that stand for media in a prompt. A policy that samples one would make the next forward
# pass look for image features that do not exist ("Image features and image tokens do not match").
MEDIA_TOKENS = (IMAGE_TOKEN, VIDEO_TOKEN, VISION_START_TOKEN, VISION_END_TOKEN, VISION_PAD_TOKEN)
CHAT_TEMPLATES = "chat_templates"


@dataclass(frozen=True)
class Family:
    """One architecture family: its transformers classes and the facts code outside the model
    needs about it.

    `patch_size` and `merge_size` fix the pixel grid: one visual token covers a square of
    `token_side` pixels, so images are resized to multiples of it and a token budget is
    `pixels / token_side**2`. `rope_media_keys` are the processor outputs besides the grids that
    the model's `get_rope_index` reads. `vllm_video` says whether vLLM (0.30, with transformers
    5.23) encodes the family's video prompts as its own processor does: for Qwen3-VL it fails
    on every video prompt, and it writes the frames' wrappers in another order than the model's
    processor (vllm-project/vllm#46817), so videos are refused there. `lmms_eval_model` is the
    `--model` lmms-eval runs it with, which the `lmms-eval` protocol follows."""

    name: str
    model_type: str
    config_class: str
    model_class: str
    processor_class: str
    video_processor_class: str
    patch_size: int
    chat_template_file: str
    lmms_eval_model: str
    image_mean: tuple[float, float, float]
    image_std: tuple[float, float, float]
    rope_media_keys: tuple[str, ...] = ()
    vllm_video: bool = True
    merge_size: int = SPATIAL_MERGE_SIZE
    temporal_patch_size: int = 2

    @property
    def token_side(self) -> int:
        """Pixels along one side of the square a visual token covers."""
        return self.patch_size * self.merge_size

    @property
    def chat_template(self) -> str:
        """The released chat template, byte for byte: TRL swaps in its training variant (for
        assistant-only loss) only when the template equals the released one exactly."""
        path = files(__package__).joinpath(CHAT_TEMPLATES, self.chat_template_file)
        return path.read_text(encoding="utf-8")

    def media_budget(self, budget: MediaBudget) -> MediaBudget:
        """`budget` spent on this family's pixel grid."""
        return replace(budget, patch_size=self.patch_size)

    def config_type_class(self) -> Any:
        import transformers

        return getattr(transformers, self.config_class)

    def model_type_class(self) -> Any:
        import transformers

        return getattr(transformers, self.model_class)

    def processor_type_class(self) -> Any:
        import transformers

        return getattr(transformers, self.processor_class)

    def video_processor_type_class(self) -> Any:
        import transformers

        return getattr(transformers, self.video_processor_class)


_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family(
            name="qwen2-vl",
            model_type="qwen2_vl",
            config_class="Qwen2VLConfig",
            model_class="Qwen2VLForConditionalGeneration",
            processor_class="Qwen2VLProcessor",
            video_processor_class="Qwen2VLVideoProcessor",
            patch_size=14,
            chat_template_file="qwen2_5_vl.jinja",
            lmms_eval_model="qwen2_vl",
            image_mean=_CLIP_MEAN,
            image_std=_CLIP_STD,
        ),
        Family(
            name="qwen2.5-vl",
            model_type="qwen2_5_vl",
            config_class="Qwen2_5_VLConfig",
            model_class="Qwen2_5_VLForConditionalGeneration",
            processor_class="Qwen2_5_VLProcessor",
            video_processor_class="Qwen2VLVideoProcessor",
            patch_size=14,
            chat_template_file="qwen2_5_vl.jinja",
            lmms_eval_model="qwen2_5_vl",
            image_mean=_CLIP_MEAN,
            image_std=_CLIP_STD,
            rope_media_keys=("second_per_grid_ts",),
        ),
        Family(
            name="qwen3-vl",
            model_type="qwen3_vl",
            config_class="Qwen3VLConfig",
            model_class="Qwen3VLForConditionalGeneration",
            processor_class="Qwen3VLProcessor",
            video_processor_class="Qwen3VLVideoProcessor",
            patch_size=16,
            chat_template_file="qwen3_vl.jinja",
            lmms_eval_model="qwen3_vl",
            image_mean=(0.5, 0.5, 0.5),
            image_std=(0.5, 0.5, 0.5),
            vllm_video=False,
        ),
    )
}
DEFAULT_FAMILY = "qwen2.5-vl"


class UnsupportedModelError(ValueError):
    """A model whose architecture is none of `FAMILIES`."""


def family_named(name: str) -> Family:
    """The family called `name` (`qwen2-vl`, `qwen2.5-vl`, `qwen3-vl`)."""
    if name not in FAMILIES:
        raise UnsupportedModelError(f"unknown model family {name!r}; {_supported()}")
    return FAMILIES[name]


def family_of(config: Any, source: str = "the model") -> Family:
    """The family of a model config (a transformers config or a config.json dict)."""
    model_type = config.get("model_type") if isinstance(config, dict) else config.model_type
    for family in FAMILIES.values():
        if family.model_type == model_type:
            return family
    raise UnsupportedModelError(f"{source} is a {model_type!r} model; {_supported()}")


def family_of_model(name_or_path: str) -> Family:
    """The family of a checkpoint folder or cached hub id, from its config.json (and, for a LoRA
    folder, its base model's)."""
    from transformers import AutoConfig

    from mmcritic.models.checkpoints import adapter_base

    base = adapter_base(name_or_path)
    if base is not None:
        return family_of_model(base)
    local = Path(name_or_path) / "config.json"
    if local.is_file():
        return family_of(json.loads(local.read_text()), str(name_or_path))
    return family_of(AutoConfig.from_pretrained(str(name_or_path)), str(name_or_path))


def family_if_known(name_or_path: str) -> Family | None:
    """The family of a model whose config can be read here and is supported, else None: a
    served model needs no family (the server runs it), only media sized for it when known."""
    try:
        return family_of_model(name_or_path)
    except (OSError, ValueError):
        return None


def _supported() -> str:
    names = ", ".join(f"{family.name} ({family.model_type})" for family in FAMILIES.values())
    return f"mmcritic supports {names}"
