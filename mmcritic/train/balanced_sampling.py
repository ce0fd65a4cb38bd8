"""Rollout batches that hold as many "response 1 is right" prompts as "response 2 is right".

Why: early in RL a critic cannot yet tell the responses apart, and the strongest gradient it
gets is toward whichever index happened to win more often in the step's batch. A batch of 16
prompts drawn at random is often 10 to 6; Adam turns that into a large step toward one index,
the next batch overshoots, and within a few dozen steps the policy answers one index on every
prompt. Every group then scores the same, GRPO's advantages are all zero, and the run never
recovers. With equal counts per batch, a policy that ignores the content gains nothing from
leaning either way, so the only consistent signal left is the content.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch
from trl.trainer.utils import RepeatSampler

FIRST, SECOND = "1", "2"


def balanced_order(positions: Sequence[str], generator: torch.Generator) -> list[int]:
    """A shuffled order of all indices made of (answer "1", answer "2") pairs, so a batch of
    even size holds equal counts of the two, give or take the few records that are not paired:
    the surplus of the larger side, ties and pointwise records, shuffled in among the pairs."""
    firsts = _shuffled([i for i, p in enumerate(positions) if p == FIRST], generator)
    seconds = _shuffled([i for i, p in enumerate(positions) if p == SECOND], generator)
    paired = min(len(firsts), len(seconds))
    units = [[a, b] for a, b in zip(firsts[:paired], seconds[:paired], strict=True)]
    units += [[i] for i in firsts[paired:] + seconds[paired:]]
    units += [[i] for i, p in enumerate(positions) if p not in (FIRST, SECOND)]
    return [index for unit in _shuffled(units, generator) for index in unit]


def _shuffled(items: list, generator: torch.Generator) -> list:
    return [items[i] for i in torch.randperm(len(items), generator=generator).tolist()]


class PositionBalancedSampler(RepeatSampler):
    """TRL's `RepeatSampler` (each prompt repeated for its group, batches reused across
    iterations) with the epoch's shuffle replaced by `balanced_order`."""

    def __init__(self, positions: Sequence[str], **kwargs):
        super().__init__(**kwargs)
        self.positions = list(positions)

    def __iter__(self) -> Iterator[int]:
        order = balanced_order(self.positions, self.generator)
        whole = len(order) - len(order) % self.batch_size
        for start in range(0, whole, self.batch_size):
            batch = order[start : start + self.batch_size]
            for _ in range(self.repeat_count):
                for index in batch:
                    for _ in range(self.mini_repeat_count):
                        yield index
