"""Loading a vision-language model and its processor for training and inference.

Models and processors load through transformers' Auto classes; a model outside the supported
families (`mmcritic.models.families`) is refused before its weights are read.
"""

from __future__ import annotations

import difflib
import importlib.util
import logging
import os
from pathlib import Path
from typing import Any, Literal

import torch

from mmcritic.data.media import MediaBudget
from mmcritic.hub import hub_reachable
from mmcritic.models.checkpoints import (
    ADAPTER_CONFIG,
    adapter_base,
    check_loading_info,
    load_adapter_strictly,
)
from mmcritic.models.devices import DEVICE_CHOICES, DTYPE_CHOICES
from mmcritic.models.families import MEDIA_TOKENS, family_of, family_of_model

logger = logging.getLogger(__name__)

VISION_TOWER_PREFIXES = ("visual.", "model.visual.")

Device = Literal["cpu", "cuda"]


def resolve_device(preference: str) -> Device:
    """`auto` picks the GPU when there is one; asking for cuda without one is an error."""
    if preference not in DEVICE_CHOICES:
        raise ValueError(f"device {preference!r} is not one of {DEVICE_CHOICES}")
    if preference == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if preference == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: cuda was asked for, but no GPU is visible; use device: cpu")
    return preference  # type: ignore[return-value]


def resolve_dtype(preference: str, device: Device) -> torch.dtype:
    """bfloat16 on GPUs that support it, float32 on CPU, unless the recipe says otherwise."""
    if preference not in DTYPE_CHOICES:
        raise ValueError(f"dtype {preference!r} is not one of {DTYPE_CHOICES}")
    if preference == "auto":
        if device == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    return getattr(torch, preference)


def resolve_attention(preference: str | None, device: Device) -> str:
    """`auto`: flash-attention 2 on a GPU where the flash-attn package is installed, sdpa
    otherwise (the shared-prefix passes switch the text decoder to their own attention only while
    they run, `mmcritic.train.prefix_attention`). Any other name is transformers' own and is used
    as given."""
    if preference not in (None, "auto"):
        return preference
    if device == "cuda" and importlib.util.find_spec("flash_attn"):
        return "flash_attention_2"
    return "sdpa"


