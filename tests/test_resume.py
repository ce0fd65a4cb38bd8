"""Exact resume: a run stopped right after checkpoint k and resumed ends like the run that never
stopped, with the same weights, the same per-step logs and the same prompts at every step.

Every case trains where the weights move at every step (SFT; GRPO from a format warm start,
whose rollouts disagree so advantages are non-zero) and asserts that they moved, so a resume
that loads nothing cannot pass. With 16 records and 4 prompts a step an epoch is 4 steps:
checkpoint 2 is mid-epoch, 4 an epoch boundary, 6 inside epoch 2.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from transformers import TrainerCallback

from mmcritic.models.checkpoints import CheckpointMismatchError, read_state_dict
from mmcritic.train.resume import EXTRA_STATE_FILE, EXTRA_TENSORS_FILE, trim_rollout_log
from mmcritic.train.run import train
from tests.test_train import format_warm_start, tiny_recipe

STEPS = 10
CHECKPOINTS = (2, 4, 6)  # mid-epoch, epoch boundary, inside epoch 2
TOLERANCE = 1e-6


class SimulatedCrash(RuntimeError):
    pass


class CrashAfterSave(TrainerCallback):
    """Stops the run the moment checkpoint `step` is on disk, as a preemption would."""

    def __init__(self, step: int):
        self.step = step

    def on_save(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise SimulatedCrash(f"stopped after checkpoint-{self.step}")


@pytest.fixture(scope="module")
def warm_model(tiny_model_dir, tmp_path_factory) -> Path:
    from mmcritic.data.synth import synthesize

    data = tmp_path_factory.mktemp("warm_data")
    synthesize("color", 16, data, seed=0, overwrite=True)
    return format_warm_start(tiny_model_dir, data, tmp_path_factory.mktemp("warm"))


@pytest.fixture(scope="module")
def resume_data(tmp_path_factory) -> Path:
    from mmcritic.data.synth import synthesize

    folder = tmp_path_factory.mktemp("resume_data")
    synthesize("color", 16, folder, seed=3, overwrite=True)
    return folder


GRPO = (
    "grpo.num_generations=4",
    "grpo.max_completion_length=12",
    "optim.per_device_train_batch_size=16",
    "optim.learning_rate=2e-4",
)
SFT = ("stage=sft", "optim.per_device_train_batch_size=4", "optim.learning_rate=5e-3")


def run(model: Path, data: Path, out: Path, *overrides: str, crash_at: int | None = None):
    recipe = tiny_recipe(
        model,
        data,
        out,
        f"max_steps={STEPS}",
        "save_steps=2",
        "save_total_limit=null",  # the tests copy earlier checkpoints of a finished run
        "logging_steps=1",
        "report_to=[]",
        *overrides,
    )
    callbacks = [CrashAfterSave(crash_at)] if crash_at else None
    return train(recipe, callbacks=callbacks)


def final_weights(run_dir: Path) -> dict[str, torch.Tensor]:
    final = run_dir / "final"
    if (final / "adapter_model.safetensors").is_file():
        return load_file(str(final / "adapter_model.safetensors"))
    return read_state_dict(final)


def step_logs(run_dir: Path) -> dict[int, dict[str, float]]:
    """Per-step logged numbers, without wall-clock figures."""
    history = json.loads((run_dir / "log_history.json").read_text())
    return {
        entry["step"]: {
            key: value
            for key, value in entry.items()
            if isinstance(value, float | int) and "time" not in key and "second" not in key
        }
        for entry in history
        if "loss" in entry
    }


def assert_same_run(straight: Path, resumed: Path) -> None:
    a, b = final_weights(straight), final_weights(resumed)
    assert a.keys() == b.keys()
    worst = max((a[name] - b[name]).abs().max().item() for name in a)
    assert worst <= TOLERANCE, f"final weights differ by {worst}"
    logs_a, logs_b = step_logs(straight), step_logs(resumed)
    assert sorted(logs_a) == sorted(logs_b) == list(range(1, STEPS + 1))
    for step in logs_a:
        assert logs_b[step] == pytest.approx(logs_a[step], rel=1e-5, abs=1e-6), step


def assert_learned_at_every_step(run_dir: Path) -> None:
    """Non-zero gradients at every step: the rollouts disagreed, so the update came from the
    data and not only from the optimizer's momentum."""
    norms = {step: logs["grad_norm"] for step, logs in step_logs(run_dir).items()}
    assert all(norm > 0 for norm in norms.values()), norms


