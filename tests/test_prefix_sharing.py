"""When the shared-prefix pass runs: its cost model against torch's FLOP counter, the decision,
and micro-batches that keep each prompt's rows together."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import Qwen2_5_VLTextConfig
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLDecoderLayer

from mmcritic.train.prefix_sharing import (
    LayerWidths,
    shared_cost,
    shuffle_groups,
    standard_cost,
)


def _layer(hidden: int, heads: int, kv_heads: int, intermediate: int):
    config = Qwen2_5_VLTextConfig(
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        intermediate_size=intermediate,
        num_hidden_layers=1,
    )
    return config, Qwen2_5_VLDecoderLayer(config, layer_idx=0)


@pytest.mark.parametrize(
    ("hidden", "heads", "kv_heads", "intermediate"),
    [(64, 4, 2, 128), (3584 // 8, 28, 4, 18944 // 8)],
    ids=["tiny", "7b_proportions"],
)
def test_token_cost_is_what_torch_counts_for_the_layer_projections(
    hidden, heads, kv_heads, intermediate
):
    config, layer = _layer(hidden, heads, kv_heads, intermediate)
    linears = [m for m in layer.modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 7, "q, k, v, o and the gated MLP's three"
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        for linear in linears:
            linear(torch.randn(1, 5, linear.in_features))
    widths = LayerWidths(config.hidden_size, kv_heads * (hidden // heads), intermediate)
    assert widths == LayerWidths.of(config)
    assert counter.get_total_flops() == 5 * widths.token_flops


def test_a_group_of_several_rows_costs_less_shared_and_a_group_of_one_the_same():
    widths = LayerWidths(3584, 512, 18944)
    prompt, completion = 1200, 300
    for size in (2, 8):
        shared = shared_cost(widths, [size], prompt - 1, completion)
        assert shared < standard_cost(widths, size, prompt + completion)
    alone = shared_cost(widths, [1], prompt - 1, completion)
    assert alone == standard_cost(widths, 1, prompt + completion)


def test_long_completions_still_cost_less_shared_at_the_7b_recipe_shapes():
    """The block layout attends only within a group's segments: even completions of 2,048
    tokens beside a 1,000-token prompt cost less shared, where one L x L mask per group lost."""
    widths = LayerWidths(3584, 512, 18944)
    shared = shared_cost(widths, [8], 999, 2048)
    standard = standard_cost(widths, 8, 1000 + 2048)
    assert shared / standard == pytest.approx(0.75, abs=0.05)


def test_shuffled_groups_stay_whole_and_every_row_is_kept_once():
    groups = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    rows = torch.arange(12)
    batch = {
        "prompt_group": groups,
        "row": rows,
        "names": [f"r{i}" for i in range(12)],
        "tokens": torch.tensor(42),
        "absent": None,
    }
    orders = set()
    for seed in range(6):
        torch.manual_seed(seed)
        shuffled = shuffle_groups(batch, groups)
        assert sorted(shuffled["row"].tolist()) == rows.tolist()
        assert shuffled["names"] == [f"r{i}" for i in shuffled["row"].tolist()]
        assert torch.equal(shuffled["prompt_group"], groups[shuffled["row"]])
        assert shuffled["tokens"].item() == 42 and shuffled["absent"] is None
        for start in range(0, 12, 3):
            block = shuffled["prompt_group"][start : start + 3]
            assert (block == block[0]).all(), "a group was split"
            assert shuffled["row"][start : start + 3].diff().gt(0).all()
        orders.add(tuple(shuffled["prompt_group"][::3].tolist()))
    assert len(orders) > 1, "the groups were never shuffled"


def _buffered_groups(model_dir, data, out, shared: bool) -> list[list[int]]:
    """The prompt groups of each micro-batch a two-micro-batch rollout is split into."""
    from tests.test_shared_prefix import trainer_for

    trainer, _ = trainer_for(
        model_dir,
        data,
        out,
        "grpo.num_generations=2",
        "grpo.max_completion_length=4",
        "grpo.steps_per_generation=2",
        f"grpo.shared_prefix={str(shared).lower()}",
        # the rows below are fed as they are, each pair in one order
        "grpo.pair_baseline=false",
        "optim.per_device_train_batch_size=4",
    )
    trainer.model.train()
    rows = [trainer.train_dataset[i] for i in range(4) for _ in range(2)]
    torch.manual_seed(1)
    trainer._prepare_inputs(rows)
    return [part["prompt_group"].tolist() for part in trainer._buffered_inputs]


def test_micro_batches_hold_whole_prompt_groups_when_the_prefix_is_shared(tiny_model_dir, tmp_path):
    from mmcritic.data.synth import synthesize

    data = tmp_path / "color"
    synthesize("color", 4, data, seed=2, overwrite=True)
    shared = _buffered_groups(tiny_model_dir, data, tmp_path / "shared", True)
    standard = _buffered_groups(tiny_model_dir, data, tmp_path / "standard", False)
    for parts in (shared, standard):
        rows = [group for part in parts for group in part]
        assert len(parts) == 2 and sorted(rows) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert all(part.count(group) == 2 for part in shared for group in part)
    assert any(part.count(group) == 1 for part in standard for group in part), (
        "TRL's row shuffle kept every group whole: the comparison shows nothing"
    )