def check_model(name_or_path: str) -> None:
    """A `FileNotFoundError` in one line when `name_or_path` is neither a checkpoint folder here
    nor a hub id that resolves. A name that looks like a path (`./x`, `/x`, `~/x`, `a/b/c`, or
    `runs/critic` where `runs/` is a folder here) is never looked up on the hub: it is named as
    missing, with the model folders near it. A hub id is looked up in the local cache alone when
    the hub cannot be reached (`mmcritic.hub`), so offline it fails at once. A model of no
    supported family is an `UnsupportedModelError` naming the families."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        if not any((path / name).is_file() for name in ("config.json", ADAPTER_CONFIG)):
            raise FileNotFoundError(
                f"{path} is not a checkpoint folder: it has no config.json ({ADAPTER_CONFIG} for "
                "a LoRA adapter)"
            )
        if adapter_base(path) is None:
            family_of_model(str(path))
        return
    if looks_like_a_path(name_or_path):
        raise FileNotFoundError(f"no such folder: {path}{nearest_model_folders(path)}")
    from transformers import AutoConfig

    online = hub_reachable()
    try:
        config = AutoConfig.from_pretrained(name_or_path)
    except (OSError, ValueError) as err:
        where = "a hub id that resolves" if online else "in the local hub cache (hub unreachable)"
        raise FileNotFoundError(
            f"model {name_or_path!r}: no such folder here, and not {where}"
        ) from err
    family_of(config, name_or_path)


def looks_like_a_path(name: str) -> bool:
    """Whether a model name is a path rather than a hub id (`name` or `org/name`)."""
    if name.startswith(("/", "./", "../", "~", ".\\")) or "\\" in name or name.endswith("/"):
        return True
    parts = name.split("/")
    return len(parts) > 2 or (len(parts) == 2 and Path(parts[0]).expanduser().is_dir())


def nearest_model_folders(missing: Path, limit: int = 3) -> str:
    """ "; did you mean ...?" naming the model folders (holding config.json or an adapter) under
    the missing path's nearest existing parent that read most like it; "" when there are none.
    At most `_SCANNED` folders are looked at, so a huge tree costs little, and hidden ones
    (`.venv`, `.git`, caches) not at all: in a project folder they would use up the budget
    before `runs/` is reached."""
    parent = missing.parent
    while not parent.is_dir() and parent != parent.parent:
        parent = parent.parent
    found: list[str] = []
    for count, (folder, subfolders, files) in enumerate(os.walk(parent)):
        if count >= _SCANNED:
            break
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
        if "config.json" in files or ADAPTER_CONFIG in files:
            found.append(folder)
    if not found:
        return ""
    close = difflib.get_close_matches(str(missing), found, n=limit, cutoff=0.0)
    return "; did you mean " + " or ".join(close) + "?"


# folders looked at for `nearest_model_folders`
_SCANNED = 2_000


def load_processor(name_or_path: str, budget: MediaBudget | None = None):
    """The model's processor with its image budget set to the run's, so images resized by
    qwen-vl-utils are not resized a second time (videos are passed with `do_resize=False`).

    It pads on the left, as generation and TRL's GRPO batches do: a processor that pads on the
    right (Qwen's as saved) returns per-token fields (`mm_token_type_ids`) that no longer line up
    with left-padded ids, and the model then places image tokens wrongly in its rotary positions."""
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(name_or_path, padding_side="left")
    image_processor = getattr(processor, "image_processor", None)
    if image_processor is not None and budget is not None:
        image_processor.size = {
            "shortest_edge": budget.image.min_pixels,
            "longest_edge": budget.image.max_pixels,
        }
    if processor.tokenizer.pad_token is None:
        processor.tokenizer.pad_token = processor.tokenizer.eos_token
    return processor


def load_model(name_or_path: str, dtype: torch.dtype, attn_implementation: str | None = None):
    """The model in `name_or_path` with every weight loaded: a tensor missing from the folder,
    or one the model has no place for, is an error (`CheckpointMismatchError`) naming the keys.

    A LoRA folder (`adapter_config.json`, as saved by a LoRA run's checkpoints and `final/`)
    loads its base model, then the adapter, both strictly, and merges the adapter in. A model of
    no supported family is refused from its config, before any weight is read."""
    from transformers import AutoModelForImageTextToText

    kwargs: dict[str, Any] = {"dtype": dtype}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    family_of_model(name_or_path)
    base = adapter_base(name_or_path)
    if base is not None:
        return _with_adapter(load_model(base, dtype, attn_implementation), name_or_path)
    # mismatched shapes are reported in the loading info, so the error below can name them
    model, info = AutoModelForImageTextToText.from_pretrained(
        name_or_path, output_loading_info=True, ignore_mismatched_sizes=True, **kwargs
    )
    check_loading_info(info, name_or_path)
    return model


def _with_adapter(model: Any, folder: str) -> Any:
    from peft import PeftConfig, get_peft_model

    model = get_peft_model(model, PeftConfig.from_pretrained(folder))
    load_adapter_strictly(model, folder, "default")
    return model.merge_and_unload()


def freeze_vision_tower(model: torch.nn.Module) -> int:
    """Stops gradients into the vision encoder; returns how many parameters were frozen."""
    frozen = 0
    for name, parameter in model.named_parameters():
        if name.startswith(VISION_TOWER_PREFIXES):
            parameter.requires_grad_(False)
            frozen += parameter.numel()
    if frozen == 0:
        raise ValueError(
            f"found no vision-tower parameters (names starting with {VISION_TOWER_PREFIXES}); "
            "set model.freeze_vision_tower: false for this model"
        )
    logger.info("froze %s vision-tower parameters", f"{frozen:,}")
    return frozen


def local_tokenizer(name_or_path: str) -> Any | None:
    """The tokenizer of a model folder or cached hub id, or None when it cannot be loaded here:
    a dry run, or a served model, may be described before its files are on this machine. Each
    caller says what it goes without."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(name_or_path))
    except (OSError, ValueError):
        return None


def vision_token_ids(tokenizer: Any) -> list[int]:
    """Ids of the vision placeholder tokens this tokenizer knows."""
    ids = []
    for token in MEDIA_TOKENS:
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is not None and token_id != tokenizer.unk_token_id:
            ids.append(token_id)
    return ids
