"""The shared-prefix pass's attention: block-sparse, no (L, L) mask, memory linear in L.

A grouped sequence (`mmcritic.train.shared_prefix`) is `prefix | segment 1 | ... | segment W`:
the prefix is the prompt without its last token (left padding first), each segment the last
prompt token and one completion. Its attention pattern is two dense pieces per group:

- prefix queries attend causally to the prefix's real keys (left padding excluded);
- each segment's queries attend to the prefix's real keys and, causally, to their own segment.

Each piece runs through transformers' own `sdpa_attention_forward` (its GQA and kernel choices
included): the prefix with `is_causal`, the W segments of a group as one batch against
`prefix + own segment` keys under one (segment, prefix + segment) mask. No (L, L) mask or score
matrix exists anywhere, and since transformers builds masks only for the implementations in its
`AttentionMaskInterface`, it builds none for this one either. What grows with the group is the
W copies of the prefix's keys and values beside the segments (as many as the standard pass
holds, one sequence per completion) and that mask, which is linear in L for a given completion
length (`tests/test_shared_prefix.py` measures it).

The function is registered in transformers' `AttentionInterface` as `ATTENTION` when a pass first
runs. The pass switches
only the text config's `_attn_implementation` to it, inside `grouped_attention`, which also holds
the layout; the vision tower keeps its own attention, and generation and the standard pass keep the
model's (flash-attention, sdpa or eager) once the block exits. Under gradient checkpointing the
decoder layers recompute their forward during backward, after the block has exited, so the block
also wraps the layers' checkpoint function: the recomputation runs under the same attention and
layout, and nothing of either outlives the autograd graph that needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward

ATTENTION = "mmcritic_prefix_grouper"


@dataclass(frozen=True)
class GroupLayout:
    """Where the pieces of each grouped sequence lie: `prefix_length` tokens (the first
    `left_padding[g]` of group g padding), then `segments` segments of `segment_length` tokens."""

    prefix_length: int
    segment_length: int
    segments: int
    left_padding: tuple[int, ...]

    @property
    def length(self) -> int:
        return self.prefix_length + self.segments * self.segment_length


_ACTIVE_LAYOUT: ContextVar[GroupLayout | None] = ContextVar("prefix_layout", default=None)


def prefix_grouper_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    sliding_window: int | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Attention over grouped sequences (batch = groups) laid out as the active `GroupLayout`;
    returns (batch, length, heads, head_dim) as transformers' attention functions do."""
    layout = _ACTIVE_LAYOUT.get()
    if layout is None:
        raise RuntimeError(f"{ATTENTION} attention runs only inside grouped_attention()")
    if attention_mask is not None:
        raise ValueError(f"{ATTENTION} attention takes its pattern from the layout, not a mask")
    if sliding_window is not None:
        raise ValueError(f"{ATTENTION} attention has no sliding window")
    if query.size(0) != len(layout.left_padding) or query.size(2) != layout.length:
        raise ValueError(
            f"queries {tuple(query.shape)} do not match the layout: "
            f"{len(layout.left_padding)} groups of {layout.length} tokens"
        )
    out = query.new_empty(query.size(0), layout.length, query.size(1), value.size(-1))
    for pad, rows in _rows_by_padding(layout.left_padding).items():
        index = torch.tensor(rows, device=query.device)
        out[index] = _group_attention(
            module,
            query[index],
            key[index],
            value[index],
            layout,
            pad,
            dropout=dropout,
            scaling=scaling,
        )
    return out, None


def _rows_by_padding(left_padding: tuple[int, ...]) -> dict[int, list[int]]:
    """Groups with the same left padding run as one batch: the pieces' shapes match."""
    rows: dict[int, list[int]] = {}
    for group, pad in enumerate(left_padding):
        rows.setdefault(pad, []).append(group)
    return rows


