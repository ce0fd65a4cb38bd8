"""Position-balanced rollout batches: as many "response 1 is right" prompts as "response 2"."""

from __future__ import annotations

from collections import Counter

import torch
from trl.trainer.utils import RepeatSampler

from mmcritic.train.balanced_sampling import PositionBalancedSampler, balanced_order


def seeded(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_every_even_batch_holds_as_many_first_as_second_answers():
    positions = ["1"] * 48 + ["2"] * 48
    order = balanced_order(positions, seeded())
    for start in range(0, len(order), 8):
        counts = Counter(positions[i] for i in order[start : start + 8])
        assert counts["1"] == counts["2"] == 4


def test_each_record_is_drawn_once_per_epoch_ties_and_surplus_included():
    positions = ["1"] * 30 + ["2"] * 20 + ["tie"] * 5 + ["n/a"] * 3
    order = balanced_order(positions, seeded())
    assert sorted(order) == list(range(len(positions)))


def test_the_order_is_shuffled_and_repeats_under_the_same_seed():
    positions = ["1", "2"] * 40
    first = balanced_order(positions, seeded(3))
    assert first == balanced_order(positions, seeded(3))
    assert first != balanced_order(positions, seeded(4))
    assert first[:20] != sorted(first[:20])


def test_sampler_repeats_prompts_for_groups_the_way_trl_does():
    positions = ["1", "2"] * 10
    kwargs = {"mini_repeat_count": 3, "batch_size": 4, "repeat_count": 2, "seed": 0}
    balanced = list(PositionBalancedSampler(positions, data_source=positions, **kwargs))
    plain = RepeatSampler(data_source=positions, **kwargs)
    assert len(balanced) == len(plain) == len(list(plain))
    generation_batches = [balanced[i : i + 12] for i in range(0, len(balanced), 12)]
    for first, second in zip(generation_batches[::2], generation_batches[1::2], strict=True):
        assert first == second, "each generation batch is reused repeat_count times"
        prompts = first[::3]
        assert first == [index for index in prompts for _ in range(3)]
        assert Counter(positions[i] for i in prompts) == {"1": 2, "2": 2}


def test_epoch_seeded_sampler_gives_each_epoch_the_order_trl_gives_it_uninterrupted():
    from mmcritic.train.balanced_sampling import EpochSeededRepeatSampler

    records = list(range(24))
    kwargs = {"data_source": records, "mini_repeat_count": 2, "batch_size": 4, "seed": 7}
    trl_sampler = RepeatSampler(**kwargs)
    trl_epochs = [list(trl_sampler) for _ in range(3)]
    assert trl_epochs[0] != trl_epochs[1] != trl_epochs[2]
    for epoch in (2, 0, 1):  # any epoch, in any order, as a resumed run asks for it
        fresh = EpochSeededRepeatSampler(**kwargs)
        fresh.set_epoch(epoch)
        assert list(fresh) == trl_epochs[epoch]


def test_balanced_sampler_order_depends_on_the_epoch_alone():
    positions = ["1", "2"] * 12
    kwargs = {"data_source": positions, "mini_repeat_count": 2, "batch_size": 4, "seed": 1}
    running = PositionBalancedSampler(positions, **kwargs)
    epochs = []
    for epoch in range(3):
        running.set_epoch(epoch)
        epochs.append(list(running))
    assert epochs[0] != epochs[1]
    resumed = PositionBalancedSampler(positions, **kwargs)
    resumed.set_epoch(2)
    assert list(resumed) == epochs[2]