def assert_weights_moved(run_dir: Path) -> None:
    """Every checkpoint differs from the one before and the final model from the last one."""
    snapshots = [read_state_dict(run_dir / f"checkpoint-{step}") for step in range(2, STEPS, 2)]
    for before, after in itertools.pairwise(snapshots):
        assert any(not torch.equal(before[n], after[n]) for n in before)


def resume_case(model, data, tmp_path, overrides, crash_at: int) -> tuple[Path, Path]:
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    run(model, data, straight, *overrides)
    with pytest.raises(SimulatedCrash):
        run(model, data, stopped, *overrides, crash_at=crash_at)
    assert not (stopped / "final").exists()
    run(model, data, stopped, *overrides)
    return straight, stopped


@pytest.mark.parametrize("crash_at", CHECKPOINTS)
def test_resumed_grpo_run_matches_the_uninterrupted_run(
    warm_model, resume_data, tmp_path, crash_at
):
    straight, stopped = resume_case(warm_model, resume_data, tmp_path, GRPO, crash_at)
    assert_weights_moved(straight)
    assert_learned_at_every_step(straight)
    assert_same_run(straight, stopped)
    assert rollout_lines(stopped) == rollout_lines(straight)


@pytest.mark.parametrize("crash_at", CHECKPOINTS)
def test_resumed_sft_run_matches_the_uninterrupted_run(
    tiny_model_dir, resume_data, tmp_path, crash_at
):
    straight, stopped = resume_case(tiny_model_dir, resume_data, tmp_path, SFT, crash_at)
    assert_weights_moved(straight)
    assert_same_run(straight, stopped)


def test_resumed_lora_run_matches_the_uninterrupted_run(warm_model, resume_data, tmp_path):
    lora = (*GRPO, "model.lora.enabled=true", "model.lora.r=4", "optim.learning_rate=5e-3")
    straight, stopped = resume_case(warm_model, resume_data, tmp_path, lora, crash_at=6)
    first = load_file(str(straight / "checkpoint-2" / "adapter_model.safetensors"))
    last = final_weights(straight)
    assert any(not torch.equal(first[n], last[n]) for n in first), "the adapters never moved"
    assert_same_run(straight, stopped)


def test_resume_with_dynamic_sampling_refills_replays_nothing(warm_model, resume_data, tmp_path):
    refilling = (*GRPO, "grpo.dynamic_sampling=true", "grpo.dynamic_sampling_max_rounds=3")
    straight, stopped = resume_case(warm_model, resume_data, tmp_path, refilling, crash_at=6)
    state = json.loads((straight / "checkpoint-6" / EXTRA_STATE_FILE).read_text())
    assert state["refill_batches_drawn"] > 0, "no refill happened before the checkpoint"
    assert_same_run(straight, stopped)
    assert rollout_lines(stopped) == rollout_lines(straight)