def _group_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    layout: GroupLayout,
    pad: int,
    **sdpa_kwargs: Any,
) -> torch.Tensor:
    """(B, length, heads, head_dim) for B groups of the same left padding; padding queries get
    zeros."""
    prefix, segment, count = layout.prefix_length, layout.segment_length, layout.segments
    batch, heads, head_dim = query.size(0), query.size(1), value.size(-1)
    pieces = [query.new_zeros(batch, pad, heads, head_dim)]
    if prefix > pad:
        shared, _ = sdpa_attention_forward(
            module,
            query[:, :, pad:prefix],
            key[:, :, pad:prefix],
            value[:, :, pad:prefix],
            None,
            is_causal=True,
            **sdpa_kwargs,
        )
        pieces.append(shared)
    seen = prefix - pad
    allowed = torch.ones(segment, seen + segment, dtype=torch.bool, device=query.device)
    own, _ = sdpa_attention_forward(
        module,
        _segments(query, prefix, count),
        _with_prefix(key, pad, prefix, count),
        _with_prefix(value, pad, prefix, count),
        allowed.tril(diagonal=seen)[None, None],
        **sdpa_kwargs,
    )
    pieces.append(own.reshape(batch, count * segment, heads, head_dim))
    return torch.cat(pieces, dim=1)


def _segments(states: torch.Tensor, prefix: int, count: int) -> torch.Tensor:
    """(B, heads, prefix + count * S, D) -> (B * count, heads, S, D): one row per segment."""
    batch, heads = states.size(0), states.size(1)
    segments = states[:, :, prefix:].unflatten(2, (count, -1)).transpose(1, 2)
    return segments.reshape(batch * count, heads, -1, states.size(-1))


def _with_prefix(states: torch.Tensor, pad: int, prefix: int, count: int) -> torch.Tensor:
    """(B * count, heads, prefix - pad + S, D): each segment's keys (or values) behind its
    group's real prefix ones."""
    shared = states[:, None, :, pad:prefix].expand(-1, count, -1, -1, -1)
    shared = shared.reshape(states.size(0) * count, *shared.shape[2:])
    return torch.cat([shared, _segments(states, prefix, count)], dim=2)


@contextmanager
def grouped_attention(model: Any, layout: GroupLayout) -> Iterator[None]:
    """Runs `model`'s text decoder (the unwrapped model or its PEFT wrapper) with the grouped
    attention for `layout`: its forward now, and its recomputation under gradient checkpointing
    whenever backward runs."""
    config = model.config.get_text_config()
    layers = [
        module
        for module in model.modules()
        if getattr(module, "gradient_checkpointing", False)
        and getattr(getattr(module, "self_attn", None), "config", None) is config
    ]
    checkpoints = [layer._gradient_checkpointing_func for layer in layers]
    try:
        for layer, checkpoint in zip(layers, checkpoints, strict=True):
            layer._gradient_checkpointing_func = _recomputed_in_scope(checkpoint, config, layout)
        with _scope(config, layout):
            yield
    finally:
        for layer, checkpoint in zip(layers, checkpoints, strict=True):
            layer._gradient_checkpointing_func = checkpoint


@contextmanager
def active_layout(layout: GroupLayout) -> Iterator[None]:
    """The layout the attention function reads while the block runs (`grouped_attention`
    enters it together with the attention switch)."""
    token = _ACTIVE_LAYOUT.set(layout)
    try:
        yield
    finally:
        _ACTIVE_LAYOUT.reset(token)


@contextmanager
def _scope(config: Any, layout: GroupLayout) -> Iterator[None]:
    AttentionInterface.register(ATTENTION, prefix_grouper_attention)  # idempotent
    previous = config._attn_implementation
    config._attn_implementation = ATTENTION
    try:
        with active_layout(layout):
            yield
    finally:
        config._attn_implementation = previous


def _recomputed_in_scope(checkpoint: Callable, config: Any, layout: GroupLayout) -> Callable:
    """A layer's checkpoint function whose checkpointed forward (first run and recomputation)
    runs in the grouped attention's scope."""

    def run(function: Callable, *args: Any, **kwargs: Any) -> Any:
        def scoped(*inner: Any, **inner_kwargs: Any) -> Any:
            with _scope(config, layout):
                return function(*inner, **inner_kwargs)

        return checkpoint(scoped, *args, **kwargs)

    return run
