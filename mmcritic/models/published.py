"""The released Qwen2-VL-7B, Qwen2.5-VL-3B and -7B and Qwen3-VL-8B architectures, with random
weights, at any depth.

Speed and memory of a training step depend on a model's shapes, not on its weights, so the shapes
of the released checkpoints can be measured without downloading them: the same widths, heads,
rotary sections and vision geometry, random weights, and as many language and vision layers as
the machine holds (every layer of either stack has the same shape, so a cut model is the full
one with fewer identical blocks). The token ids come from the tokenizer the model is built with,
as in `mmcritic.models.tiny`, never from the released vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

from mmcritic.models.families import Family, family_named, family_of
from mmcritic.models.tiny import (
    ENDOFTEXT_TOKEN,
    EOS_TOKEN,
    TinyModelSpec,
    qwen_vl_config,
    rope_parameters,
    vision_config,
)


@dataclass(frozen=True)
class PublishedShape:
    """The fields of a released config.json that fix its compute and memory. `vision_blocks`
    are the family's special vision blocks: Qwen2.5-VL's full-attention ones, Qwen3-VL's
    DeepStack sources (none in Qwen2-VL)."""

    family: str
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    rope_theta: float
    mrope_section: tuple[int, int, int]
    vision_depth: int
    vision_hidden_size: int
    vision_intermediate_size: int
    vision_heads: int
    vision_blocks: tuple[int, ...] = ()
    head_dim: int | None = None
    vision_position_embeddings: int | None = None
    rms_norm_eps: float = 1e-6
    initializer_range: float = 0.02

    @property
    def model_family(self) -> Family:
        return family_named(self.family)

    @property
    def text_head_dim(self) -> int:
        return self.head_dim or self.hidden_size // self.num_heads


# Values of the released config.json files on huggingface.co: Qwen/Qwen2-VL-7B-Instruct,
# Qwen/Qwen2.5-VL-3B-Instruct and -7B-Instruct (the same vision tower; the merger projects into
# each language model's width), Qwen/Qwen3-VL-8B-Instruct.
_QWEN2_TEXT = {"max_position_embeddings": 32_768, "rope_theta": 1_000_000.0}
_QWEN2_5_TEXT = {"max_position_embeddings": 128_000, "rope_theta": 1_000_000.0}
_QWEN2_5_VISION = {
    "vision_depth": 32,
    "vision_hidden_size": 1280,
    "vision_intermediate_size": 3420,
    "vision_heads": 16,
    "vision_blocks": (7, 15, 23, 31),
}
# Qwen2-VL-7B and Qwen2.5-VL-7B share their language model's widths (Qwen2-7B's)
_QWEN2_7B_WIDTHS = {
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_layers": 28,
    "num_heads": 28,
    "num_kv_heads": 4,
    "vocab_size": 152_064,
    "tie_word_embeddings": False,
    "mrope_section": (16, 24, 24),
}
PUBLISHED: dict[str, PublishedShape] = {
    "qwen2-vl-7b": PublishedShape(
        family="qwen2-vl",
        vision_depth=32,
        vision_hidden_size=1280,
        vision_intermediate_size=5120,
        vision_heads=16,
        **_QWEN2_7B_WIDTHS,
        **_QWEN2_TEXT,
    ),
    "qwen2.5-vl-3b": PublishedShape(
        family="qwen2.5-vl",
        hidden_size=2048,
        intermediate_size=11008,
        num_layers=36,
        num_heads=16,
        num_kv_heads=2,
        vocab_size=151_936,
        tie_word_embeddings=True,
        mrope_section=(16, 24, 24),
        **_QWEN2_5_TEXT,
        **_QWEN2_5_VISION,
    ),
    "qwen2.5-vl-7b": PublishedShape(
        family="qwen2.5-vl",
        **_QWEN2_7B_WIDTHS,
        **_QWEN2_5_TEXT,
        **_QWEN2_5_VISION,
    ),
    "qwen3-vl-8b": PublishedShape(
        family="qwen3-vl",
        hidden_size=4096,
        intermediate_size=12288,
        num_layers=36,
        num_heads=32,
        num_kv_heads=8,
        head_dim=128,
        vocab_size=151_936,
        tie_word_embeddings=False,
        max_position_embeddings=262_144,
        rope_theta=5_000_000.0,
        mrope_section=(24, 20, 20),
        vision_depth=27,
        vision_hidden_size=1152,
        vision_intermediate_size=4304,
        vision_heads=16,
        vision_blocks=(8, 16, 24),
        vision_position_embeddings=2304,
    ),
}


def special_blocks(shape: PublishedShape, depth: int) -> list[int]:
    """The family's special vision blocks at `depth` blocks. Qwen2.5-VL: the released
    full-attention blocks that remain and the last one (a full-attention block in the released
    tower), so a cut tower still runs both kinds of block once it has two. Qwen3-VL: the
    DeepStack sources that remain, or the last block when none does, so DeepStack still runs."""
    kept = [index for index in shape.vision_blocks if index < depth]
    if shape.family == "qwen2.5-vl":
        return sorted({*kept, depth - 1})
    if shape.family == "qwen3-vl":
        return kept or [depth - 1]
    return kept


def released_widths(name: str, layers: int = 1, vision_layers: int = 1) -> TinyModelSpec:
    """A tiny-model spec (small vocabulary and pixel budgets) at `name`'s released widths, heads
    and rotary sections: what a CPU test needs to run a shape-dependent path at real width."""
    shape = PUBLISHED[name]
    return TinyModelSpec(
        family=shape.family,
        hidden_size=shape.num_heads * shape.text_head_dim,
        intermediate_size=shape.intermediate_size,
        num_layers=layers,
        num_heads=shape.num_heads,
        num_kv_heads=shape.num_kv_heads,
        vision_hidden_size=shape.vision_hidden_size,
        vision_intermediate_size=shape.vision_intermediate_size,
        vision_depth=vision_layers,
        vision_heads=shape.vision_heads,
        initializer_range=shape.initializer_range,
        mrope_section=shape.mrope_section,
    )


def published_config(
    name: str,
    tokenizer: Any,
    layers: int | None = None,
    vision_layers: int | None = None,
    vocab_size: int | None = None,
) -> Any:
    """The released `name`'s configuration with `layers` language and `vision_layers` vision
    blocks (default: all) and `vocab_size` rows of embedding and output head (default: the
    released count; a smaller tokenizer's size cuts the head to the tokens it can produce)."""
    if name not in PUBLISHED:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(PUBLISHED)}")
    shape = PUBLISHED[name]
    family = shape.model_family
    layers = layers or shape.num_layers
    vision_layers = vision_layers or shape.vision_depth
    vocab_size = vocab_size or shape.vocab_size
    if not (0 < layers <= shape.num_layers and 0 < vision_layers <= shape.vision_depth):
        raise ValueError(
            f"{name} has {shape.num_layers} language and {shape.vision_depth} vision layers; "
            f"asked for {layers} and {vision_layers}"
        )
    if vocab_size < len(tokenizer):
        raise ValueError(
            f"vocab_size {vocab_size} is smaller than the tokenizer ({len(tokenizer)})"
        )
    text_config = {
        "vocab_size": vocab_size,
        "hidden_size": shape.hidden_size,
        "intermediate_size": shape.intermediate_size,
        "num_hidden_layers": layers,
        "num_attention_heads": shape.num_heads,
        "num_key_value_heads": shape.num_kv_heads,
        "head_dim": shape.text_head_dim,
        "max_position_embeddings": shape.max_position_embeddings,
        "rms_norm_eps": shape.rms_norm_eps,
        "rope_parameters": rope_parameters(family, list(shape.mrope_section), shape.rope_theta),
        "initializer_range": shape.initializer_range,
        "tie_word_embeddings": shape.tie_word_embeddings,
    }
    vision = vision_config(
        family,
        depth=vision_layers,
        hidden=shape.vision_hidden_size,
        intermediate=shape.vision_intermediate_size,
        heads=shape.vision_heads,
        out_hidden=shape.hidden_size,
        blocks=special_blocks(shape, vision_layers),
        position_embeddings=shape.vision_position_embeddings,
    )
    return qwen_vl_config(
        family,
        text_config,
        vision,
        tokenizer,
        tie_word_embeddings=shape.tie_word_embeddings,
        initializer_range=shape.initializer_range,
    )


def build_published_model(
    out_dir: str | Path,
    config: Any,
    processor: Any,
    dtype: torch.dtype,
    device: str = "cpu",
    seed: int = 0,
) -> Path:
    """Writes a random-weight model of `config` in `dtype`, with `processor`, to `out_dir`;
    `device` is where the weights are initialised (a GPU draws a 7B model's in seconds)."""
    import torch
    from transformers import GenerationConfig

    tokenizer = processor.tokenizer
    generators = [torch.cuda.current_device()] if device.startswith("cuda") else []
    with torch.random.fork_rng(devices=generators), torch.device(device):
        torch.manual_seed(seed)
        model = family_of(config).model_type_class()._from_config(config, dtype=dtype)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.convert_tokens_to_ids(ENDOFTEXT_TOKEN),
        eos_token_id=tokenizer.convert_tokens_to_ids([EOS_TOKEN, ENDOFTEXT_TOKEN]),
        pad_token_id=tokenizer.pad_token_id,
    )
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    return out_dir
