"""No code runs from a DeepSpeed checkpoint: shards holding anything beyond tensors, containers
and DeepSpeed's own state classes are refused, and a ZeRO resume from a checkpoint with a
payload planted in every shard stops without running one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import torch

from mmcritic.models.checkpoints import CheckpointMismatchError
from mmcritic.train.safe_deepspeed import deepspeed_state_classes, install, safe_load
from mmcritic_dev.quickstart import ONE_ORDER
from tests.test_train import deepspeed_command


class Payload:
    """Runs a shell command when unpickled, as a planted shard would."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_shard_with_a_payload_is_refused_and_nothing_runs(tmp_path) -> None:
    marker = tmp_path / "ran"
    torch.save({"optimizer_state_dict": {"state": {}}, "x": Payload(marker)}, tmp_path / "s.pt")
    with pytest.raises(CheckpointMismatchError, match="could run code") as refused:
        safe_load(str(tmp_path / "s.pt"))
    assert not marker.exists()
    assert "GLOBAL posix.system" in str(refused.value)  # it names what the file holds


def test_deepspeed_state_classes_still_load(tmp_path) -> None:
    """The objects a ZeRO-2 and ZeRO-3 optimizer shard pickles, as DeepSpeed 0.19 lays them out
    (`zero_stage`, `loss_scaler`, ZeRO-2's `param_slice_mappings` of fragment addresses)."""
    from deepspeed.runtime.fp16.loss_scaler import LossScaler
    from deepspeed.runtime.zero.config import ZeroStageEnum
    from deepspeed.utils.tensor_fragment import fragment_address

    mappings = [{"lm_head.weight": fragment_address(numel=12, start=4)}]
    state = {"zero_stage": ZeroStageEnum.gradients, "loss_scaler": LossScaler(1.0)}
    torch.save(state | {"param_slice_mappings": mappings, "t": torch.ones(3)}, tmp_path / "s.pt")
    loaded = safe_load(str(tmp_path / "s.pt"))
    assert loaded["zero_stage"] is ZeroStageEnum.gradients
    assert loaded["loss_scaler"].cur_scale == 1.0 and loaded["t"].sum() == 3
    assert loaded["param_slice_mappings"] == mappings
    assert fragment_address in deepspeed_state_classes()


def test_the_engine_deepspeed_resumes_with_is_the_safe_one(tmp_path) -> None:
    from deepspeed.runtime.checkpoint_engine.torch_checkpoint_engine import (
        TorchCheckpointEngine,
    )

    install()
    install()
    marker = tmp_path / "ran"
    torch.save({"x": Payload(marker)}, tmp_path / "s.pt")
    with pytest.raises(CheckpointMismatchError):
        TorchCheckpointEngine().load(str(tmp_path / "s.pt"))
    assert not marker.exists()


@pytest.mark.slow
@pytest.mark.parametrize("config", ["zero2", "zero3"])
def test_a_zero_resume_from_planted_shards_runs_no_payload(
    tiny_model_dir, tmp_path, config
) -> None:
    from mmcritic.data.synth import synthesize

    synthesize("color", 16, tmp_path / "data", seed=0, overwrite=True)
    common = (
        f"model.name_or_path={tiny_model_dir}",
        f"data.train={tmp_path / 'data'}",
        "save_steps=2",
        "grpo.max_completion_length=8",
        *ONE_ORDER,
        "optim.per_device_train_batch_size=2",
    )
    root = Path(__file__).parents[1]
    first = deepspeed_command(config, f"output_dir={tmp_path / 'run'}", "max_steps=2", *common)
    done = subprocess.run(first, capture_output=True, text=True, timeout=900, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    shards = sorted((tmp_path / "run" / "checkpoint-2").glob("global_step*/*.pt"))
    assert len(shards) == {"zero2": 3, "zero3": 4}[config]
    for shard in shards:  # what DeepSpeed wrote itself loads
        safe_load(str(shard))
    markers = [tmp_path / f"ran_{shard.stem}" for shard in shards]
    for shard, marker in zip(shards, markers, strict=True):
        state = torch.load(shard, weights_only=False)
        torch.save(state | {"planted": Payload(marker)}, shard)

    resume = deepspeed_command(config, f"output_dir={tmp_path / 'run'}", "max_steps=4", *common)
    done = subprocess.run(resume, capture_output=True, text=True, timeout=900, cwd=root)

    assert done.returncode != 0
    assert "could run code" in done.stderr
    assert not any(marker.exists() for marker in markers)
