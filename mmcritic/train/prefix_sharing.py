"""Where the shared-prefix pass runs: its cost beside the standard pass's at the model's widths,
one decision for all ranks, and micro-batches that keep each prompt's rows together.

- **Cost.** Both passes are counted in forward FLOPs per decoder layer at the model's own widths
  (projections and MLP per token, scores and weighted values per attended query-key pair), over
  the padded shapes each pass really runs. The grouped layout runs each prompt once and lets a
  completion attend to the prompt and to its own tokens only, so it costs less whenever a group
  holds two rows or more, and the same for a group of one.
- **Ranks in step.** Under ZeRO-3 each forward gathers every layer's parameters in a collective,
  so all ranks must run the same passes with the same number of forwards. The decision is taken
  on the costs summed over ranks, never on one rank's own lengths.
- **Micro-batches.** TRL shuffles a rollout batch row by row before it splits it into
  micro-batches, which leaves about one row of each prompt per micro-batch (7.3 groups in a
  micro-batch of 8 at the 7B recipe's shapes) and nothing for the loss pass to share. Shuffling
  whole groups keeps TRL's randomness between prompts and a prompt's rows in one micro-batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class LayerWidths:
    """The widths that set a decoder layer's forward cost."""

    hidden: int
    kv: int  # key/value projection width: KV heads x head dim
    intermediate: int

    @classmethod
    def of(cls, config: Any) -> LayerWidths:
        text = config.get_text_config()
        head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
        kv_heads = getattr(text, "num_key_value_heads", None) or text.num_attention_heads
        return cls(text.hidden_size, kv_heads * head_dim, text.intermediate_size)

    @property
    def token_flops(self) -> int:
        """q, k, v, o projections and the gated MLP, two FLOPs per multiply-add."""
        projections = 2 * self.hidden * self.hidden + 2 * self.hidden * self.kv
        return 2 * (projections + 3 * self.hidden * self.intermediate)

    @property
    def pair_flops(self) -> int:
        """One query against one key: its score and its share of the weighted values."""
        return 4 * self.hidden


def standard_cost(widths: LayerWidths, rows: int, length: int) -> float:
    """TRL's pass: every row at the padded length, causal attention."""
    pairs = length * (length + 1) / 2
    return rows * (length * widths.token_flops + pairs * widths.pair_flops)


def shared_cost(widths: LayerWidths, group_sizes: list[int], prefix: int, completion: int) -> float:
    """The grouped pass: per group the prompt (less its last token) once, then one segment per
    row (the last prompt token and the completion) attending to the prompt and to itself."""
    segment = completion + 1
    total = 0.0
    for size in group_sizes:
        tokens = prefix + size * segment
        pairs = prefix * (prefix + 1) / 2 + size * segment * (prefix + (segment + 1) / 2)
        total += tokens * widths.token_flops + pairs * widths.pair_flops
    return total


def cheaper_on_every_rank(shared: float, standard: float, accelerator: Any) -> bool:
    """Whether the shared pass costs less over all ranks together; the same answer on every
    rank (a rank that cannot share at all passes an infinite cost, and no rank shares)."""
    costs = torch.tensor([shared, standard], dtype=torch.float64, device=accelerator.device)
    if accelerator.num_processes > 1:
        costs = accelerator.reduce(costs, reduction="sum")
    return bool(costs[0] < costs[1])


def most_on_any_rank(count: int, accelerator: Any) -> int:
    """The largest of every rank's `count` (the number of forwards a pass needs there)."""
    if accelerator.num_processes == 1:
        return count
    counts = torch.tensor([count], device=accelerator.device)
    return int(accelerator.reduce(counts, reduction="max").item())


def shuffle_groups(batch: dict[str, Any], group_ids: torch.Tensor) -> dict[str, Any]:
    """`batch` with its prompt groups in a random order and each group's rows together, in the
    order they had; values are permuted as TRL's `shuffle_sequence_dict` permutes them."""
    members: dict[int, list[int]] = {}
    for row, group in enumerate(group_ids.tolist()):
        members.setdefault(group, []).append(row)
    groups = list(members.values())
    order = torch.randperm(len(groups)).tolist()
    permutation = [row for index in order for row in groups[index]]

    def permute(value: Any) -> Any:
        if value is None or (isinstance(value, torch.Tensor) and value.ndim == 0):
            return value
        if isinstance(value, torch.Tensor):
            return value[permutation]
        return [value[row] for row in permutation]

    return {key: permute(value) for key, value in batch.items()}
