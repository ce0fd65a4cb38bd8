"""POISE: each rollout's GRPO baseline predicted from the policy's own internal states.

POISE (Choi et al., "Your Language Model is Its Own Critic: Reinforcement Learning with Value
Estimation from Actor's Internal States", arXiv 2605.07579) replaces GRPO's group mean with a
small probe that predicts the expected verifiable reward of a prompt from what the policy
computed while reading it and its rollout:
- the prompt's state: the last hidden state at the prompt's last token (the state that
  predicts the first completion token);
- the trajectory's state: the last hidden states at the positions that predict each completion
  token, averaged over the completion;
- token-entropy statistics of the completion: the mean, spread and largest entropy of the
  policy's next-token distribution, and the completion's length as a share of the budget.

The probe's input depends on the rollout it reads, so a rollout's own features would correlate
its baseline with its action and bias the policy gradient. The cross-rollout construction keeps
it unbiased: rollout i's baseline is the probe's prediction from the other rollouts of the same
prompt (their mean, with more than two), which were sampled independently of rollout i; the
probe itself is trained only on earlier batches. Hence at least two rollouts a prompt.

The probe is a two-layer MLP over the normalised states and the raw statistics, trained online
with Adam on the squared error to the realised rewards of the most recent rollout batches
(current and recent rollouts, as the paper trains it), a few full-batch steps after each batch's
advantages are taken. Every rank holds the same probe and trains it on the gathered batch, so no
rank's baseline differs; its weights, optimiser and buffer go into each checkpoint.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn
from trl.trainer.utils import nanstd

from mmcritic.train.config import PoiseSettings
from mmcritic.train.pair_baseline import STD_EPSILON

# the entropy statistics beside the two states: mean, spread, largest, length share
TRAJECTORY_STATS = 4
# an advantage this small is no learning signal (for the share of prompts with one)
ZERO_ADVANTAGE = 1e-6


def rollout_features(
    prompt: torch.Tensor,
    trajectory: torch.Tensor,
    entropies: torch.Tensor,
    completion_mask: torch.Tensor,
    max_completion_length: int,
) -> torch.Tensor:
    """(rows, 2 x width + 4) probe inputs: the prompt's and the trajectory's states (rows,
    width; `mmcritic.train.rollout_states`) and statistics of the per-token `entropies`."""
    stats = entropy_stats(entropies, completion_mask, max_completion_length)
    return torch.cat([prompt.float(), trajectory.float(), stats.float()], dim=1)


def entropy_stats(
    entropies: torch.Tensor, mask: torch.Tensor, max_completion_length: int
) -> torch.Tensor:
    """(rows, 4): mean, spread and largest per-token entropy over the completion, and its
    length as a share of the completion budget."""
    mask = mask.to(entropies.dtype)
    lengths = mask.sum(dim=1).clamp(min=1)
    mean = (entropies * mask).sum(dim=1) / lengths
    spread = (((entropies - mean[:, None]) ** 2 * mask).sum(dim=1) / lengths).sqrt()
    largest = entropies.masked_fill(mask == 0, 0.0).amax(dim=1)
    share = mask.sum(dim=1) / max_completion_length
    return torch.stack([mean, spread, largest, share], dim=1)


class ValueProbe(nn.Module):
    """Predicts a rollout's expected reward from its features (`rollout_features`). Each state
    is layer-normalised on its own, so the probe reads directions, whatever the scale of a
    model's hidden states."""

    def __init__(self, width: int, hidden_size: int):
        super().__init__()
        self.width = width
        self.net = nn.Sequential(
            nn.Linear(2 * width + TRAJECTORY_STATS, hidden_size),
            nn.GELU(),
            nn.Linear(hidden_size, 1),
        )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        prompt, trajectory, stats = features.split([self.width, self.width, TRAJECTORY_STATS], 1)
        normalised = [
            nn.functional.layer_norm(state, (self.width,)) for state in (prompt, trajectory)
        ]
        return self.net(torch.cat([*normalised, stats], dim=1)).squeeze(1)


def cross_rollout_baselines(values: torch.Tensor, num_generations: int) -> torch.Tensor:
    """Each rollout's baseline: the mean of the predicted values of the other rollouts of its
    prompt (rows grouped by prompt, `num_generations` consecutive rows a prompt)."""
    if num_generations < 2:
        raise ValueError("the cross-rollout baseline needs at least two rollouts a prompt")
    grouped = values.view(-1, num_generations)
    others = (grouped.sum(dim=1, keepdim=True) - grouped) / (num_generations - 1)
    return others.reshape(-1)


