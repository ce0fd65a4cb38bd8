"""What a person sees in the first hour: help that explains every flag and shows its default,
errors that name what to fix, one short line per logged training step, a quiet `--quiet`,
Ctrl-C that says how to resume, and a model card that names the base model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmcritic.cli import main
from mmcritic.models.loading import check_model, looks_like_a_path
from mmcritic.train.config import RecipeError, load_recipe
from mmcritic.train.progress import progress_line
from mmcritic_dev.quickstart import ONE_ORDER
from tests.media_factory import write_png

RECIPE = Path(__file__).parents[1] / "recipes" / "quickstart_cpu.yaml"


def train_args(model: Path, data: Path, out: Path, *overrides: str) -> list[str]:
    """`mmcritic train` of the quickstart recipe, cut to steps of two short answers."""
    return [
        "train",
        str(RECIPE),
        f"output_dir={out}",
        f"model.name_or_path={model}",
        f"data.train={data}",
        "data.eval=null",
        "logging_steps=1",
        "report_to=[]",
        "grpo.num_generations=2",
        "grpo.max_completion_length=4",
        *ONE_ORDER,
        "optim.per_device_train_batch_size=2",
        *overrides,
    ]


def _mmcritic(*args: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "mmcritic.cli", *args]
    environment = {**os.environ, "PYTHONFAULTHANDLER": "1"}  # a hang shows its stack on SIGABRT
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        # a run started in the background by a shell inherits SIGINT ignored, and Python then
        # never turns Ctrl-C into KeyboardInterrupt: the child hears Ctrl-C as a terminal would
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_help_shows_defaults_of_zero_and_explains_every_flag(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["synth", "--help"])
    assert "fraction of tied items (default: 0.0)" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["tiny-model", "--help"])
    shown = capsys.readouterr().out
    assert "TinyModelSpec" not in shown and "language model width" in shown


def test_a_mistyped_override_is_named_as_the_override(tmp_path) -> None:
    with pytest.raises(RecipeError) as raised:
        load_recipe(RECIPE, ["max_steps=abc", "optim.learning_rat=1e-5"])
    message = str(raised.value)
    override = "(set by an override, not in the recipe file)"
    assert f"max_steps = 'abc' is not an integer {override}" in message
    assert "unknown key optim.learning_rat; did you mean optim.learning_rate?" in message
    assert message.count(override) == 2


def test_a_dry_run_that_lists_problems_exits_2(tiny_model_dir, tmp_path, capsys) -> None:
    args = train_args(tiny_model_dir, tmp_path / "nowhere", tmp_path / "run")
    assert main(["--quiet", *args, "--dry-run"]) == 2
    assert json.loads(capsys.readouterr().out)["problems"]


@pytest.mark.parametrize(
    ("logs", "expected"),
    [
        (
            {"reward": 0.71, "rewards/preference/mean": 0.625, "kl": 0.0031, "loss": 0.02},
            "step 50/600 | reward 0.71 | accuracy 0.625 | kl 0.0031 | 1.5 s/step | ETA 13:45",
        ),
        (
            {"loss": 1.25, "mean_token_accuracy": 0.5},
            "step 50/600 | accuracy 0.5 | loss 1.25 | 1.5 s/step | ETA 13:45",
        ),
    ],
)
def test_a_logged_step_is_one_short_line(logs: dict, expected: str) -> None:
    assert progress_line(50, 600, logs, 1.5) == expected


def test_training_writes_a_line_per_step_and_a_card_naming_its_base_model(
    tiny_model_dir, color_data, tmp_path
) -> None:
    out = tmp_path / "run"
    process = _mmcritic(*train_args(tiny_model_dir, color_data, out, "max_steps=2"))
    _, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-2000:]
    assert "step 2/2 | reward" in stderr and "s/step | ETA" in stderr
    assert "'clip_ratio/high_max'" not in stderr  # no raw dict of every metric
    assert f"writing to {out}" in stderr and "resolved recipe:" not in stderr
    card = (out / "final" / "README.md").read_text()
    assert f"fine-tune of `{tiny_model_dir}`" in card and "[None]" not in card
    assert f"mmcritic critique --model {out / 'final'}" in card


def test_quiet_shows_no_progress(tiny_model_dir, color_data, tmp_path) -> None:
    args = train_args(tiny_model_dir, color_data, tmp_path / "run", "max_steps=2")
    process = _mmcritic("--quiet", *args)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-2000:]
    assert "it/s" not in stderr and "step 2/2" not in stderr
    assert json.loads(stdout)["global_step"] == 2


def test_ctrl_c_ends_in_one_line_naming_the_checkpoint_to_resume_from(
    tiny_model_dir, color_data, tmp_path
) -> None:
    out = tmp_path / "run"
    args = train_args(tiny_model_dir, color_data, out, "max_steps=500", "save_steps=2")
    process = _mmcritic(*args)
    deadline = time.monotonic() + 300
    while not (out / "checkpoint-4" / "trainer_state.json").is_file():
        assert process.poll() is None, process.stderr.read()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        still_running = process.poll() is None
        process.send_signal(signal.SIGABRT)  # faulthandler prints where each thread stands
        time.sleep(5)
        process.kill()
        try:
            _, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            stderr = "(its output is still held open, by a process it started)"
        pytest.fail(f"Ctrl-C left the run going (running: {still_running}):\n{stderr[-6000:]}")

    assert process.returncode == 130
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert "interrupted; run the same command to resume from" in last
    assert str(out / "checkpoint-") in last


@pytest.mark.parametrize(
    ("name", "is_path"),
    [
        ("./critic", True),
        ("/models/critic", True),
        ("~/critic", True),
        ("runs/quickstart/final", True),
        ("runs/critic", True),  # runs/ is a folder here
        ("critic/", True),
        ("Qwen/Qwen2.5-VL-7B-Instruct", False),
        ("gpt2", False),
    ],
)
def test_a_model_name_is_a_path_or_a_hub_id(name, is_path, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert looks_like_a_path(name) == is_path


def test_a_mistyped_run_folder_is_named_in_one_line_with_the_folders_near_it(
    tiny_model_dir, tmp_path, monkeypatch, caplog
) -> None:
    monkeypatch.chdir(tmp_path)
    final = tmp_path / "runs" / "quickstart" / "grpo" / "final"
    final.mkdir(parents=True)
    (final / "config.json").write_text("{}")
    write_png(tmp_path / "x.png")
    flags = ["--image=x.png", "--question=q", "--response-a=a", "--response-b=b"]

    assert main(["critique", "--model=runs/critic", *flags]) == 2

    [error] = [record for record in caplog.records if record.levelname == "ERROR"]
    assert error.getMessage() == (
        "no such folder: runs/critic; did you mean runs/quickstart/grpo/final?"
    )


def test_an_unknown_hub_id_fails_at_once_offline() -> None:
    started = time.monotonic()
    with pytest.raises(FileNotFoundError, match="no such folder here, and not"):
        check_model("someorg/no-such-model")
    assert time.monotonic() - started < 15  # hub retries took half a minute


def test_no_folder_inside_a_hidden_one_is_suggested(tmp_path, monkeypatch) -> None:
    """Hidden folders (`.venv`, `.git`, caches) are not searched: their thousands of folders
    would use up the search before the runs, and a model copy inside one is no run."""
    monkeypatch.chdir(tmp_path)
    for model in ("runs/.trash/critic2", "runs/quickstart/grpo/final"):
        (tmp_path / model).mkdir(parents=True)
        (tmp_path / model / "config.json").write_text("{}")

    with pytest.raises(FileNotFoundError) as missing:
        check_model("runs/critic")

    assert (
        str(missing.value)
        == "no such folder: runs/critic; did you mean runs/quickstart/grpo/final?"
    )
