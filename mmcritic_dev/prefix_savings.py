"""The shared-prefix pass's saving at a released model's shapes, on paper.

Counts the forward FLOPs of the decoder layers (`mmcritic.train.prefix_sharing`'s cost model: the
projections and MLP per token, scores and weighted values per attended query-key pair) for one
prompt group of `n` rows, standard against shared, at each prompt and completion length asked
for. The old and reference log-prob passes and the update pass (forward and backward, about three
forwards) all run such chunks when the update micro-batches keep a prompt's rows together, so the
ratio is each pass's ratio; the vision tower, run once per group instead of n times, and the
output head are left out, which understates the saving.
"""

from __future__ import annotations

from typing import Any

from mmcritic.models.published import PUBLISHED
from mmcritic.train.prefix_sharing import LayerWidths, shared_cost, standard_cost


def published_widths(name: str) -> LayerWidths:
    shape = PUBLISHED[name]
    kv_width = shape.num_kv_heads * shape.text_head_dim
    return LayerWidths(shape.hidden_size, kv_width, shape.intermediate_size)


def saving_table(
    name: str, n: int, prompts: list[int], completions: list[int]
) -> list[dict[str, Any]]:
    """One row per (prompt, completion): both passes' TFLOPs for a group of `n` rows over all
    decoder layers, and shared / standard."""
    widths = published_widths(name)
    layers = PUBLISHED[name].num_layers
    rows = []
    for prompt in prompts:
        for completion in completions:
            standard = layers * standard_cost(widths, n, prompt + completion)
            shared = layers * shared_cost(widths, [n], prompt - 1, completion)
            rows.append(
                {
                    "prompt": prompt,
                    "completion": completion,
                    "standard_tflop": round(standard / 1e12, 2),
                    "shared_tflop": round(shared / 1e12, 2),
                    "ratio": round(shared / standard, 3),
                }
            )
    return rows
