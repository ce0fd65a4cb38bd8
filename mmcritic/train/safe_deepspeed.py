"""DeepSpeed checkpoints read without running code from them.

DeepSpeed 0.19's `TorchCheckpointEngine.load`, which a ZeRO resume calls for every model and
optimizer shard (`global_step*/*_model_states.pt`, `*_optim_states.pt`), unpickles with
`torch.load(..., weights_only=False)`: a shard from an untrusted source runs whatever it holds
(a planted `os.system` call runs on resume). Here the engine loads with `weights_only=True`,
allowing only the few DeepSpeed classes its own states hold (found by loading ZeRO-2 and ZeRO-3
checkpoints of this version). A shard holding anything else is refused with a message naming it.
`install` replaces the engine's method once; `tests/test_safe_deepspeed.py` plants payloads in
a two-process ZeRO checkpoint and checks that none runs and the resume is refused.
"""

from __future__ import annotations

import pickle
from typing import Any

import torch

from mmcritic.models.checkpoints import CheckpointMismatchError

# the DeepSpeed releases this patch was checked against (`pyproject.toml` pins the range)
CHECKED_VERSIONS = ("0.19.",)


def deepspeed_state_classes() -> list[Any]:
    """The classes DeepSpeed's optimizer states pickle: the ZeRO stage, the loss scalers and
    (ZeRO-2) the address of each parameter's fragment in a rank's flat partition."""
    from deepspeed.runtime.fp16.loss_scaler import DynamicLossScaler, LossScaler
    from deepspeed.runtime.zero.config import ZeroStageEnum
    from deepspeed.utils.tensor_fragment import fragment_address

    return [ZeroStageEnum, LossScaler, DynamicLossScaler, fragment_address]


def safe_load(path: str, map_location: Any = None) -> Any:
    """A DeepSpeed shard, unpickled with only tensors, plain containers and DeepSpeed's state
    classes allowed."""
    try:
        with torch.serialization.safe_globals(deepspeed_state_classes()):
            return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as err:
        reason = _unsupported(str(err))
        raise CheckpointMismatchError(
            f"{path} holds objects outside DeepSpeed's checkpoint state ({reason}); it was not "
            "loaded, since unpickling it could run code: resume only from checkpoints you wrote"
        ) from err


def _unsupported(message: str) -> str:
    """The line of torch's refusal that names what the file holds ("Unsupported global: ...")."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    named = [line for line in lines if "Unsupported" in line or "GLOBAL" in line]
    return (named or lines or ["unreadable"])[0][:300]


def install() -> None:
    """Makes DeepSpeed's torch checkpoint engine load with `safe_load` (idempotent)."""
    import deepspeed
    from deepspeed.runtime.checkpoint_engine.torch_checkpoint_engine import TorchCheckpointEngine

    if not deepspeed.__version__.startswith(CHECKED_VERSIONS):
        raise RuntimeError(
            f"deepspeed {deepspeed.__version__}: its checkpoint loading is patched for "
            f"{CHECKED_VERSIONS} only; install deepspeed>=0.19.8,<0.20"
        )
    if getattr(TorchCheckpointEngine.load, "_mmcritic_safe", False):
        return

    def load(self: Any, path: str, map_location: Any = None) -> Any:
        return safe_load(path, map_location)

    load._mmcritic_safe = True  # type: ignore[attr-defined]
    TorchCheckpointEngine.load = load
