"""A tiny random-weight Qwen-VL model of any supported family, built offline in about a second.

Tests, smoke runs and CI need to exercise the real code paths (the family's model class, its
processor, chat template, vision placeholders, M-RoPE, DeepStack, video inputs) without a hub
download or a GPU. Only the sizes are shrunk: the classes, special tokens, pixel grid and chat
template are the family's own (`mmcritic.models.families`), so code that works against this model
works against the released checkpoints.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmcritic.models.families import (
    DEFAULT_FAMILY,
    IMAGE_TOKEN,
    VIDEO_TOKEN,
    VISION_END_TOKEN,
    VISION_PAD_TOKEN,
    VISION_START_TOKEN,
    Family,
    family_named,
)

if TYPE_CHECKING:
    from transformers import Qwen2Tokenizer

logger = logging.getLogger(__name__)

# Qwen's special tokens, in the order Qwen numbers them (151643 onwards in the released vocab).
ENDOFTEXT_TOKEN = "<|endoftext|>"
EOS_TOKEN = "<|im_end|>"
SPECIAL_TOKENS = (
    ENDOFTEXT_TOKEN,
    "<|im_start|>",
    EOS_TOKEN,
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    VISION_START_TOKEN,
    VISION_END_TOKEN,
    VISION_PAD_TOKEN,
    IMAGE_TOKEN,
    VIDEO_TOKEN,
)
BYTE_ALPHABET_SIZE = 256

# The released Qwen2.5-VL's 112-pixel attention windows, kept so windowed blocks run as released.
WINDOW_SIZE = 112
# The released checkpoints' temporal M-RoPE step: position ids per second of video.
TOKENS_PER_SECOND = 2
# Each rotary half of a text head is split into temporal, height and width sections 2:3:3
# (Qwen2-VL and Qwen2.5-VL: 16, 24, 24 for their 128-wide heads).
MROPE_RATIO = (2, 3, 3)
ROPE_THETA = 1_000_000.0
# Qwen3-VL's learnt vision position grid, 16 x 16 here (48 x 48 released), interpolated to each
# image's grid as in the released model.
VISION_POSITION_EMBEDDINGS = 256
# Vision blocks whose features DeepStack adds into the first text layers (8, 16, 24 released).
DEEPSTACK_LAYERS = 3
VIDEO_MAX_FRAMES = 16

COLOURS = ("red", "green", "blue", "yellow", "orange", "purple", "black", "white", "grey", "pink")
SHAPES = ("circle", "square", "triangle", "star", "rectangle", "dot", "line", "cube")
COUNTS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
DIRECTIONS = ("left", "right", "up", "down", "above", "below", "top", "bottom", "centre")
CRITIC_PHRASES = (
    "You are a helpful assistant.",
    "You are an impartial judge.",
    "Look carefully at the image, read the question, and compare the two responses below.",
    "Look carefully at the video, read the question, and rate the response below.",
    "Which response is better? Which answer is correct?",
    "Judge which response answers the question better: correct, complete, clear and relevant.",
    "Question: What colour is the shape? How many shapes are there? Where is the dot moving?",
    "The first response:",
    "The second response:",
    "The response:",
    "Response 1 is better than Response 2.",
    "Response 2 is better than Response 1.",
    "Put the index of the better response, 1 or 2, in the box.",
    "Give the response a score from 1 to 10 and put the score alone in the box.",
    "You FIRST think about the reasoning process as an internal monologue and then provide the "
    "final answer.",
    "The reasoning process MUST BE enclosed within <think> </think> tags.",
    "The final answer MUST BE put in \\boxed{}.",
    "<think> Let me think step by step. </think> \\boxed{1}",
    "<think> Both responses are wrong, but the second is closer. </think> \\boxed{2}",
    "Yes. No. True. False. A, B, C or D; (a) [b] {c} 'quoted' \"double\" - + = * / % # @ & ! ?",
)


@dataclass(frozen=True)
class TinyModelSpec:
    """Sizes of a tiny model of `family`; one field per CLI flag.

    Defaults give about 0.4 M parameters. Media budgets are in visual tokens per image and per
    video frame, so they hold on every family's pixel grid; they are small so that a test image
    becomes a handful of visual tokens. The language model's weights start at std
    `initializer_range`, by default 1/sqrt(hidden_size): Qwen's 0.02 suits widths near 2,500,
    and at width 64 it starts every weight so close to zero that the model sits for hundreds of
    steps on the plateau before it can relate an image to a response.
    """

    family: str = DEFAULT_FAMILY
    hidden_size: int = 64
    intermediate_size: int = 128
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    vision_hidden_size: int = 64
    vision_intermediate_size: int = 128
    vision_depth: int = 2
    vision_heads: int = 4
    vocab_size: int = 512
    max_position_embeddings: int = 32_768
    seed: int = 0
    initializer_range: float | None = None
    min_image_tokens: int = 4
    max_image_tokens: int = 64
    min_video_tokens: int = 4
    max_video_tokens: int = 16
    mrope_section: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        """Reject sizes the model modules would only fail on later, with a worse message."""
        family_named(self.family)
        _require(self.hidden_size % self.num_heads == 0, "hidden_size must divide into num_heads")
        _require(self.num_heads % self.num_kv_heads == 0, "num_heads must divide into KV heads")
        _require(
            sum(self.rotary_sections) * 2 == self.head_dim,
            f"text head_dim ({self.head_dim}) must be a multiple of {2 * sum(MROPE_RATIO)}, or "
            "twice the sum of mrope_section",
        )
        _require(
            self.vision_hidden_size % (4 * self.vision_heads) == 0,
            "vision_hidden_size must be a multiple of 4 * vision_heads",
        )
        _require(
            self.vocab_size >= BYTE_ALPHABET_SIZE + len(SPECIAL_TOKENS),
            f"vocab_size must hold the 256 bytes and {len(SPECIAL_TOKENS)} special tokens",
        )
        _require(
            0 < self.min_image_tokens <= self.max_image_tokens,
            "need 0 < min_image_tokens <= max_image_tokens",
        )
        _require(
            0 < self.min_video_tokens <= self.max_video_tokens,
            "need 0 < min_video_tokens <= max_video_tokens",
        )

    @property
    def model_family(self) -> Family:
        return family_named(self.family)

    @property
    def text_initializer_range(self) -> float:
        return self.initializer_range or self.hidden_size**-0.5

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def rotary_sections(self) -> list[int]:
        """Temporal, height and width sections of each rotary half: `mrope_section` when given
        (a released model's), else the head split 2:3:3."""
        if self.mrope_section is not None:
            return list(self.mrope_section)
        unit = self.head_dim // (2 * sum(MROPE_RATIO))
        return [part * unit for part in MROPE_RATIO]

    def pixels(self, tokens: int) -> int:
        """The pixel count of `tokens` visual tokens on this family's grid."""
        return tokens * self.model_family.token_side**2


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(f"TinyModelSpec: {message}")


def build_tiny_model(
    out_dir: str | Path, spec: TinyModelSpec | None = None, **overrides: Any
) -> Path:
    """Build a random-weight model of the spec's family and its processor into `out_dir`,
    downloading nothing.

    `overrides` replace fields of `spec` (e.g. `hidden_size=32`, `family="qwen3-vl"`), so
    callers can name only what they change. The result reloads with `AutoProcessor` and
    `AutoModelForImageTextToText`.
    """
    from transformers import GenerationConfig

    spec = replace(spec or TinyModelSpec(), **overrides)
    out_dir = Path(out_dir)
    processor = build_tiny_processor(spec)
    tokenizer = processor.tokenizer
    config = _model_config(spec, tokenizer)
    with _seeded(spec.seed):
        model = spec.model_family.model_type_class()(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.convert_tokens_to_ids(ENDOFTEXT_TOKEN),
        eos_token_id=tokenizer.convert_tokens_to_ids([EOS_TOKEN, ENDOFTEXT_TOKEN]),
        pad_token_id=tokenizer.pad_token_id,
    )
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    logger.info(
        "built a tiny %s (%d parameters, vocab %d) in %s",
        spec.family,
        model.num_parameters(),
        len(tokenizer),
        out_dir,
    )
    return out_dir


def build_tiny_processor(spec: TinyModelSpec) -> Any:
    """The family's real processor around a locally trained tokenizer and small pixel budgets."""
    from transformers import Qwen2VLImageProcessor

    family = spec.model_family
    geometry = {
        "patch_size": family.patch_size,
        "merge_size": family.merge_size,
        "temporal_patch_size": family.temporal_patch_size,
        "image_mean": list(family.image_mean),
        "image_std": list(family.image_std),
    }
    image_size = {
        "shortest_edge": spec.pixels(spec.min_image_tokens),
        "longest_edge": spec.pixels(spec.max_image_tokens),
    }
    video_size = {
        "shortest_edge": spec.pixels(spec.min_video_tokens),
        "longest_edge": spec.pixels(spec.max_video_tokens),
    }
    image_processor = Qwen2VLImageProcessor(size=image_size, **geometry)
    # cap_pixels_per_frame=True is qwen-vl-utils' own frame budget; it also silences the
    # deprecation warning transformers 5.23 prints on every video when it is left unset.
    video_processor = family.video_processor_type_class()(
        size=video_size, max_frames=VIDEO_MAX_FRAMES, cap_pixels_per_frame=True, **geometry
    )
    tokenizer = build_tiny_tokenizer(spec.vocab_size, spec.max_position_embeddings)
    tokenizer.chat_template = family.chat_template
    return family.processor_type_class()(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=family.chat_template,
    )


def build_tiny_tokenizer(vocab_size: int, model_max_length: int) -> Qwen2Tokenizer:
    """A `Qwen2Tokenizer` whose byte-level BPE is trained here, on critic-prompt vocabulary.

    The merges are learnt with Qwen's own pre-tokenizer so words split the way Qwen splits them;
    the special tokens follow the BPE vocabulary in Qwen's order, so their ids are deterministic.
    """
    from transformers import Qwen2Tokenizer

    vocab, merges = _train_bpe(vocab_size - len(SPECIAL_TOKENS))
    vocab.update({token: len(vocab) + offset for offset, token in enumerate(SPECIAL_TOKENS)})
    return Qwen2Tokenizer(
        vocab=vocab,
        merges=merges,
        unk_token=None,
        bos_token=None,
        eos_token=EOS_TOKEN,
        pad_token=ENDOFTEXT_TOKEN,
        extra_special_tokens=list(SPECIAL_TOKENS[1:]),
        model_max_length=model_max_length,
    )


def _train_bpe(bpe_vocab_size: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Vocabulary and merges of a byte-level BPE trained on the built-in corpus.

    The trainer may stop short of `bpe_vocab_size` once every corpus word is one token; the model's
    embedding is sized from the spec, so it still covers the tokenizer.
    """
    from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers, trainers
    from tokenizers.models import BPE
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    tokenizer = Tokenizer(BPE(continuing_subword_prefix="", end_of_word_suffix=""))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=bpe_vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus(), trainer)
    model = json.loads(tokenizer.to_str())["model"]
    return model["vocab"], [tuple(merge) for merge in model["merges"]]


def _corpus() -> list[str]:
    """A few hundred lines of the words critic prompts and synthetic tasks use, so common words
    become single tokens and generated text stays short."""
    lines = list(CRITIC_PHRASES)
    for i, (colour, shape) in enumerate(product(COLOURS, SHAPES)):
        count, better = COUNTS[i % len(COUNTS)], 1 + i % 2
        where, towards = DIRECTIONS[i % len(DIRECTIONS)], DIRECTIONS[(i + 1) % len(DIRECTIONS)]
        lines.append(f"There are {count} {colour} {shape}s at the {where}, moving {towards}.")
        lines.append(
            f"<think> The {colour} {shape} is {where}. Response {better} is better. </think> "
            f"\\boxed{{{better}}}"
        )
    sums = (f"{a} + {b} = {a + b}; {a} x {b} = {a * b}." for a in range(10) for b in range(10))
    return [*lines, *sums, *_template_lines()]


# The templates the tiny vocabulary is trained on. A template added later stays out: a new
# corpus line changes the BPE merges, so every tiny model, and every seed's result measured on
# one, would change with it; words of newer templates still tokenize, a few letters a token.
VOCABULARY_TEMPLATES = (
    "pairwise",
    "pairwise_compact",
    "pointwise",
    "think_boxed_suffix",
    "verifiable",
)


def _template_lines() -> list[str]:
    """The package's own prompt templates, filled in a few ways, so a critic prompt costs about a
    token per word as it does with Qwen's vocabulary, not one per few letters."""
    from mmcritic.data.prompts import builtin_template

    filled = []
    for name in VOCABULARY_TEMPLATES:
        text = builtin_template(name)
        for media, colour in product(("image", "video"), COLOURS[:4]):
            filled.append(
                text.replace("{media}", media)
                .replace("{question}", f"What colour is the {SHAPES[0]} in the {media}?")
                .replace("{response_1}", f"The shape is {colour}.")
                .replace("{response_2}", "The shape is red.")
                .replace("{response}", f"The shape is {colour}.")
                .replace("{tie_clause}", "")
                .replace("{scale}", "10")
            )
    return filled


def _model_config(spec: TinyModelSpec, tokenizer: Qwen2Tokenizer) -> Any:
    """The family's config at the spec's sizes, token ids read from the tokenizer."""
    family = spec.model_family
    text_config = {
        "vocab_size": spec.vocab_size,
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_hidden_layers": spec.num_layers,
        "num_attention_heads": spec.num_heads,
        "num_key_value_heads": spec.num_kv_heads,
        "head_dim": spec.head_dim,
        "max_position_embeddings": spec.max_position_embeddings,
        "rope_parameters": rope_parameters(family, spec.rotary_sections, ROPE_THETA),
        "initializer_range": spec.text_initializer_range,
        "dtype": "float32",
    }
    return qwen_vl_config(
        family,
        text_config,
        _vision_config(spec),
        tokenizer,
        tie_word_embeddings=False,
        initializer_range=spec.text_initializer_range,
        dtype="float32",
    )


def rope_parameters(family: Family, sections: list[int], theta: float) -> dict[str, Any]:
    """The text model's rotary settings: M-RoPE sections, interleaved in Qwen3-VL (temporal,
    height and width frequencies alternate across the head rather than lying in three blocks)."""
    parameters: dict[str, Any] = {
        "rope_type": "default",
        "mrope_section": list(sections),
        "rope_theta": theta,
    }
    if family.name == "qwen3-vl":
        parameters["mrope_interleaved"] = True
    return parameters


def _vision_config(spec: TinyModelSpec) -> dict[str, Any]:
    """The tiny tower: Qwen2.5-VL's last block attends over the whole image (the others in
    windows); Qwen3-VL's first blocks feed DeepStack, as many as there are text layers (at most
    three, as released)."""
    blocks = [spec.vision_depth - 1]
    if spec.family == "qwen3-vl":
        blocks = list(range(min(DEEPSTACK_LAYERS, spec.vision_depth, spec.num_layers)))
    return vision_config(
        spec.model_family,
        depth=spec.vision_depth,
        hidden=spec.vision_hidden_size,
        intermediate=spec.vision_intermediate_size,
        heads=spec.vision_heads,
        out_hidden=spec.hidden_size,
        blocks=blocks,
    )


def vision_config(
    family: Family,
    depth: int,
    hidden: int,
    intermediate: int,
    heads: int,
    out_hidden: int,
    blocks: list[int],
    position_embeddings: int | None = None,
) -> dict[str, Any]:
    """The family's vision config at these widths. `blocks` are its special blocks: Qwen2.5-VL's
    full-attention ones (the rest attend in 112-pixel windows), Qwen3-VL's DeepStack sources;
    Qwen2-VL attends over the whole image in every block and names its widths `embed_dim`,
    `mlp_ratio` and `hidden_size` (the merger's output). `position_embeddings` sizes Qwen3-VL's
    learnt position grid."""
    geometry = {
        "depth": depth,
        "num_heads": heads,
        "patch_size": family.patch_size,
        "spatial_merge_size": family.merge_size,
        "temporal_patch_size": family.temporal_patch_size,
    }
    if family.name == "qwen2-vl":
        return {
            **geometry,
            "embed_dim": hidden,
            "mlp_ratio": intermediate // hidden,
            "hidden_size": out_hidden,
        }
    widths = {
        "hidden_size": hidden,
        "intermediate_size": intermediate,
        "out_hidden_size": out_hidden,
    }
    if family.name == "qwen3-vl":
        return {
            **geometry,
            **widths,
            "num_position_embeddings": position_embeddings or VISION_POSITION_EMBEDDINGS,
            "deepstack_visual_indexes": blocks,
        }
    return {
        **geometry,
        **widths,
        "fullatt_block_indexes": blocks,
        "window_size": WINDOW_SIZE,
        "tokens_per_second": TOKENS_PER_SECOND,
    }


def qwen_vl_config(
    family: Family,
    text_config: dict[str, Any],
    vision_config: dict[str, Any],
    tokenizer: Any,
    **fields: Any,
) -> Any:
    """A config of `family` with these text and vision fields (and any other `fields`), every
    special token id (begin, end, padding, media placeholders) read from `tokenizer`."""
    token_id = tokenizer.convert_tokens_to_ids
    text_config = {
        **text_config,
        "bos_token_id": token_id(ENDOFTEXT_TOKEN),
        "eos_token_id": token_id(EOS_TOKEN),
        "pad_token_id": tokenizer.pad_token_id,
    }
    return family.config_type_class()(
        text_config=text_config,
        vision_config=vision_config,
        image_token_id=token_id(IMAGE_TOKEN),
        video_token_id=token_id(VIDEO_TOKEN),
        vision_start_token_id=token_id(VISION_START_TOKEN),
        vision_end_token_id=token_id(VISION_END_TOKEN),
        **fields,
    )


@contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """Seed weight initialisation without disturbing the caller's global RNG state."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield
