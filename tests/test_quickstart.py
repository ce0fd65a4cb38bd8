"""The README's main job: GRPO must teach the tiny model to judge the synthetic six-colour pairs
on the paper's prompt, right in both orders, not just with the better response in one place."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from mmcritic.data.dataset import read_records
from mmcritic.data.synth import COLORS
from mmcritic.models.tiny import TinyModelSpec
from mmcritic.rewards import critic
from mmcritic_dev.quickstart import (
    REPORT_FILE,
    QuickstartData,
    input_paths,
    prepare_inputs,
    run_quickstart,
)

RECIPES = Path(__file__).parents[1] / "recipes"
README = Path(__file__).parents[1] / "README.md"


def _readme_range() -> tuple[float, float]:
    """The range of position-consistent accuracy the README tells a user to expect."""
    stated = r"expect a result between ([\d.]+)% and ([\d.]+)% right in both orders"
    found = re.search(stated, " ".join(README.read_text().split()))
    assert found, "the README states no range for the quickstart"
    return float(found.group(1)), float(found.group(2))


@pytest.fixture(scope="module")
def quickstart_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quickstart's instruct base and pairs, built once for the slow runs here (about four
    minutes)."""
    work = tmp_path_factory.mktemp("quickstart_inputs")
    prepare_inputs(work, QuickstartData())
    return work


def _run_from(inputs: Path, work: Path, overrides: list[str] | None = None) -> dict:
    shutil.copytree(inputs, work, dirs_exist_ok=True)
    return run_quickstart(
        work, RECIPES / "quickstart_cpu_sft.yaml", RECIPES / "quickstart_cpu.yaml", None, overrides
    )


def check_quickstart(report: dict, work: Path) -> None:
    """What the README promises of the quickstart's report, curve and log."""
    assert report["data"]["template"] == "pairwise"
    assert report["data"]["colors"] == 6
    assert report["base"]["color"]["greedy"] >= 0.9, report["base"]
    assert report["chance"] == {"accuracy": 0.5, "consistent_accuracy": 0.25}
    after = report["grpo"]
    assert {"accuracy_answer_1", "accuracy_answer_2", "consistent_accuracy"} <= set(after)
    assert report["warm_start"]["format_rate"] == after["format_rate"] == 1.0
    low, high = _readme_range()
    consistent = 100 * after["consistent_accuracy"]
    assert low <= consistent <= high, f"right in both orders on {consistent:.1f}% of pairs"
    assert report["over_chance_consistent_points"] >= low - 25, report
    assert json.loads((work / REPORT_FILE).read_text()) == report
    history = json.loads((work / "grpo" / "log_history.json").read_text())
    assert sum("heldout/consistent_accuracy" in entry for entry in history) >= 5, "no curve"
    assert any("pair_baseline/informative_pairs" in entry for entry in history)
    assert Path(report["plot"]).stat().st_size > 0


@pytest.mark.slow
def test_the_quickstart_critic_from_the_instruct_base_judges_far_above_chance(
    quickstart_inputs, tmp_path
):
    check_quickstart(_run_from(quickstart_inputs, tmp_path), tmp_path)


@pytest.mark.slow
def test_a_quickstart_whose_reward_reads_the_wrong_index_fails_its_check(
    quickstart_inputs, tmp_path, monkeypatch
):
    """The check above has teeth: with the verdict compared against the other response's
    index, the same run (cut to 100 GRPO steps) learns to pick the worse response."""
    right_reward = critic.preference_reward

    def wrong_index(completions, answer, **kwargs):
        flipped = [{"1": "2", "2": "1"}.get(str(value), value) for value in answer]
        return right_reward(completions, flipped, **kwargs)

    monkeypatch.setattr(critic, "preference_reward", wrong_index)
    report = _run_from(quickstart_inputs, tmp_path, ["max_steps=100"])
    with pytest.raises(AssertionError, match="right in both orders"):
        check_quickstart(report, tmp_path)
    assert report["grpo"]["consistent_accuracy"] < report["chance"]["consistent_accuracy"]


def test_quickstart_builds_its_base_at_the_width_heads_and_palette_it_names(tmp_path):
    data = QuickstartData(
        n_train=12, n_heldout=2, colors=3, hidden_size=256, base_steps=2, base_questions=4
    )
    assert data.hidden_size not in (TinyModelSpec.hidden_size, QuickstartData.hidden_size)
    assert (data.text_heads, data.text_kv_heads) != (
        TinyModelSpec.num_heads,
        TinyModelSpec.num_kv_heads,
    )
    assert data.colors not in (len(COLORS), QuickstartData.colors)
    base = prepare_inputs(tmp_path, data)
    paths = input_paths(tmp_path)
    assert base["settings"]["model"]["hidden_size"] == 256 and "all" in base["accuracy"]
    config = json.loads((paths["model"] / "config.json").read_text())
    assert config["text_config"]["hidden_size"] == 256
    assert config["text_config"]["num_attention_heads"] == data.text_heads
    assert config["text_config"]["num_key_value_heads"] == data.text_kv_heads
    assert config["vision_config"]["hidden_size"] == 256
    colours = {record.meta["color"] for record in read_records(paths["train"])}
    assert colours == set(list(COLORS)[:3]), colours
    # the warm start's pairs: the same pairs, each with the base's own answer to its question
    warm = read_records(paths["warm_start"])
    assert [r.id for r in warm] == [r.id for r in read_records(paths["train"])]
    assert all("own_answer" in record.meta for record in warm)


def _quickstart_process(
    work: Path, threads: str = "", environment: dict[str, str] | None = None
) -> subprocess.Popen:
    """The quickstart cut short (6 warm-start steps, 4 GRPO steps, a checkpoint every 2);
    `threads` (", threads=N") overrides its thread count."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from mmcritic_dev.quickstart import QuickstartData, run_quickstart\n"
        f"recipes = Path({str(RECIPES)!r})\n"
        "run_quickstart(Path(sys.argv[1]), recipes / 'quickstart_cpu_sft.yaml',\n"
        "    recipes / 'quickstart_cpu.yaml', QuickstartData(n_train=16, n_heldout=4,\n"
        f"        base_steps=4, base_questions=8{threads}),\n"
        "    ['max_steps=4', 'save_steps=2', 'logging_steps=2', 'data.eval_every=2'],\n"
        "    ['max_steps=6', 'save_steps=2', 'logging_steps=2'])\n"
    )
    command = [sys.executable, "-c", code, str(work)]
    return subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(environment or {})},
    )


def _weights(run: Path) -> dict[str, torch.Tensor]:
    return load_file(str(run / "grpo" / "final" / "model.safetensors"))


@pytest.mark.slow
def test_the_quickstart_ends_in_the_same_weights_whatever_threads_the_machine_offers(tmp_path):
    """One thread unless asked: a run told two threads are free (OMP_NUM_THREADS=2) runs on
    one and ends bit-identical to one told one; a run asked for two runs on two. Whether two
    threads change the numbers at this size depends on the machine's kernels (on an AMD EPYC
    with MKL, matrix products come out bit-identical on one and two threads), so the threads
    each run used are checked, not that the asked run ends elsewhere."""
    runs = {
        "offered_1": _quickstart_process(tmp_path / "offered_1", "", {"OMP_NUM_THREADS": "1"}),
        "offered_2": _quickstart_process(tmp_path / "offered_2", "", {"OMP_NUM_THREADS": "2"}),
    }
    for process in runs.values():
        assert process.wait(timeout=900) == 0, process.stderr.read()[-3000:]
    asked = _quickstart_process(tmp_path / "asked_2", ", threads=2")
    assert asked.wait(timeout=900) == 0, asked.stderr.read()[-3000:]
    one, offered = (_weights(tmp_path / name) for name in ("offered_1", "offered_2"))
    assert all(torch.equal(one[name], offered[name]) for name in one)
    used = {
        name: json.loads((tmp_path / name / REPORT_FILE).read_text())["torch_threads"]
        for name in ("offered_1", "offered_2", "asked_2")
    }
    assert used == {"offered_1": 1, "offered_2": 1, "asked_2": 2}
    report = json.loads((tmp_path / "asked_2" / REPORT_FILE).read_text())
    assert report["data"]["threads"] == 2


@pytest.mark.slow
def test_a_quickstart_interrupted_in_its_warm_start_ends_where_an_uninterrupted_one_does(
    tmp_path,
):
    straight = _quickstart_process(tmp_path / "straight")
    assert straight.wait(timeout=900) == 0, straight.stderr.read()[-3000:]

    work = tmp_path / "interrupted"
    process = _quickstart_process(work)
    deadline = time.monotonic() + 600
    while not (work / "sft" / "checkpoint-2" / "trainer_state.json").is_file():
        assert process.poll() is None, process.stderr.read()[-3000:]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (work / "sft" / "final").exists()
    resumed = _quickstart_process(work)
    assert resumed.wait(timeout=900) == 0, resumed.stderr.read()[-3000:]

    for stage in ("sft", "grpo"):
        expected = load_file(str(tmp_path / "straight" / stage / "final" / "model.safetensors"))
        got = load_file(str(work / stage / "final" / "model.safetensors"))
        assert all(torch.equal(expected[name], got[name]) for name in expected), stage
    report = (work / REPORT_FILE).read_text()
    again = _quickstart_process(work)
    assert again.wait(timeout=900) == 0, again.stderr.read()[-3000:]
    assert (work / REPORT_FILE).read_text() == report  # a finished quickstart stays as it is