def rollout_lines(run_dir: Path) -> list[dict]:
    lines = (run_dir / "rollouts.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_epoch_two_sees_a_new_prompt_order(warm_model, resume_data, tmp_path):
    run(warm_model, resume_data, tmp_path / "run", *GRPO)
    ids = {entry["step"]: entry["ids"] for entry in rollout_lines(tmp_path / "run")}
    first_epoch = [ids[step] for step in range(4)]
    second_epoch = [ids[step] for step in range(4, 8)]
    assert sorted(i for batch in first_epoch for i in batch) == sorted(
        i for batch in second_epoch for i in batch
    )
    assert first_epoch != second_epoch


def test_torn_last_rollout_line_is_dropped_and_redone(warm_model, resume_data, tmp_path):
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    run(warm_model, resume_data, straight, *GRPO)
    with pytest.raises(SimulatedCrash):
        run(warm_model, resume_data, stopped, *GRPO, crash_at=4)
    with (stopped / "rollouts.jsonl").open("ab") as log:
        log.write(b'{"step": 4, "ids": ["synth_col\xe2\x82')  # cut inside a UTF-8 character
    run(warm_model, resume_data, stopped, *GRPO)
    assert rollout_lines(stopped) == rollout_lines(straight)


def test_trim_keeps_earlier_steps_and_drops_later_and_torn_lines(tmp_path):
    log = tmp_path / "rollouts.jsonl"
    lines = [json.dumps({"step": step, "ids": [str(step)]}) + "\n" for step in range(5)]
    log.write_bytes("".join(lines).encode() + b'{"step": 5, "ids": ["\xff')
    assert trim_rollout_log(log, 3) == 3
    assert log.read_text() == "".join(lines[:3])


def test_checkpoint_with_renamed_keys_is_an_error_naming_them(
    tiny_model_dir, resume_data, tmp_path
):
    out = tmp_path / "run"
    with pytest.raises(SimulatedCrash):
        run(tiny_model_dir, resume_data, out, *SFT, crash_at=2)
    weights = out / "checkpoint-2" / "model.safetensors"
    state = load_file(str(weights))
    state["model.layers.0.extra.weight"] = state.pop("model.layers.0.mlp.up_proj.weight")
    save_file(state, str(weights), metadata={"format": "pt"})
    with pytest.raises(CheckpointMismatchError, match=r"mlp\.up_proj\.weight") as error:
        run(tiny_model_dir, resume_data, out, *SFT)
    assert "model.layers.0.extra.weight" in str(error.value)


def test_checkpoint_without_rng_state_is_refused(tiny_model_dir, resume_data, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(SimulatedCrash):
        run(tiny_model_dir, resume_data, out, *SFT, crash_at=2)
    (out / "checkpoint-2" / "rng_state.pth").unlink()
    with pytest.raises(CheckpointMismatchError, match=r"rng_state\.pth"):
        run(tiny_model_dir, resume_data, out, *SFT)


def test_resume_logs_one_line_saying_what_it_restored(
    tiny_model_dir, resume_data, tmp_path, caplog
):
    out = tmp_path / "run"
    with pytest.raises(SimulatedCrash):
        run(tiny_model_dir, resume_data, out, *SFT, crash_at=6)
    with caplog.at_level("INFO", logger="mmcritic.train.resume"):
        run(tiny_model_dir, resume_data, out, *SFT)
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("resumed")]
    tensors = len(read_state_dict(out / "checkpoint-6"))
    assert "step 6 (epoch 2, 2 of its 4 steps done)" in line
    assert "RNG restored" in line and f"{tensors} tensors loaded strictly" in line


def test_copied_checkpoint_resumes_from_an_explicit_path(tiny_model_dir, resume_data, tmp_path):
    straight = tmp_path / "straight"
    run(tiny_model_dir, resume_data, straight, *SFT)
    moved = tmp_path / "elsewhere" / "checkpoint-4"
    shutil.copytree(straight / "checkpoint-4", moved)
    out = tmp_path / "continued"
    run(tiny_model_dir, resume_data, out, *SFT, f"resume={moved}")
    assert_same_run(straight, out)


def tensorboard_steps(run_dir: Path, tag: str) -> list[tuple[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    return [(event.step, round(event.value, 5)) for event in events.Scalars(tag)]


def test_tensorboard_shows_each_step_once_after_a_resume(tiny_model_dir, resume_data, tmp_path):
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    tensorboard = ("report_to=[tensorboard]", *SFT)
    run(tiny_model_dir, resume_data, straight, *tensorboard)
    with pytest.raises(SimulatedCrash):
        run(tiny_model_dir, resume_data, stopped, *tensorboard, crash_at=6)
    # the crash hit while checkpoint 6 was being written: steps 5 and 6 are logged but lost
    shutil.rmtree(stopped / "checkpoint-6")
    run(tiny_model_dir, resume_data, stopped, *tensorboard)
    expected = tensorboard_steps(straight, "train/loss")
    assert [step for step, _ in expected] == list(range(1, STEPS + 1))
    assert tensorboard_steps(stopped, "train/loss") == expected
    # the resumed writer itself marks steps 5 on as purged, so any reader drops the stale ones
    assert purge_steps(stopped) == [5]


def purge_steps(run_dir: Path) -> list[int]:
    """Steps at which an event file of the run starts a new session (TensorBoard's purge)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.compat.proto.event_pb2 import SessionLog

    return [
        event.step
        for path in sorted((run_dir / "tensorboard").glob("events.out.tfevents*"))
        for event in EventFileLoader(str(path)).Load()
        if event.HasField("session_log") and event.session_log.status == SessionLog.START
    ]


def test_the_trainer_internals_resume_overrides_keep_their_signatures():
    # ExactResumeMixin overrides these private transformers.Trainer methods and calls them by
    # these parameters; a transformers upgrade that changes them must fail here, not mid-run
    import inspect

    from transformers import Trainer
    from trl.trainer.utils import RepeatSampler

    expected = {
        "_load_from_checkpoint": ["self", "resume_from_checkpoint", "model"],
        "_save_checkpoint": ["self", "model", "trial"],
        "_load_optimizer_and_scheduler": ["self", "checkpoint"],
        "_load_rng_state": ["self", "checkpoint"],
        "_get_output_dir": ["self", "trial"],
    }
    for name, parameters in expected.items():
        assert list(inspect.signature(getattr(Trainer, name)).parameters) == parameters, name
    sampler = RepeatSampler(data_source=[0, 1, 2, 3], mini_repeat_count=2, batch_size=2, seed=0)
    assert {"generator", "seed", "num_samples", "shuffle"} <= set(vars(sampler))


def test_resume_with_both_orders_keeps_each_pair_and_its_copy_together(
    warm_model, resume_data, tmp_path
):
    paired = (*GRPO, "grpo.both_orders=true")
    straight, stopped = resume_case(warm_model, resume_data, tmp_path, paired, crash_at=6)
    assert_weights_moved(straight)
    assert_same_run(straight, stopped)
    lines = rollout_lines(stopped)
    assert lines == rollout_lines(straight)
    assert any(key.endswith("#swapped") for line in lines for key in line["ids"])


def test_resume_with_poise_restores_the_probe_its_optimiser_and_buffer(
    warm_model, resume_data, tmp_path
):
    """The probe is trained state: a resumed run that rebuilt it afresh would predict other
    baselines, train other advantages and log other probe errors from the first step on."""
    poise = (*GRPO, "grpo.baseline=poise", "grpo.scale_rewards=batch", "grpo.num_generations=2")
    straight, stopped = resume_case(warm_model, resume_data, tmp_path, poise, crash_at=6)
    assert_same_run(straight, stopped)
    assert rollout_lines(stopped) == rollout_lines(straight)
    logged = [logs for logs in step_logs(straight).values() if "poise/value_mse" in logs]
    assert len(logged) == STEPS and all(logs["poise/extra_pass"] == 1.0 for logs in logged)
    probes = [
        torch.load(run / f"checkpoint-{step}" / EXTRA_TENSORS_FILE, weights_only=True)["poise"]
        for run, step in ((straight, 2), (straight, 8), (stopped, 8))
    ]
    early, straight_probe, resumed_probe = (state["probe"] for state in probes)
    assert any(not torch.equal(early[name], straight_probe[name]) for name in early)
    for name, tensor in straight_probe.items():
        assert torch.equal(tensor, resumed_probe[name]), name
    assert all(
        torch.equal(a, b)
        for a, b in zip(probes[1]["buffer_rewards"], probes[2]["buffer_rewards"], strict=True)
    )
