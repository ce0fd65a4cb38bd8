"""The pair baseline: a critic's rollouts judged against their pair's rollouts in both orders."""

from __future__ import annotations

import json
import math

import pytest
import torch

from mmcritic.train.config import RecipeError, load_recipe
from mmcritic.train.pair_baseline import informative_pairs, pair_advantages

N = 4  # rollouts per prompt
RIGHT, WRONG = 1.0, 0.1  # a right verdict, and a wrong one in the right format


def _pair(first: list[float], second: list[float], key: str = "p") -> tuple[list, list]:
    return first + second, [key] * (len(first) + len(second))


def test_a_critic_that_always_boxes_1_is_pushed_toward_the_order_it_gets_right():
    """Each order alone scores the same in every rollout (GRPO: no gradient); over the pair,
    the order with the better response first is pushed up and the swapped one down."""
    rewards, pairs = _pair([RIGHT] * N, [WRONG] * N)
    advantages = pair_advantages(torch.tensor(rewards), pairs, N)
    assert torch.all(advantages[:N] > 0.9) and torch.all(advantages[N:] < -0.9)
    # zero-sum to float32 rounding: 1.0 - 0.55 and 0.1 - 0.55 are not exact opposites there
    assert math.isclose(advantages.sum().item(), 0.0, abs_tol=1e-5)
    assert informative_pairs(torch.tensor(rewards), pairs, N) == 1.0


def test_a_pair_judged_alike_everywhere_teaches_nothing_and_is_counted():
    rewards, pairs = _pair([RIGHT] * N, [RIGHT] * N, "a")
    more, more_pairs = _pair([RIGHT, WRONG, RIGHT, RIGHT], [RIGHT] * N, "b")
    advantages = pair_advantages(torch.tensor(rewards + more), pairs + more_pairs, N)
    assert torch.all(advantages[: 2 * N] == 0)
    assert advantages[2 * N + 1] < 0 < advantages[2 * N]
    assert informative_pairs(torch.tensor(rewards + more), pairs + more_pairs, N) == 0.5


def test_the_baseline_and_spread_are_the_pair_s_whatever_order_the_rows_come_in():
    rewards = torch.tensor([1.0, 0.1, 0.5, 0.1, 1.0, 1.0, 0.1, 0.5])
    pairs = ["x"] * 4 + ["x"] * 4
    expected = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
    assert torch.allclose(pair_advantages(rewards, pairs, N), expected)
    shuffled = torch.randperm(8, generator=torch.Generator().manual_seed(0))
    got = pair_advantages(rewards[shuffled], [pairs[i] for i in shuffled], N)
    assert torch.allclose(got, expected[shuffled])
    unscaled = pair_advantages(rewards, pairs, N, scale="none")
    assert torch.allclose(unscaled, rewards - rewards.mean())


def test_batch_scaling_divides_by_the_spread_of_every_process_s_rewards():
    """TRL's `scale_rewards: batch` divides by the spread of the gathered rewards, not of one
    process's share of them."""
    rewards, pairs = _pair([RIGHT, WRONG, RIGHT, RIGHT], [WRONG] * N)
    everyone = torch.tensor(rewards + [RIGHT] * 2 * N)
    got = pair_advantages(torch.tensor(rewards), pairs, N, scale="batch", batch=everyone)
    centred = torch.tensor(rewards) - torch.tensor(rewards).mean()
    assert torch.allclose(got, centred / (everyone.std() + 1e-4))
    alone = pair_advantages(torch.tensor(rewards), pairs, N, scale="batch")
    assert not torch.allclose(got, alone)


def test_an_unscorable_rollout_is_left_out_of_the_baseline_and_gets_no_advantage():
    rewards = torch.tensor([RIGHT, RIGHT, float("nan"), RIGHT, WRONG, WRONG, WRONG, WRONG])
    advantages = pair_advantages(rewards, ["p"] * 8, N, scale="none")
    assert advantages[2] == 0
    mean = (4 * WRONG + 3 * RIGHT) / 7
    assert math.isclose(advantages[0].item(), RIGHT - mean, rel_tol=1e-6)


def test_a_pair_missing_an_order_is_refused():
    with pytest.raises(ValueError, match="both orders of each pair"):
        pair_advantages(torch.ones(N + 2), ["p"] * (N + 2), N)


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        (["grpo.pair_baseline=true"], "needs grpo.both_orders"),
        (
            ["grpo.pair_baseline=true", "grpo.both_orders=true", "grpo.dynamic_sampling=true"],
            "cannot be combined",
        ),
    ],
)
def test_a_recipe_asking_for_the_pair_baseline_where_it_cannot_work_is_refused(
    tmp_path, overrides, problem
):
    given = ["output_dir=out", "model.name_or_path=m", f"data.train={tmp_path}", "stage=grpo"]
    with pytest.raises(RecipeError, match=problem):
        load_recipe(None, [*given, "grpo.num_generations=4", *overrides])


@pytest.mark.slow
def test_two_ranks_each_hold_whole_pairs_and_train_on_their_pair_advantages(
    tiny_model_dir, tmp_path
):
    """Under two ZeRO-3 ranks the sampler must hand each rank both orders of its pairs (the
    baseline refuses a half pair) and each rank must take its own rows of the gathered
    rewards: rank 0's logged advantages are the pair baseline of its logged rewards."""
    from mmcritic.data.synth import synthesize
    from tests.test_train import format_warm_start, run_deepspeed

    data = tmp_path / "data"
    synthesize("color", 8, data, seed=1, overwrite=True)
    warm = format_warm_start(tiny_model_dir, data, tmp_path / "warm")
    out = tmp_path / "run"
    run_deepspeed(
        "zero3",
        f"output_dir={out}",
        f"model.name_or_path={warm}",
        f"data.train={data}",
        "max_steps=2",
        "save_steps=100",
        "grpo.both_orders=true",
        "grpo.pair_baseline=true",
        f"grpo.num_generations={N}",
        "grpo.max_completion_length=24",
        "optim.per_device_train_batch_size=8",
    )
    lines = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(lines) == 2
    for logged in lines:
        pairs = [key.removesuffix("#swapped") for key in logged["ids"] for _ in range(N)]
        expected = pair_advantages(torch.tensor(logged["reward"]), pairs, N)
        assert torch.allclose(torch.tensor(logged["advantage"]), expected, atol=5e-3)
    assert any(any(value != 0 for value in logged["advantage"]) for logged in lines)