class PoiseBaseline:
    """The probe, its optimiser and the recent rollouts it trains on."""

    def __init__(self, width: int, settings: PoiseSettings, seed: int, device: Any = "cpu"):
        self.settings = settings
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.probe = ValueProbe(width, settings.hidden_size).to(device)
        self.optimizer = torch.optim.Adam(self.probe.parameters(), lr=settings.learning_rate)
        self.buffer: list[tuple[torch.Tensor, torch.Tensor]] = []

    def advantages(
        self, features: torch.Tensor, rewards: torch.Tensor, num_generations: int, scale: str
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """Advantages of one gathered rollout batch (`rewards` NaN where unscorable: no
        advantage, not learnt from), with what to log; then the probe learns the batch.
        `scale`: "batch" divides by the spread of the batch's rewards (TRL's), "none" by
        nothing; a group's spread over two rollouts is no scale, so "group" is refused."""
        features = features.float().to(self.device)
        rewards = rewards.float().to(self.device)
        with torch.no_grad():
            baselines = cross_rollout_baselines(self.probe(features), num_generations)
        centred = rewards - baselines
        if scale == "batch":
            centred = centred / (nanstd(rewards) + STD_EPSILON)
        elif scale != "none":
            raise ValueError(f"the POISE baseline scales by batch or none, not {scale!r}")
        advantages = torch.nan_to_num(centred, nan=0.0)
        logged = baseline_report(baselines, rewards, advantages, num_generations)
        self.learn(features, rewards)
        return advantages, logged

    def learn(self, features: torch.Tensor, rewards: torch.Tensor) -> None:
        """Adds the scored rows to the buffer (the newest `buffer_batches` batches) and takes
        `updates` full-batch steps on the squared error."""
        scored = ~rewards.isnan()
        self.buffer = [*self.buffer, (features[scored], rewards[scored])]
        self.buffer = self.buffer[-self.settings.buffer_batches :]
        inputs = torch.cat([seen for seen, _ in self.buffer])
        targets = torch.cat([reward for _, reward in self.buffer])
        if not len(targets):
            return
        with torch.enable_grad():
            for _ in range(self.settings.updates):
                self.optimizer.zero_grad()
                loss = nn.functional.mse_loss(self.probe(inputs), targets)
                loss.backward()
                self.optimizer.step()

    @property
    def device(self) -> torch.device:
        return next(self.probe.parameters()).device

    def state_dict(self) -> dict[str, Any]:
        """A copy (the optimiser's own state dict shares its moment tensors)."""
        return {
            "probe": copy.deepcopy(self.probe.state_dict()),
            "optimizer": copy.deepcopy(self.optimizer.state_dict()),
            "buffer_features": [seen.cpu() for seen, _ in self.buffer],
            "buffer_rewards": [reward.cpu() for _, reward in self.buffer],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.probe.load_state_dict(state["probe"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.buffer = [
            (seen.to(self.device), reward.to(self.device))
            for seen, reward in zip(state["buffer_features"], state["buffer_rewards"], strict=True)
        ]


def baseline_report(
    baselines: torch.Tensor, rewards: torch.Tensor, advantages: torch.Tensor, num_generations: int
) -> dict[str, float]:
    """What the probe got right and what its advantages carry, beside GRPO's group baseline on
    the same rewards: the squared error and correlation of the baselines with the realised
    rewards, the variance of both baselines' unscaled advantages, and the share of prompts
    with a non-zero advantage under each."""
    scored = ~rewards.isnan()
    realised, predicted = rewards[scored], baselines[scored]
    grouped = rewards.view(-1, num_generations)
    group_centred = (grouped - torch.nanmean(grouped, dim=1, keepdim=True)).reshape(-1)
    moved = advantages.view(-1, num_generations).abs().amax(dim=1) > ZERO_ADVANTAGE
    group_moved = torch.nan_to_num(group_centred, nan=0.0).view(-1, num_generations).abs()
    return {
        "poise/value_mse": nn.functional.mse_loss(predicted, realised).item(),
        "poise/value_correlation": _correlation(predicted, realised),
        "poise/advantage_variance": (realised - predicted).var().item(),
        "poise/group_advantage_variance": group_centred[scored].var().item(),
        "poise/prompts_with_advantage": moved.float().mean().item(),
        "poise/group_prompts_with_advantage": (
            (group_moved.amax(dim=1) > ZERO_ADVANTAGE).float().mean().item()
        ),
    }


def _correlation(predicted: torch.Tensor, realised: torch.Tensor) -> float:
    """Pearson's r; 0 where either side does not vary (no linear relation to read)."""
    if len(realised) < 2 or predicted.std() == 0 or realised.std() == 0:
        return 0.0
    return torch.corrcoef(torch.stack([predicted, realised]))[0, 1].item()
