"""The README's main job: GRPO must teach the tiny model the synthetic colour task."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmcritic_dev.quickstart import run_quickstart

RECIPES = Path(__file__).parents[1] / "recipes"


@pytest.mark.slow
def test_quickstart_grpo_adds_25_points_of_heldout_accuracy(tmp_path):
    report = run_quickstart(
        tmp_path, RECIPES / "quickstart_cpu_sft.yaml", RECIPES / "quickstart_cpu.yaml"
    )
    assert report["warm_start_format_rate"] == 1.0
    assert report["gain_points"] >= 25, report
    assert Path(report["plot"]).stat().st_size > 0
