"""A finished run stays finished: running its command again changes nothing and says so, a run
stopped between its last checkpoint and its final save completes without another step, and a
raised `max_steps` trains on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from mmcritic.train.run import FINAL_DIR, HELDOUT_FILE, LOG_HISTORY_FILE, train
from tests.test_train import changed_tensors, tiny_recipe, weights

STAGES = {
    # groups of 8 answers with room to box one: some groups have a reward spread
    "grpo": (
        "grpo.num_generations=8",
        "grpo.max_completion_length=16",
        "optim.per_device_train_batch_size=16",
    ),
    "sft": ("stage=sft", "sft.target=format", "optim.learning_rate=5e-3"),
}


def _recipe(model: Path, data: Path, out: Path, stage: str, *overrides: str):
    return tiny_recipe(model, data, out, "save_steps=2", "report_to=[]", *STAGES[stage], *overrides)


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under the folder with its bytes and modification time."""
    return {
        str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != ".mmcritic.lock"
    }


def _steps_logged(out: Path) -> list[int]:
    history = json.loads((out / LOG_HISTORY_FILE).read_text())
    return sorted({entry["step"] for entry in history if "loss" in entry})


@pytest.mark.parametrize("stage", list(STAGES))
def test_running_a_finished_run_again_changes_nothing_and_says_so(
    warm_model, color_data, tmp_path, stage, caplog
) -> None:
    out = tmp_path / "run"
    first = train(_recipe(warm_model, color_data, out, stage))
    assert first["global_step"] == 2
    assert changed_tensors(weights(warm_model), weights(out / FINAL_DIR)), "never trained"
    before = _files(out)

    again = train(_recipe(warm_model, color_data, out, stage))

    assert again == first | {"already_finished": True}
    assert _files(out) == before
    assert not (out / "checkpoint-3").exists()
    assert "is finished: step 2 of max_steps 2" in caplog.text


@pytest.mark.parametrize("stage", list(STAGES))
def test_a_run_stopped_before_its_final_save_completes_without_another_step(
    warm_model, color_data, tmp_path, stage
) -> None:
    out = tmp_path / "run"
    train(_recipe(warm_model, color_data, out, stage))
    checkpoint = weights(out / "checkpoint-2")
    (out / HELDOUT_FILE).unlink()  # as if killed while saving the final model
    (out / FINAL_DIR / "model.safetensors").unlink()

    summary = train(_recipe(warm_model, color_data, out, stage))

    assert summary["global_step"] == 2 and "already_finished" not in summary
    final = weights(out / FINAL_DIR)
    assert all(torch.equal(final[name], checkpoint[name]) for name in checkpoint)
    assert sorted(path.name for path in out.glob("checkpoint-*")) == ["checkpoint-2"]
    assert _steps_logged(out) == [1, 2]


def test_a_raised_max_steps_trains_on_from_the_finished_run(
    warm_model, color_data, tmp_path
) -> None:
    out = tmp_path / "run"
    train(_recipe(warm_model, color_data, out, "grpo"))

    summary = train(_recipe(warm_model, color_data, out, "grpo", "max_steps=4"))

    assert summary["global_step"] == 4 and "already_finished" not in summary
    assert changed_tensors(weights(out / "checkpoint-2"), weights(out / FINAL_DIR))
