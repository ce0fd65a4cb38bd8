"""The entropy bonus reaches TRL's loss: with no reward spread anywhere it alone moves a critic."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from mmcritic.train.run import train
from tests.test_train import changed_tensors, tiny_recipe, weights


def _run(model: Path, data: Path, out: Path, *overrides: str) -> list[dict]:
    """Two GRPO steps of the random tiny model, which writes no verdict within 8 tokens: every
    rollout scores 0, so the policy term has no advantage to follow and with beta 0 no KL."""
    train(tiny_recipe(model, data, out, "grpo.beta=0", "report_to=[]", *overrides))
    history = json.loads((out / "log_history.json").read_text())
    assert all(entry.get("reward", 0.0) == 0.0 for entry in history)
    return history


def test_with_every_reward_equal_only_the_entropy_bonus_moves_the_weights(
    tiny_model_dir: Path, color_data: Path, tmp_path: Path
) -> None:
    before = weights(tiny_model_dir)
    _run(tiny_model_dir, color_data, tmp_path / "plain")
    assert changed_tensors(before, weights(tmp_path / "plain" / "final")) == []
    _run(tiny_model_dir, color_data, tmp_path / "bonus", "grpo.entropy_coef=0.5")
    assert changed_tensors(before, weights(tmp_path / "bonus" / "final"))


def test_the_bonus_and_the_top_entropy_share_reach_trl_s_config(
    tiny_model_dir: Path, color_data: Path, tmp_path: Path
) -> None:
    from mmcritic.train.trl_configs import grpo_config

    plain = tiny_recipe(tiny_model_dir, color_data, tmp_path / "run")
    assert (plain.grpo.entropy_coef, plain.grpo.top_entropy_quantile) == (0.0, 1.0)
    tuned = tiny_recipe(
        tiny_model_dir,
        color_data,
        tmp_path / "run",
        "grpo.entropy_coef=0.02",
        "grpo.top_entropy_quantile=0.2",
    )
    config = grpo_config(tuned, "cpu", torch.float32, [], [1.0])
    assert (config.entropy_coef, config.top_entropy_quantile) == (0.02, 0.2)
