"""Resume trusts no checkpoint file it has not checked: for each file a resumed run reads, a
missing, empty, truncated or (where a checksum can see it) bit-flipped copy makes `resume: auto`
fall back to the intact earlier checkpoint and name the file, and an explicit `resume:` of that
checkpoint an error naming it. transformers alone would start a fresh optimizer when
optimizer.pt or scheduler.pt is missing."""

from __future__ import annotations

import errno
import json
import shutil
import struct
import zipfile
from pathlib import Path

import pytest

from mmcritic.data.synth import synthesize
from mmcritic.models.checkpoints import CheckpointMismatchError
from mmcritic.train.checkpoint_files import checkpoint_problems, disk_full_named
from mmcritic.train.run import newest_checkpoint, resume_point, train
from tests.test_train import tiny_recipe

FILES = (
    "trainer_state.json",
    "mmcritic_state.json",
    "model.safetensors",
    "optimizer.pt",
    "scheduler.pt",
    "rng_state.pth",
)
ZIPPED = ("optimizer.pt", "scheduler.pt", "rng_state.pth")


@pytest.fixture(scope="module")
def finished_run(tiny_model_dir, tmp_path_factory) -> Path:
    """A two-step run with a checkpoint after each step."""
    work = tmp_path_factory.mktemp("damaged")
    synthesize("color", 16, work / "data", seed=0, overwrite=True)
    out = work / "run"
    overrides = ("max_steps=2", "save_steps=1", "report_to=[]")
    train(tiny_recipe(tiny_model_dir, work / "data", out, *overrides))
    return out


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "missing":
        path.unlink()
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        at = _inside_largest_member(path, data)
        path.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :])


def _inside_largest_member(path: Path, data: bytes) -> int:
    """A byte in the middle of the stored data of an archive's largest member (a flip in
    the alignment padding torch writes would change nothing that is read)."""
    with zipfile.ZipFile(path) as archive:
        member = max(archive.infolist(), key=lambda info: info.compress_size)
    header = member.header_offset
    name_length, extra_length = struct.unpack("<HH", data[header + 26 : header + 30])
    return header + 30 + name_length + extra_length + member.compress_size // 2


CASES = [
    (name, how)
    for name in FILES
    for how in ("missing", "empty", "truncated", "bitflip")
    if how != "bitflip" or name in ZIPPED
]


@pytest.mark.parametrize(("name", "how"), CASES)
def test_resume_falls_back_past_a_damaged_file_and_names_it(
    finished_run, tmp_path, caplog, name, how
) -> None:
    run = shutil.copytree(finished_run, tmp_path / "run")
    assert not checkpoint_problems(run / "checkpoint-2")
    _damage(run / "checkpoint-2" / name, how)

    assert newest_checkpoint(run) == run / "checkpoint-1"
    assert f"skipped checkpoint-2: {run / 'checkpoint-2' / name}" in caplog.text
    recipe = tiny_recipe(Path("m"), Path("d"), run, f"resume={run / 'checkpoint-2'}")
    with pytest.raises(CheckpointMismatchError, match=name):
        resume_point(recipe)


def test_an_edited_step_is_caught(finished_run, tmp_path) -> None:
    run = shutil.copytree(finished_run, tmp_path / "run")
    state_path = run / "checkpoint-2" / "trainer_state.json"
    state = json.loads(state_path.read_text())
    state_path.write_text(json.dumps(state | {"global_step": 7}))
    assert "global_step 7 is not the folder's step 2" in checkpoint_problems(state_path.parent)[0]


def test_no_complete_checkpoint_is_an_error_not_a_fresh_start(finished_run, tmp_path) -> None:
    run = shutil.copytree(finished_run, tmp_path / "run")
    for step in (1, 2):
        (run / f"checkpoint-{step}" / "optimizer.pt").unlink()
    with pytest.raises(CheckpointMismatchError, match="no complete checkpoint"):
        newest_checkpoint(run)


def test_a_run_resumes_from_the_intact_checkpoint_and_finishes(
    tiny_model_dir, finished_run, tmp_path
) -> None:
    run = shutil.copytree(finished_run, tmp_path / "run")
    shutil.rmtree(run / "final")
    _damage(run / "checkpoint-2" / "optimizer.pt", "truncated")
    data = tmp_path / "data"
    synthesize("color", 16, data, seed=0, overwrite=True)

    summary = train(tiny_recipe(tiny_model_dir, data, run, "max_steps=2", "save_steps=1"))

    assert summary["global_step"] == 2
    assert not checkpoint_problems(run / "checkpoint-2")


def test_a_full_disk_is_named(tmp_path) -> None:
    named = pytest.raises(OSError, match=f"no space left on device while writing {tmp_path}")
    with named, disk_full_named(tmp_path):
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(ValueError, match="unrelated"), disk_full_named(tmp_path):
        raise ValueError("unrelated")


def test_a_fresh_start_into_a_used_folder_is_refused_unless_told_to_overwrite(
    tiny_model_dir, finished_run, tmp_path
) -> None:
    run = shutil.copytree(finished_run, tmp_path / "run")
    data = tmp_path / "data"
    synthesize("color", 16, data, seed=0, overwrite=True)
    fresh = ("max_steps=1", "save_steps=1", "report_to=[]", "resume=never")
    with pytest.raises(ValueError, match=r"holds an earlier run .*checkpoint-1"):
        train(tiny_recipe(tiny_model_dir, data, run, *fresh))
    assert (run / "checkpoint-2").is_dir()

    summary = train(tiny_recipe(tiny_model_dir, data, run, *fresh, "overwrite=true"))

    assert summary["global_step"] == 1
    assert not (run / "checkpoint-2").exists()
    assert newest_checkpoint(run) == run / "checkpoint-1"


def test_a_run_stopped_before_its_first_checkpoint_starts_its_logs_clean(
    tiny_model_dir, finished_run, tmp_path
) -> None:
    run = shutil.copytree(finished_run, tmp_path / "run")
    for checkpoint in run.glob("checkpoint-*"):
        shutil.rmtree(checkpoint)
    data = tmp_path / "data"
    synthesize("color", 16, data, seed=0, overwrite=True)

    train(tiny_recipe(tiny_model_dir, data, run, "max_steps=1", "save_steps=1"))

    steps = [json.loads(line)["step"] for line in (run / "rollouts.jsonl").read_text().splitlines()]
    assert steps and len(steps) == len(set(steps)) and max(steps) <= 1
