"""Both orders of a pair: the swapped copy, held-out reporting that exposes a position bias,
paired rollout batches and the consistency reward."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch

from mmcritic.data.dataset import read_records
from mmcritic.data.pairs import pair_key, swapped_record, with_both_orders
from mmcritic.data.schema import Record
from mmcritic.data.synth import synthesize
from mmcritic.rewards import ConsistencyReward
from mmcritic.train.balanced_sampling import PairedSampler, paired_order
from mmcritic.train.heldout import Rate, judged_report
from mmcritic.train.pair_baseline import pair_advantages


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    folder = tmp_path_factory.mktemp("pairs")
    synthesize("color", 12, folder, seed=3, overwrite=True)
    return read_records(folder)


def _text(record: Record) -> str:
    return json.dumps(record.prompt)


def test_the_swapped_copy_shows_the_responses_the_other_way_and_flips_the_answer(pairs):
    record = pairs[0]
    first, second = record.meta["responses"]
    copy = swapped_record(record)
    assert copy is not None and copy.answer == {"1": "2", "2": "1"}[record.answer]
    assert _text(copy).index(second) < _text(copy).index(first)
    assert copy.meta["responses"] == [second, first] and pair_key(copy) == pair_key(record)
    assert copy.images == record.images
    back = swapped_record(copy)
    assert back is not None and back.prompt == record.prompt and back.answer == record.answer


def test_a_prompt_that_does_not_show_each_response_once_has_no_copy(pairs):
    record = pairs[0]
    first, _ = record.meta["responses"]
    doubled = json.loads(_text(record).replace(first, f"{first} {first}", 1))
    assert swapped_record(Record(**{**record.__dict__, "prompt": doubled})) is None
    assert swapped_record(Record(**{**record.__dict__, "kind": "pointwise"})) is None


def test_both_orders_adds_one_copy_per_pair_and_keeps_pairs_already_there(pairs):
    both = with_both_orders(pairs)
    assert len(both) == 2 * len(pairs)
    assert Counter(pair_key(r) for r in both) == {pair_key(r): 2 for r in pairs}
    assert with_both_orders(both) == both
    copy = swapped_record(pairs[0])
    meta = {key: value for key, value in copy.meta.items() if key != "pair"}
    augmented = [  # as `mmcritic preprocess --swap-augment` writes a pair: "x" and "x#swap"
        Record(**{**pairs[0].__dict__, "id": "x"}),
        Record(**{**copy.__dict__, "id": "x#swap", "meta": meta}),
    ]
    assert [r.id for r in with_both_orders(augmented)] == ["x", "x#swap"]


def _always(index: str, prompts: list[Record]) -> list[str]:
    return [f"<think>...</think> \\boxed{{{index}}}" for _ in prompts]


def test_a_critic_that_always_boxes_one_index_is_exposed_by_the_report(pairs):
    prompts = with_both_orders(pairs)
    report = judged_report(prompts, _always("1", prompts))
    assert report["accuracy"] == pytest.approx(0.5)
    assert (report["accuracy_answer_1"], report["accuracy_answer_2"]) == (1.0, 0.0)
    assert report["consistent_accuracy"] == 0.0 and report["position_consistency"] == 0.0
    assert report["consistent_accuracy_n"] == len(pairs)


def test_a_critic_that_reads_the_content_is_right_in_both_orders(pairs):
    prompts = with_both_orders(pairs)
    report = judged_report(prompts, [f"<think></think>\\boxed{{{p.answer}}}" for p in prompts])
    assert report["consistent_accuracy"] == 1.0 and report["position_consistency"] == 1.0
    assert report["format_rate"] == 1.0 and report["verdicts"]["ok"] == len(prompts)
    low, high = report["consistent_accuracy_ci95"]
    assert 0.7 < low < 1.0 == high


def test_wilson_intervals_match_the_textbook_values():
    assert Rate(0, 10).interval == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert Rate(5, 10).interval == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert Rate(10, 10).interval == pytest.approx((0.7225, 1.0), abs=1e-4)


def test_both_orders_of_every_pair_stand_next_to_each_other_in_a_batch():
    keys = [f"p{i // 2}" for i in range(40)] + ["lonely"]
    order = paired_order(keys, torch.Generator().manual_seed(0))
    assert sorted(order) == list(range(41))
    for start in range(0, 40, 2):
        assert keys[order[start]] == keys[order[start + 1]]
    assert order != paired_order(keys, torch.Generator().manual_seed(1))
    sampler = PairedSampler(keys, data_source=keys, mini_repeat_count=2, batch_size=4, seed=0)
    drawn = list(sampler)[::2]
    assert all(keys[drawn[i]] == keys[drawn[i + 1]] for i in range(0, 40, 2))


def _consistency(completions: list[str], shown: list[list[str]]) -> tuple[list[float], dict]:
    metrics: dict[str, float] = {}
    scores = ConsistencyReward()(
        completions,
        pair=["p"] * len(completions),
        responses=shown,
        log_metric=lambda key, value: metrics.__setitem__(key, value),
    )
    return scores, metrics


def test_a_position_bias_earns_no_consistency_and_reading_the_content_does():
    shown = [["red", "blue"]] * 4 + [["blue", "red"]] * 4
    biased, metrics = _consistency(["<think></think>\\boxed{1}"] * 8, shown)
    assert biased == [0.0] * 8 and metrics["consistency/pair_agreement"] == 0.0
    red = ["\\boxed{1}"] * 3 + ["\\boxed{2}"] + ["\\boxed{2}"] * 3 + ["\\boxed{1}"]
    scores, metrics = _consistency([f"<think></think>{box}" for box in red], shown)
    assert scores == [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    assert metrics["consistency/pair_agreement"] == 1.0


def test_a_prompt_without_its_other_order_earns_nothing_and_is_counted():
    scores, metrics = _consistency(["<think></think>\\boxed{1}"] * 2, [["red", "blue"]] * 2)
    assert scores == [0.0, 0.0] and metrics["consistency/unpaired"] == 1.0


def test_grpo_with_both_orders_puts_each_pair_in_one_batch_and_logs_consistency_and_pairs(
    tmp_path: Path, tiny_model_dir: Path
):
    from mmcritic.train.run import train
    from tests.test_train import format_warm_start, tiny_recipe

    data = tmp_path / "data"
    synthesize("color", 8, data, seed=1, overwrite=True)
    warm = format_warm_start(tiny_model_dir, data, tmp_path / "warm")
    recipe = tiny_recipe(
        warm,
        data,
        tmp_path / "run",
        "grpo.both_orders=true",
        "rewards.consistency_weight=0.5",
        "grpo.pair_baseline=true",
        "grpo.num_generations=4",
        # room for the warm start's boxed verdict, so rollouts are scored apart
        "grpo.max_completion_length=24",
        "optim.per_device_train_batch_size=16",
    )
    train(recipe)
    history = json.loads((tmp_path / "run" / "log_history.json").read_text())
    assert any("rewards/consistency/mean" in entry for entry in history)
    assert all(entry.get("consistency/unpaired", 0.0) == 0.0 for entry in history)
    assert any("pair_baseline/informative_pairs" in entry for entry in history)
    orders_apart = 0
    for line in (tmp_path / "run" / "rollouts.jsonl").read_text().splitlines():
        logged = json.loads(line)
        keys = Counter(key.removesuffix("#swapped") for key in logged["ids"])
        assert set(keys.values()) == {2}, "a pair's two orders were split across batches"
        pairs = [key.removesuffix("#swapped") for key in logged["ids"] for _ in range(4)]
        rewards = torch.tensor(logged["reward"])
        expected = pair_advantages(rewards, pairs, 4)
        assert torch.allclose(torch.tensor(logged["advantage"]), expected, atol=5e-3)
        order_means: dict[str, set[float]] = {}
        for key, mean in zip(pairs[::4], rewards.view(-1, 4).mean(dim=1).tolist(), strict=True):
            order_means.setdefault(key, set()).add(round(mean, 4))
        orders_apart += sum(len(means) == 2 for means in order_means.values())
    # where a pair's orders score apart, per-prompt baselines would give other advantages
    assert orders_apart > 0
