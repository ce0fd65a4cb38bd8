"""The tiny instruct base: synthetic visual instructions, the cached build, and what it learns."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from safetensors.torch import load_file

from mmcritic.cli import main
from mmcritic.data.dataset import read_records
from mmcritic.data.synth import COLORS, SHAPES, synthesize
from mmcritic.train.instruct_base import REPORT_FILE, InstructSpec, build_instruct_base

QUICK = InstructSpec(questions=8, heldout=2, steps=2, samples=1, batch_size=4)


def _drawn_colour(path: Path) -> tuple[int, ...]:
    """The most common colour of the image other than the grey background."""
    pixels = np.asarray(Image.open(path).convert("RGB")).reshape(-1, 3)
    shape = pixels[(pixels != 128).any(axis=1)]
    colours, counts = np.unique(shape, axis=0, return_counts=True)
    return tuple(int(value) for value in colours[counts.argmax()])


@pytest.mark.parametrize("task", ["shape", "yesno", "describe"])
def test_new_questions_are_answered_by_what_the_image_shows(tmp_path, task):
    synthesize(task, 24, tmp_path, seed=3, kind="verifiable")
    records = read_records(tmp_path)
    for record in records:
        drawn = _drawn_colour(Path(record.images[0]))
        color = next(name for name, rgb in COLORS.items() if rgb == drawn)
        assert record.meta["color"] == color
        if task == "shape":
            assert record.answer in SHAPES and record.answer == record.meta["shape"]
        if task == "yesno":
            assert record.answer == ("yes" if record.meta["asked"] == color else "no")
        if task == "describe":
            article = "an" if color[0] in "aeiou" else "a"
            assert record.answer == f"{article} {color} {record.meta['shape']}"


def test_yes_and_no_are_about_equally_often_right(tmp_path):
    synthesize("yesno", 200, tmp_path, seed=5, kind="verifiable")
    yes = sum(record.answer == "yes" for record in read_records(tmp_path))
    assert 80 <= yes <= 120


def test_the_base_is_reused_for_the_same_settings_and_rebuilt_for_others(tmp_path):
    out = tmp_path / "base"
    first = build_instruct_base(out, QUICK)
    weights = (out / "model.safetensors").stat().st_mtime_ns
    assert build_instruct_base(out, QUICK) == first
    assert (out / "model.safetensors").stat().st_mtime_ns == weights
    other = replace(QUICK, learning_rate=5e-2)
    again = build_instruct_base(out, other)
    assert again["settings"]["learning_rate"] == 5e-2
    report = json.loads((out / REPORT_FILE).read_text())
    assert set(report["accuracy"]) == {*QUICK.tasks, "all"}
    assert report["accuracy"]["all"]["questions"] == len(QUICK.tasks) * QUICK.heldout
    # rebuilt from scratch: the finished run of the first settings must not stand in for it
    fresh = tmp_path / "fresh"
    build_instruct_base(fresh, other)
    rebuilt, expected = (load_file(str(folder / "model.safetensors")) for folder in (out, fresh))
    assert all(torch.equal(rebuilt[name], expected[name]) for name in expected)
    untrained = load_file(str(tmp_path / "base.build" / "tiny" / "model.safetensors"))
    assert not all(torch.equal(rebuilt[name], untrained[name]) for name in untrained)


def test_cli_builds_the_instruct_base(tmp_path, capsys):
    out = tmp_path / "base"
    args = ["--quiet", "tiny-model", str(out), "--instruct", "--instruct-steps", "2"]
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["settings"]["steps"] == 2 and "all" in printed["accuracy"]
    assert (out / "config.json").is_file()


@pytest.mark.slow
def test_the_instruct_base_answers_the_synthetic_questions(tmp_path):
    """The default build (a few minutes): colours almost always right, every kind above its
    chance (a third for shapes, a half for yes or no, a sixth for colours)."""
    accuracy = build_instruct_base(tmp_path / "base")["accuracy"]
    assert accuracy["color"]["greedy"] >= 0.9
    assert accuracy["shape"]["greedy"] > 1 / 3 and accuracy["yesno"]["greedy"] > 1 / 2
    assert accuracy["all"]["greedy"] >= 0.6
