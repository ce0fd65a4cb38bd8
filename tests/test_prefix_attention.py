"""The grouped attention on its own: the same outputs and gradients as one dense block mask over
the whole grouped sequence, and a scope that switches the text decoder's attention only while a
grouped pass runs."""

from __future__ import annotations

import pytest
import torch

from mmcritic.train.prefix_attention import (
    ATTENTION,
    GroupLayout,
    active_layout,
    grouped_attention,
    prefix_grouper_attention,
)

HEADS, KV_HEADS, HEAD_DIM = 4, 2, 8


def _attention_module() -> torch.nn.Module:
    """What transformers' sdpa reads from the calling attention layer: its GQA ratio."""
    module = torch.nn.Module()
    module.num_key_value_groups = HEADS // KV_HEADS
    return module


def _dense_block_mask(layout: GroupLayout) -> torch.Tensor:
    """(G, 1, L, L): causal, keys in the prefix or in the query's own segment, left padding
    never a key (a padding query sees itself only, so no row is empty)."""
    index = torch.arange(layout.length)
    segment = (index - layout.prefix_length).div(layout.segment_length, rounding_mode="floor")
    segment = segment.clamp(min=-1)
    allowed = (index[:, None] >= index[None, :]) & (
        (index < layout.prefix_length)[None, :] | (segment[:, None] == segment[None, :])
    )
    padding = torch.tensor(layout.left_padding)[:, None] > index[None, :]  # (G, L)
    allowed = allowed[None] & ~padding[:, None, :]
    return (allowed | torch.eye(layout.length, dtype=torch.bool))[:, None]


def _random_states(layout: GroupLayout, seed: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    groups, length = len(layout.left_padding), layout.length
    shapes = [(groups, HEADS, length, HEAD_DIM)] + [(groups, KV_HEADS, length, HEAD_DIM)] * 2
    return [
        torch.randn(shape, generator=generator, dtype=torch.float64).requires_grad_()
        for shape in shapes
    ]


@pytest.mark.parametrize(
    "left_padding",
    [(0, 3, 5), (6, 0, 1), (2, 0, 2, 0)],
    ids=["padded", "empty_prefix", "shared_padding"],
)
def test_grouped_attention_equals_attention_under_the_dense_block_mask(left_padding):
    """Groups of different paddings (one with a prefix of padding only) and groups sharing one,
    which run as one batch: real queries get what the dense block mask gives them, with the
    same gradients; left-padding queries get zeros."""
    layout = GroupLayout(prefix_length=6, segment_length=4, segments=3, left_padding=left_padding)
    query, key, value = _random_states(layout, seed=0)
    real = torch.arange(layout.length)[None] >= torch.tensor(left_padding)[:, None]  # (G, L)
    weights = torch.randn(len(left_padding), layout.length, HEADS, HEAD_DIM, dtype=torch.float64)
    weights = weights * real[..., None, None]

    reference = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=_dense_block_mask(layout), enable_gqa=True
    ).transpose(1, 2)
    (reference * weights).sum().backward()
    expected = [tensor.grad.clone() for tensor in (query, key, value)]
    for tensor in (query, key, value):
        tensor.grad = None

    with active_layout(layout):
        output, _ = prefix_grouper_attention(_attention_module(), query, key, value, None)
    (output * weights).sum().backward()

    torch.testing.assert_close(output[real], reference[real], rtol=0, atol=1e-12)
    assert output[~real].abs().max() == 0
    for tensor, grad in zip((query, key, value), expected, strict=True):
        torch.testing.assert_close(tensor.grad, grad, rtol=0, atol=1e-12)
    assert key.grad.transpose(1, 2)[~real].abs().max() == 0, "a padding key was attended"


def test_the_attention_runs_only_inside_a_grouped_pass_and_takes_no_mask():
    layout = GroupLayout(prefix_length=2, segment_length=2, segments=1, left_padding=(0,))
    query, key, value = _random_states(layout, seed=1)
    with pytest.raises(RuntimeError, match="only inside"):
        prefix_grouper_attention(_attention_module(), query, key, value, None)
    with active_layout(layout), pytest.raises(ValueError, match="not a mask"):
        mask = torch.ones(1, 1, layout.length, layout.length, dtype=torch.bool)
        prefix_grouper_attention(_attention_module(), query, key, value, mask)
    longer = GroupLayout(prefix_length=3, segment_length=2, segments=1, left_padding=(0,))
    with active_layout(longer), pytest.raises(ValueError, match="do not match the layout"):
        prefix_grouper_attention(_attention_module(), query, key, value, None)


def test_the_grouped_pass_switches_the_text_attention_only_and_restores_it(tiny_model_dir):
    from transformers import Qwen2_5_VLForConditionalGeneration

    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(
        tiny_model_dir, attn_implementation="sdpa"
    )
    model.activation_checkpointing_enable({"use_reentrant": False})
    layers = model.model.language_model.layers
    checkpoints = [layer._gradient_checkpointing_func for layer in layers]
    text, vision = model.config.text_config, model.config.vision_config
    layout = GroupLayout(prefix_length=2, segment_length=2, segments=1, left_padding=(0,))
    with pytest.raises(KeyError), grouped_attention(model, layout):
        assert text._attn_implementation == ATTENTION
        assert vision._attn_implementation == "sdpa"
        assert all(
            layer._gradient_checkpointing_func is not checkpoint
            for layer, checkpoint in zip(layers, checkpoints, strict=True)
        )
        raise KeyError("a failing forward")
    assert (text._attn_implementation, vision._attn_implementation) == ("sdpa", "sdpa")
    assert all(
        layer._gradient_checkpointing_func is checkpoint
        for layer, checkpoint in zip(layers, checkpoints, strict=True)
    )
    query, key, value = _random_states(layout, seed=2)
    with pytest.raises(RuntimeError, match="only inside"):
        prefix_grouper_attention(_attention_module(), query, key, value, None)
