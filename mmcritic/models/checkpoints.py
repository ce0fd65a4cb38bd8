"""Loading saved weights strictly: every tensor of the model filled, every stored tensor used.

transformers saves Qwen2.5-VL under its original hub names (`model.layers.*`, `visual.*`) while
the loaded model names them `model.language_model.*` and `model.visual.*`. `from_pretrained`
renames on the way in; a plain `load_state_dict` does not, and only warns about the keys it
could not place. A run that resumes that way keeps the starting weights and looks healthy.
Here a partial load is an error that names the keys, never a log line.

The renaming is transformers' own load-time mapping (`get_model_conversion_mapping`,
`rename_source_key`), pinned with transformers 5.23 and covered by tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch

SAFE_WEIGHTS = "model.safetensors"
SAFE_WEIGHTS_INDEX = "model.safetensors.index.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
ADAPTER_CONFIG = "adapter_config.json"
NAMES_SHOWN = 12


def adapter_base(folder: str | Path) -> str | None:
    """The base model a LoRA adapter folder was trained on, or None when `folder` holds no
    adapter (`adapter_config.json`)."""
    config = Path(folder) / ADAPTER_CONFIG
    if not config.is_file():
        return None
    return json.loads(config.read_text())["base_model_name_or_path"]


class CheckpointMismatchError(ValueError):
    """Saved weights that do not fit the model: keys missing, left over, or of another shape.
    A `ValueError`, so the command line reports it in one line like any other bad input."""


def describe_mismatch(source: str | Path, **kinds: Iterable[str]) -> str | None:
    """One message naming every problem key (a few of each kind, with the count), or None."""
    parts = []
    for kind, names in kinds.items():
        names = sorted(names)
        if names:
            shown = ", ".join(names[:NAMES_SHOWN])
            more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
            parts.append(f"{len(names)} {kind.replace('_', ' ')}: {shown}{more}")
    if not parts:
        return None
    return (
        f"the weights in {source} do not match the model ("
        + "; ".join(parts)
        + "). Load weights saved from this model's architecture and settings (the same base "
        "model, LoRA or full as it was trained); a run that cannot resume from them starts "
        "fresh with resume: never."
    )


def check_loading_info(info: dict[str, Any], source: str | Path) -> None:
    """Raises when `from_pretrained(..., output_loading_info=True)` placed fewer or other
    tensors than the model has."""
    message = describe_mismatch(
        source,
        missing_keys=info.get("missing_keys", ()),
        unexpected_keys=info.get("unexpected_keys", ()),
        mismatched_keys=[_shapes(entry) for entry in info.get("mismatched_keys", ())],
    )
    if message:
        raise CheckpointMismatchError(message)
    if info.get("error_msgs"):
        raise CheckpointMismatchError(f"loading {source} failed: {info['error_msgs']}")


def _shapes(entry: Any) -> str:
    """transformers reports a shape mismatch as (name, stored shape, model shape)."""
    if isinstance(entry, tuple | list) and len(entry) == 3:
        name, stored, wanted = entry
        return f"{name} (stored {tuple(stored)}, model {tuple(wanted)})"
    return str(entry)


def read_state_dict(folder: str | Path) -> dict[str, torch.Tensor]:
    """The full-model tensors a checkpoint folder stores, one file or sharded."""
    from safetensors.torch import load_file

    folder = Path(folder)
    if (folder / SAFE_WEIGHTS).is_file():
        return load_file(str(folder / SAFE_WEIGHTS), device="cpu")
    index = folder / SAFE_WEIGHTS_INDEX
    if not index.is_file():
        raise FileNotFoundError(f"{folder} holds no {SAFE_WEIGHTS} or {SAFE_WEIGHTS_INDEX}")
    shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
    state: dict[str, torch.Tensor] = {}
    for shard in shards:
        state.update(load_file(str(folder / shard), device="cpu"))
    return state


def to_model_names(model: torch.nn.Module, state: dict[str, torch.Tensor]) -> dict[str, Any]:
    """The stored tensors under the names the loaded model uses, renamed exactly as
    `from_pretrained` renames them. A name that needs more than a renaming (a fused or split
    tensor) is an error: such checkpoints must go through `from_pretrained`."""
    from transformers.conversion_mapping import get_model_conversion_mapping
    from transformers.core_model_loading import WeightConverter, WeightRenaming, rename_source_key

    conversions = getattr(model, "_weight_conversions", None)
    if conversions is None:
        conversions = get_model_conversion_mapping(model)
    renamings = [c for c in conversions if isinstance(c, WeightRenaming)]
    converters = [c for c in conversions if isinstance(c, WeightConverter)]
    expected = model.state_dict()
    renamed: dict[str, Any] = {}
    for name, tensor in state.items():
        target, converter = rename_source_key(
            name, renamings, converters, model.base_model_prefix, expected
        )
        if converter is not None:
            raise CheckpointMismatchError(
                f"{name} needs the weight conversion {converter!r}, which a strict resume does "
                "not apply; load this checkpoint with from_pretrained"
            )
        if target in renamed:
            raise CheckpointMismatchError(f"two stored tensors map onto {target}")
        renamed[target] = tensor
    return renamed


def load_weights_strictly(model: torch.nn.Module, folder: str | Path) -> int:
    """Fills every parameter and persistent buffer of `model` from `folder`'s weights and
    returns how many tensors were loaded; any key left unfilled or unused is an error."""
    state = to_model_names(model, read_state_dict(folder))
    expected = model.state_dict()
    tied = _tied_names(model)
    message = describe_mismatch(
        folder,
        missing_keys=[name for name in expected if name not in state and name not in tied],
        unexpected_keys=[name for name in state if name not in expected],
        mismatched_keys=[
            f"{name} (stored {tuple(state[name].shape)}, model {tuple(expected[name].shape)})"
            for name in state
            if name in expected and state[name].shape != expected[name].shape
        ],
    )
    if message:
        raise CheckpointMismatchError(message)
    model.load_state_dict(state, strict=False)
    if tied:
        model.tie_weights()
    return len(state)


def _tied_names(model: torch.nn.Module) -> set[str]:
    """Parameters saved once and shared (e.g. an output layer tied to the embeddings)."""
    tied = getattr(model, "all_tied_weights_keys", None) or {}
    return set(tied)


def load_adapter_strictly(model: Any, folder: str | Path, adapter_name: str) -> int:
    """Loads a PEFT adapter into `model` (a `PeftModel`) for further training and returns how
    many adapter tensors it filled; an adapter tensor left unfilled or unused is an error."""
    result = model.load_adapter(str(folder), adapter_name, is_trainable=True)
    adapter_names = [name for name, _ in model.named_parameters() if f".{adapter_name}." in name]
    missing = [name for name in result.missing_keys if f".{adapter_name}." in name]
    message = describe_mismatch(
        folder, missing_keys=missing, unexpected_keys=result.unexpected_keys
    )
    if message:
        raise CheckpointMismatchError(message)
    return len(adapter_names) - len(missing)
