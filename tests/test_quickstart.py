"""The README's main job: GRPO must teach the tiny model to judge the synthetic six-colour pairs
on the paper's prompt, right in both orders, not just with the better response in one place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmcritic.data.dataset import read_records
from mmcritic.data.synth import COLORS
from mmcritic.models.tiny import TinyModelSpec
from mmcritic_dev.quickstart import REPORT_FILE, QuickstartData, prepare_inputs, run_quickstart

RECIPES = Path(__file__).parents[1] / "recipes"


@pytest.mark.slow
def test_quickstart_grpo_adds_25_points_of_position_consistent_heldout_accuracy(tmp_path):
    report = run_quickstart(
        tmp_path, RECIPES / "quickstart_cpu_sft.yaml", RECIPES / "quickstart_cpu.yaml"
    )
    assert report["data"]["template"] == "pairwise"
    assert report["data"]["colors"] == 6
    assert report["warm_start"]["format_rate"] == 1.0
    assert report["gain_consistent_points"] >= 25, report
    assert json.loads((tmp_path / REPORT_FILE).read_text()) == report
    history = json.loads((tmp_path / "grpo" / "log_history.json").read_text())
    assert sum("heldout/consistent_accuracy" in entry for entry in history) >= 5, "no curve"
    assert Path(report["plot"]).stat().st_size > 0


def test_quickstart_builds_its_model_at_the_width_and_palette_it_names(tmp_path):
    data = QuickstartData(n_train=12, n_heldout=2, colors=3, hidden_size=192)
    assert data.hidden_size not in (TinyModelSpec.hidden_size, QuickstartData.hidden_size)
    assert data.colors not in (len(COLORS), QuickstartData.colors)
    paths = prepare_inputs(tmp_path, data)
    config = json.loads((paths["model"] / "config.json").read_text())
    assert config["text_config"]["hidden_size"] == 192
    assert config["vision_config"]["hidden_size"] == 192
    colours = {record.meta["color"] for record in read_records(paths["train"])}
    assert colours == set(list(COLORS)[:3]), colours
