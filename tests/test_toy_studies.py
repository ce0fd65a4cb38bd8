"""The toy-scale studies run end to end at small sizes and report what they promise: the
policy before and after critic GRPO with self-critique against majority vote and the critic's
Voting@k, the critic in the loop (a critic-rewarded policy, both-orders training,
Voting@k), and refinement before and after critique RL with Critique-GRPO against GRPO."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mmcritic_dev.critic_in_the_loop import LoopScale
from mmcritic_dev.critic_in_the_loop import run_seeds as loop_seeds
from mmcritic_dev.critic_to_policy import ToyScale, headline
from mmcritic_dev.critic_to_policy import run_seeds as transfer_seeds
from mmcritic_dev.toy_stages import TOY_CRITIC, Recipes

RECIPES = Path(__file__).parents[1] / "recipes"
SMALL_CRITIC = replace(TOY_CRITIC, n_train=16, n_heldout=4, base_steps=4)
TOY_RECIPES = Recipes(
    RECIPES / "toy_critic_cpu_sft.yaml",
    RECIPES / "toy_critic_cpu.yaml",
    RECIPES / "policy_grpo_critic_reward_cpu.yaml",
)
SHORT = ["optim.per_device_train_batch_size=16", "save_steps=4", "logging_steps=2"]


@pytest.mark.slow
def test_critic_to_policy_reports_the_policy_and_self_critique_before_and_after(tmp_path):
    toy = ToyScale(
        critic=SMALL_CRITIC,
        policy_train=16,
        policy_questions=3,
        policy_steps=5,
        grpo_steps=4,
        policy_grpo_steps=2,
        votes=(1, 3),
    )
    summary = transfer_seeds(tmp_path, toy, 1, TOY_RECIPES, SHORT)
    line = headline(summary)
    assert set(line) >= {
        "policy_accuracy_before",
        "policy_accuracy_after",
        "bon_accuracy",
        "majority_accuracy",
        "single_accuracy",
        "critic_consistent_accuracy",
        "critic_rewarded_policy_accuracy",
        "voting_k=1_consistent_accuracy",
        "voting_k=3_consistent_accuracy",
    }
    assert all(0 <= value <= 100 for value in line.values())
    run = summary["runs"][0]
    assert run["after"]["overall"]["n"] == 6 and {"color", "count"} <= set(run["after"])
    # the oracle bounds every way of picking one of the samples
    assert run["critic_rewarded"]["overall"]["n"] == 6
    # what the critic gave the policy to learn from, logged by the policy's GRPO
    signal = run["critic_reward_signal"]
    assert 0 <= signal["groups_without_spread"] <= 1 and 0 <= signal["rollout_accuracy"] <= 1
    assert set(summary["critic_reward_signal"]) == set(signal)
    for stage in ("before", "after", "critic_rewarded"):
        rates = run[stage]["overall"]
        assert max(rates["bon_accuracy"], rates["majority_accuracy"]) <= rates["oracle_accuracy"]


@pytest.mark.slow
def test_critic_in_the_loop_runs_every_part(tmp_path):
    scale = LoopScale(
        critic=SMALL_CRITIC,
        critic_steps=4,
        policy_train=16,
        policy_questions=4,
        policy_base_steps=5,
        policy_steps=2,
        votes=(1, 3),
    )
    summary = loop_seeds(tmp_path, scale, TOY_RECIPES, 1)
    part = summary["critic_reward"]
    assert part["critic_calls"]["mean"] > 0
    assert 0 <= part["policy_accuracy_after"]["mean"] <= 1
    assert set(summary["both_orders"]) == {"standard", "both_orders"}
    assert set(summary["voting"]) == {"k=1", "k=3"}


@pytest.mark.slow
def test_the_refinement_study_reports_rounds_and_both_policy_runs(tmp_path):
    from mmcritic_dev.refinement_study import StudyScale, run_seed, summarize

    scale = StudyScale.quick()
    run = run_seed(tmp_path / "seed_0", 0, scale)
    summary = summarize([run], scale)

    for when in ("before", "after"):
        refinement = run["refinement"][when]
        assert len(refinement["accuracy_per_round"]) == scale.rounds + 1
        assert sum(refinement["stopped"].values()) == len(scale.tasks) * scale.heldout_questions
    assert set(run["policy"]) == {"grpo", "critique_grpo"}
    assert all(0 <= run["policy"][name]["accuracy_after"] <= 1 for name in run["policy"])
    assert len(summary["refinement_after"]) == scale.rounds + 1
