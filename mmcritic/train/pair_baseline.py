"""One GRPO group per pair: the baseline of a critic's rollouts taken over both orders of a pair.

With `grpo.both_orders` every pair is judged in both orders in the same batch. GRPO's baseline
is the mean reward of one prompt's rollouts, so a critic that boxes "1" whatever it is shown
scores the same in every rollout of each order (all right where the better response is first,
all wrong where it is second): every group has zero advantage and the lean to one position can
never be unlearnt. Both orders of a pair ask the same question; taking the baseline (and the
spread, under `scale_rewards: group`) over the pair's rollouts in both orders gives the orders'
disagreement a gradient: the order the critic gets right is pushed up, the other down, which is
exactly the move from "judge by position" to "judge by content". Groups where the critic
already agrees with itself in both orders keep their usual per-order signal, shared.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from trl.trainer.utils import nanstd

# TRL's epsilon under the spread (`GRPOTrainer._generate_and_score_completions`)
STD_EPSILON = 1e-4


def pair_advantages(
    rewards: torch.Tensor,
    pairs: Sequence[str],
    num_generations: int,
    scale: str = "group",
    batch: torch.Tensor | None = None,
) -> torch.Tensor:
    """Advantages of rollouts whose baseline is the mean over their pair's rollouts in both
    orders. `rewards` holds one total reward per rollout (NaN where unscorable, as TRL marks
    them: left out of the mean and given no advantage), `pairs` each rollout's pair key; every
    pair must have `2 * num_generations` rollouts here (both orders). `scale`: "group" divides
    by the pair's spread, "batch" by the spread of `batch` (the rewards of every process, as
    TRL scales; `rewards` where not given), "none" by nothing."""
    rows = _rows_by_pair(pairs, num_generations)
    grouped = rewards[rows]
    mean = torch.nanmean(grouped, dim=1, keepdim=True)
    advantages = grouped - mean
    if scale == "group":
        advantages = advantages / (nanstd(grouped, dim=1, keepdim=True) + STD_EPSILON)
    elif scale == "batch":
        advantages = advantages / (nanstd(rewards if batch is None else batch) + STD_EPSILON)
    elif scale != "none":
        raise ValueError(f"scale must be group, batch or none, got {scale!r}")
    result = torch.zeros_like(rewards)
    result[rows.flatten()] = advantages.flatten()
    return torch.nan_to_num(result, nan=0.0)


def informative_pairs(rewards: torch.Tensor, pairs: Sequence[str], num_generations: int) -> float:
    """The share of pairs whose rollouts, over both orders, do not all score the same."""
    grouped = rewards[_rows_by_pair(pairs, num_generations)]
    spread = torch.nan_to_num(nanstd(grouped, dim=1), nan=0.0)
    return (spread > 0).float().mean().item()


def _rows_by_pair(pairs: Sequence[str], num_generations: int) -> torch.Tensor:
    """Row indices grouped by pair key, one row of `2 * num_generations` per pair."""
    rows: dict[str, list[int]] = {}
    for index, key in enumerate(pairs):
        rows.setdefault(str(key), []).append(index)
    wrong = {key: len(found) for key, found in rows.items() if len(found) != 2 * num_generations}
    if wrong:
        raise ValueError(
            f"grpo.pair_baseline needs both orders of each pair in the batch, "
            f"{2 * num_generations} rollouts a pair; found {dict(list(wrong.items())[:3])}"
        )
    return torch.tensor(list(rows.values()), dtype=torch.long)
