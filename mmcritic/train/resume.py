"""Exact resume: a run continued from `checkpoint-N` ends as if it had never stopped.

transformers' Trainer restores the optimizer, scheduler, step, RNG and the position in the
epoch. What it leaves to chance, and this module makes strict or complete:
- the weights: its plain `load_state_dict` does not apply the checkpoint's key renaming and only
  warns about what it could not place (`mmcritic.models.checkpoints` loads strictly instead);
- the RNG: a checkpoint without its RNG file is resumed with a note in the log; here it is an
  error, since sampling would then differ from the uninterrupted run;
- trainer state of our own (e.g. how far the dynamic-sampling refills have read), written next
  to the checkpoint as `mmcritic_state.json` before the Trainer writes `trainer_state.json`,
  which marks a checkpoint complete, and tensors of our own (e.g. the POISE probe, its
  optimiser and buffer) in `mmcritic_tensors.pt` beside it;
- one log line that says what was restored;
- TensorBoard events in one folder per run, with what the stopped run logged after its
  checkpoint purged on resume.

The data order is made resumable by the samplers (`mmcritic.train.balanced_sampling`), whose
shuffle for an epoch depends only on the seed and the epoch number.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import torch
from transformers.integrations import TensorBoardCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from mmcritic.models.checkpoints import (
    CheckpointMismatchError,
    load_adapter_strictly,
    load_weights_strictly,
)
from mmcritic.train.checkpoint_files import make_durable

logger = logging.getLogger(__name__)

EXTRA_STATE_FILE = "mmcritic_state.json"
EXTRA_TENSORS_FILE = "mmcritic_tensors.pt"


class ExactResumeMixin:
    """Mixed into a `transformers.Trainer` subclass (before it in the bases). Subclasses with
    state of their own override `extra_state` and `restore_extra_state`."""

    _resumed_tensors: int | None = None

    def extra_state(self) -> dict[str, Any]:
        """State beyond the Trainer's that a resumed run needs; saved with every checkpoint."""
        return {}

    def restore_extra_state(self, state: dict[str, Any]) -> None:
        """Takes back what `extra_state` saved."""

    def extra_tensors(self) -> dict[str, Any]:
        """Tensors beyond the model's and optimizer's that a resumed run needs (saved with
        `torch.save`, read back with `weights_only`); empty: no file."""
        return {}

    def restore_extra_tensors(self, tensors: dict[str, Any]) -> None:
        """Takes back what `extra_tensors` saved."""

    # -- weights ----------------------------------------------------------------------------
    def _load_from_checkpoint(self, resume_from_checkpoint: str, model: Any = None) -> None:
        if self.is_deepspeed_enabled or self.is_fsdp_enabled:
            super()._load_from_checkpoint(resume_from_checkpoint, model)
            return
        model = model if model is not None else self.model
        if hasattr(model, "peft_config"):
            adapter = model.active_adapters[0]
            self._resumed_tensors = load_adapter_strictly(model, resume_from_checkpoint, adapter)
        else:
            self._resumed_tensors = load_weights_strictly(model, resume_from_checkpoint)

    # -- state of our own -------------------------------------------------------------------
    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        if self.args.should_save:
            folder = Path(self._get_output_dir(trial=trial))
            folder = folder / f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / EXTRA_STATE_FILE).write_text(json.dumps(self.extra_state()))
            tensors = self.extra_tensors()
            if tensors:
                torch.save(tensors, folder / EXTRA_TENSORS_FILE)
        super()._save_checkpoint(model, trial)
        if self.args.should_save:
            make_durable(folder)

    def _save_rng_state(self, output_dir: str) -> None:
        """The RNG is the last file before `trainer_state.json` marks the checkpoint complete:
        everything written so far is flushed to disk first."""
        super()._save_rng_state(output_dir)
        if self.args.should_save:
            make_durable(Path(output_dir))

    def _load_optimizer_and_scheduler(self, checkpoint: str | None) -> None:
        super()._load_optimizer_and_scheduler(checkpoint)
        if checkpoint is None:
            return
        path = Path(checkpoint) / EXTRA_STATE_FILE
        if not path.is_file():
            raise CheckpointMismatchError(
                f"{checkpoint} has no {EXTRA_STATE_FILE}: it was not written by mmcritic's "
                "trainer, so the run cannot continue exactly; start fresh with resume: never"
            )
        self.restore_extra_state(json.loads(path.read_text()))
        if self.extra_tensors():
            self.restore_extra_tensors(_read_tensors(Path(checkpoint)))

    # -- the end ----------------------------------------------------------------------------
    def _run_epoch(self, **epoch: Any) -> None:
        """transformers checks `max_steps` only after an optimizer step: a run resumed from a
        checkpoint at (or past) its `max_steps` would train one step more. It trains none."""
        if self.state.global_step >= self.state.max_steps:
            self.control.should_training_stop = True
            return
        super()._run_epoch(**epoch)

    # -- RNG, and the report ----------------------------------------------------------------
    def _load_rng_state(self, checkpoint: str | None) -> None:
        if checkpoint is None:
            return
        name = "rng_state.pth"
        if self.args.world_size > 1:
            name = f"rng_state_{self.args.process_index}.pth"
        if not os.path.isfile(os.path.join(checkpoint, name)):
            raise CheckpointMismatchError(
                f"{checkpoint} has no {name} for this process: the checkpoint was saved by a "
                f"run with another number of processes (now {self.args.world_size}); resume "
                "with the same launch command"
            )
        super()._load_rng_state(checkpoint)
        logger.info(self.resume_report(checkpoint))

    def resume_report(self, checkpoint: str) -> str:
        """The one line a resumed run logs: what was restored, and where the data stands."""
        step = self.state.global_step
        batches = len(self.callback_handler.train_dataloader)
        per_epoch = max(batches // self.args.gradient_accumulation_steps, 1)
        if self._resumed_tensors is not None:
            tensors = f"{self._resumed_tensors} tensors loaded strictly"
        else:
            tensors = "all tensors loaded strictly by the distributed backend"
        return (
            f"resumed from {checkpoint}: step {step} (epoch {step // per_epoch + 1}, "
            f"{step % per_epoch} of its {per_epoch} steps done), optimizer, scheduler and RNG "
            f"restored, {tensors}"
        )


def _read_tensors(checkpoint: Path) -> dict[str, Any]:
    path = checkpoint / EXTRA_TENSORS_FILE
    if not path.is_file():
        raise CheckpointMismatchError(
            f"{checkpoint} has no {EXTRA_TENSORS_FILE}, which this run keeps its own trained "
            "state in (the POISE probe); it was saved by a run with other settings: resume with "
            "the recipe it was trained with, or start fresh with resume: never"
        )
    return torch.load(path, map_location="cpu", weights_only=True)


def trim_rollout_log(path: Path, step: int) -> int:
    """Keeps the rollout-log lines of steps before `step`, so a resumed run logs each step once.

    A line cut short by a crash mid-write is dropped with the steps to redo. Returns how many
    lines were dropped."""
    if not path.is_file():
        return 0
    kept, dropped = [], 0
    for line in path.read_bytes().splitlines(keepends=True):
        entry = _parsed(line)
        if entry is not None and line.endswith(b"\n") and entry["step"] < step:
            kept.append(line)
        else:
            dropped += 1
    path.write_bytes(b"".join(kept))
    return dropped


def _parsed(line: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if isinstance(entry, dict) and isinstance(entry.get("step"), int):
        return entry
    return None


class ResumableTensorBoardCallback(TensorBoardCallback):
    """transformers' TensorBoard logger with one event folder per run (`OUTPUT/tensorboard`)
    instead of one per launch, and, on resume, the events the stopped run wrote after its
    checkpoint purged, so TensorBoard shows every step once, as if the run never stopped."""

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero and self.tb_writer is None:
            self.logging_dir = self.logging_dir or os.path.join(args.output_dir, "tensorboard")
            purge_step = state.global_step + 1 if state.global_step else None
            self.tb_writer = self._SummaryWriter(log_dir=self.logging_dir, purge_step=purge_step)
        super().on_train_begin(args, state, control, **kwargs)


def use_resumable_tensorboard(trainer: Any) -> None:
    """Swaps the trainer's TensorBoard logger, if it has one, for the resumable one."""
    if any(isinstance(cb, TensorBoardCallback) for cb in trainer.callback_handler.callbacks):
        trainer.remove_callback(TensorBoardCallback)
        trainer.add_callback(ResumableTensorBoardCallback())
