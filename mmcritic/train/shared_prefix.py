"""One forward pass per prompt group in GRPO's log-prob and loss passes (Prefix Grouper,
arXiv 2506.05433).

GRPO scores n completions of every prompt, and the standard pass runs the whole prompt (its image
through the vision tower, then every prompt token through every layer) once per completion. A
critic prompt (image, question, two responses, instructions) is long and its completions short,
so most of that work is the same prompt again. Here each group is laid out as one sequence:

    prompt[:-1] | last prompt token, completion 1 | last prompt token, completion 2 | ...

and a block-sparse attention (`mmcritic.train.prefix_attention`) lets every completion attend to
the shared prompt and to its own earlier tokens only, without any (L, L) mask. Each completion's
segment starts with its own copy of the last prompt token at the same position id, so it sees
exactly what that token sees in the standard pass, and the causal shift inside a segment scores
the completion's first token from it. Keys, values, rotary positions and attended sets are those
of the standard pass, so log-probs and gradients are the same up to float rounding
(`tests/test_shared_prefix.py` holds them to it), while the prompt and its images go through the
model once per group instead of n times.

Like TRL's pass, the grouped pass runs in chunks of at most `batch_size` rows, each of whole
groups (one group at least), and returns its rows in the original order. The layout goes through
the model's own forward (with TRL's fused log-prob head, temperature included), so DeepSpeed, DDP
and PEFT wrappers stay in the loop; the model keeps its own attention implementation outside the
pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from mmcritic.models.families import family_of
from mmcritic.train.prefix_attention import GroupLayout, grouped_attention
from mmcritic.train.prefix_sharing import (
    LayerWidths,
    cheaper_on_every_rank,
    most_on_any_rank,
    shared_cost,
    standard_cost,
)

IGNORE = -100


@dataclass
class Groups:
    """Rows that share a prompt: `members[g]` are the row indices of group g, the first of them
    its representative."""

    members: list[list[int]]

    @classmethod
    def from_ids(cls, group_ids: torch.Tensor) -> Groups:
        members: dict[int, list[int]] = {}
        for row, group in enumerate(group_ids.tolist()):
            members.setdefault(group, []).append(row)
        return cls(list(members.values()))

    @property
    def representatives(self) -> list[int]:
        return [rows[0] for rows in self.members]

    @property
    def width(self) -> int:
        return max(len(rows) for rows in self.members)

    @property
    def rows(self) -> list[int]:
        """Every member row, group by group."""
        return [row for rows in self.members for row in rows]

    def chunks(self, batch_size: int | None, count: int = 1) -> list[Groups]:
        """Consecutive runs of whole groups of at most `batch_size` rows together, a group larger
        than that alone in its chunk; one chunk when `batch_size` is None, as in TRL's pass.

        Then, while there are fewer than `count` chunks, the largest is halved: its groups, or a
        lone group's rows (each half still rows of one prompt). Ranks holding different groups
        thus run the same number of forwards, which ZeRO-3's parameter gathers need."""
        if batch_size is None:
            parts = [list(self.members)]
        else:
            parts = []
            for rows in self.members:
                if parts and sum(map(len, parts[-1])) + len(rows) <= batch_size:
                    parts[-1].append(rows)
                else:
                    parts.append([rows])
        while len(parts) < count:
            largest = max(range(len(parts)), key=lambda index: sum(map(len, parts[index])))
            parts[largest : largest + 1] = _halves(parts[largest])
        return [Groups(members) for members in parts]


def _halves(chunk: list[list[int]]) -> list[list[list[int]]]:
    if len(chunk) > 1:
        middle = len(chunk) // 2
        return [chunk[:middle], chunk[middle:]]
    rows = chunk[0]
    if len(rows) < 2:
        raise ValueError("a chunk of one row cannot be split further")
    middle = len(rows) // 2
    return [[rows[:middle]], [rows[middle:]]]


@dataclass
class Layout:
    """The grouped sequences and what the model needs to run them."""

    input_ids: torch.Tensor  # (G, L)
    position_ids: torch.Tensor  # (3, G, L)
    shift_labels: torch.Tensor  # (G, L): the token each position predicts, or IGNORE
    token_types: torch.Tensor  # (G, L): 1 image, 2 video, 0 text
    attention: GroupLayout  # where the prefix and the segments lie, for the attention

    @property
    def prefix_length(self) -> int:
        return self.attention.prefix_length

    @property
    def completion_length(self) -> int:
        return self.attention.segment_length - 1


def prompts_are_shared(prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, groups: Groups) -> bool:
    """Whether every row holds exactly its group representative's prompt (a guard: grouping
    comes from the rollout order, and a mismatch would silently score the wrong prompt)."""
    for rows in groups.members:
        first = rows[0]
        for row in rows[1:]:
            if not (
                torch.equal(prompt_ids[row], prompt_ids[first])
                and torch.equal(prompt_mask[row], prompt_mask[first])
            ):
                return False
    return True


def build_layout(
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    completion_ids: torch.Tensor,
    completion_mask: torch.Tensor,
    prompt_positions: torch.Tensor,
    token_types: torch.Tensor,
    groups: Groups,
    pad_token_id: int,
) -> Layout:
    """Lays out each group as one sequence (see the module docstring).

    `groups` index rows of the full batch; `prompt_positions` are the representatives' rotary
    positions (3, G, P) as the model computes them for the prompt alone, `token_types` their
    prompt token types (G, P). The attention excludes padding by position alone, so prompts must
    be left-padded and completions right-padded (TRL's layout); anything else raises."""
    _require_padding(prompt_mask[groups.rows], completion_mask[groups.rows])
    device = prompt_ids.device
    reps = groups.representatives
    count, width = len(reps), groups.width
    prefix = prompt_ids.size(1) - 1
    completion = completion_ids.size(1)
    segment = completion + 1
    length = prefix + width * segment

    ids = torch.full((count, length), pad_token_id, dtype=prompt_ids.dtype, device=device)
    labels = torch.full((count, length), IGNORE, dtype=torch.long, device=device)
    positions = torch.zeros((3, count, length), dtype=prompt_positions.dtype, device=device)
    types = torch.zeros((count, length), dtype=token_types.dtype, device=device)

    ids[:, :prefix] = prompt_ids[reps, :prefix]
    positions[:, :, :prefix] = prompt_positions[:, :, :prefix]
    types[:, :prefix] = token_types[:, :prefix]
    last_position = prompt_positions[:, :, prefix]  # (3, G)
    steps = torch.arange(1, completion + 1, device=device)
    for slot in range(width):
        start = prefix + slot * segment
        positions[:, :, start] = last_position
        positions[:, :, start + 1 : start + segment] = last_position[..., None] + steps
        for group, rows in enumerate(groups.members):
            if slot >= len(rows):
                continue
            row = rows[slot]
            ids[group, start] = prompt_ids[row, prefix]
            ids[group, start + 1 : start + segment] = completion_ids[row]
            scored = completion_mask[row].bool()
            labels[group, start : start + completion] = torch.where(
                scored, completion_ids[row], torch.full_like(completion_ids[row], IGNORE)
            )
    padding = (prompt_mask[reps, :prefix] == 0).sum(dim=1).tolist()
    attention = GroupLayout(prefix, segment, width, tuple(padding))
    return Layout(ids, positions, labels, types, attention)


def _require_padding(prompt_mask: torch.Tensor, completion_mask: torch.Tensor) -> None:
    """Prompts padded on the left only, with a real last token; completions on the right only."""
    if not bool((prompt_mask[:, 1:] >= prompt_mask[:, :-1]).all() and prompt_mask[:, -1].all()):
        raise ValueError("the grouped pass needs left-padded prompts")
    if not bool((completion_mask[:, 1:] <= completion_mask[:, :-1]).all()):
        raise ValueError("the grouped pass needs right-padded completions")


def gather_rows(per_position: torch.Tensor, layout: Layout, groups: Groups) -> torch.Tensor:
    """(rows, C): the values at each row's completion positions, rows in `groups.rows` order."""
    prefix, completion = layout.prefix_length, layout.completion_length
    picked = [
        per_position[group, prefix + slot * (completion + 1) :][:completion]
        for group, members in enumerate(groups.members)
        for slot in range(len(members))
    ]
    return torch.stack(picked)


MEDIA_KEYS = ("pixel_values", "image_grid_thw")


def select_media(
    forward_kwargs: dict[str, Any], num_images: list[int] | None, reps: list[int]
) -> dict[str, Any]:
    """TRL's per-row image tensors (`pixel_values` rows split by `image_grid_thw` and
    `num_images`) for the representative rows only. Any other per-row input TRL might pass
    raises: handed on whole, it would reach a chunk that holds other rows."""
    selected = {key: value for key, value in forward_kwargs.items() if value is not None}
    unknown = sorted(set(selected) - set(MEDIA_KEYS))
    if unknown:
        raise ValueError(f"the grouped pass cannot split {unknown} by row")
    pixels, grids = selected.get("pixel_values"), selected.get("image_grid_thw")
    if pixels is None and grids is None:
        return selected
    if pixels is None or grids is None or num_images is None:
        raise ValueError("images need pixel_values, image_grid_thw and num_images together")
    rows_per_image = grids.prod(dim=-1).tolist()
    image_parts = list(torch.split(grids, num_images))
    pixel_counts, start = [], 0
    for count in num_images:
        pixel_counts.append(int(sum(rows_per_image[start : start + count])))
        start += count
    pixel_parts = list(torch.split(pixels, pixel_counts))
    return {
        "pixel_values": torch.cat([pixel_parts[row] for row in reps]),
        "image_grid_thw": torch.cat([image_parts[row] for row in reps]),
    }


def rope_module(model: Any) -> Any:
    """The module that computes the model's 3-D rotary positions (`get_rope_index`, in every
    family of `mmcritic.models.families`), found through whatever wraps the model (accelerate,
    DeepSpeed, PEFT)."""
    seen, frontier = set(), [model]
    while frontier:
        module = frontier.pop(0)
        if id(module) in seen or module is None:
            continue
        seen.add(id(module))
        if hasattr(module, "get_rope_index"):
            return module
        frontier += [getattr(module, name, None) for name in ("module", "base_model", "model")]
    raise ValueError("the model has no get_rope_index: shared-prefix passes need a Qwen-VL model")


class SharedPrefixMixin:
    """The grouped pass inside `trl.GRPOTrainer._get_per_token_logps_and_entropies`.

    The trainer sets `_prompt_groups` (one id per row, rows of one prompt sharing it) around
    every pass; `_shared_prefix_logps` then runs the grouped layout through the model and
    returns what TRL's pass returns: per-token log-probs, entropies, no auxiliary loss."""

    shared_prefix: bool = False
    _prompt_groups: torch.Tensor | None = None
    # set while a pass reads the policy's hidden states (`mmcritic.train.rollout_states`)
    _rollout_states: Any = None

    def _can_share_prefix(
        self, attention_mask: torch.Tensor, logits_to_keep: int, kwargs: dict[str, Any]
    ) -> bool:
        """Whether the grouped pass runs: asked for, groups known for these rows, and cheaper
        than the standard pass over all ranks together (`mmcritic.train.prefix_sharing`), so
        every rank takes the same pass."""
        if not self.shared_prefix or self._prompt_groups is None or kwargs.get("compute_aux_loss"):
            return False
        config = self.accelerator.unwrap_model(self.model).config
        rows, length = attention_mask.shape
        widths = LayerWidths.of(config)
        shared = math.inf
        if len(self._prompt_groups) == rows:
            sizes = [len(members) for members in Groups.from_ids(self._prompt_groups).members]
            shared = shared_cost(widths, sizes, length - logits_to_keep - 1, logits_to_keep)
        standard = standard_cost(widths, rows, length)
        return cheaper_on_every_rank(shared, standard, self.accelerator)

    def _shared_prefix_logps(
        self,
        model: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        logits_to_keep: int,
        batch_size: int | None = None,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None, None]:
        groups = Groups.from_ids(self._prompt_groups)
        prompt_length = input_ids.size(1) - logits_to_keep
        if not prompts_are_shared(
            input_ids[:, :prompt_length], attention_mask[:, :prompt_length], groups
        ):
            raise ValueError("rows grouped as one prompt hold different prompts")
        compute_entropy = bool(kwargs.pop("compute_entropy", False))
        num_images = kwargs.pop("num_images", None)
        for unused in ("mm_token_type_ids", "token_type_ids", "compute_aux_loss"):
            kwargs.pop(unused, None)
        logps, entropies, tokens = [], [], 0
        chunks = groups.chunks(batch_size)
        for chunk in groups.chunks(batch_size, most_on_any_rank(len(chunks), self.accelerator)):
            media = select_media(kwargs, num_images, chunk.representatives)
            layout, outputs = self._grouped_forward(
                model, input_ids, attention_mask, logits_to_keep, chunk, media
            )
            tokens += layout.input_ids.numel()
            logps.append(gather_rows(outputs.log_probs, layout, chunk))
            if compute_entropy:
                entropies.append(gather_rows(outputs.entropy, layout, chunk))
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["shared_prefix/token_fraction"].append(tokens / input_ids.numel())
        order = torch.argsort(torch.tensor(groups.rows, device=input_ids.device))
        return (
            torch.cat(logps)[order],
            torch.cat(entropies)[order] if compute_entropy else None,
            None,
        )

    def _grouped_forward(
        self,
        model: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        logits_to_keep: int,
        groups: Groups,
        media: dict[str, Any],
    ) -> tuple[Layout, Any]:
        """One forward of `groups` (rows of the full batch) laid out as grouped sequences;
        `media` are TRL's image inputs of the representatives, replaced by each row's own media
        when the batch holds videos."""
        from mmcritic.train.media_rollout import collate, token_types

        reps = groups.representatives
        prompt_length = input_ids.size(1) - logits_to_keep
        prompt_ids, prompt_mask = input_ids[:, :prompt_length], attention_mask[:, :prompt_length]
        if self._media_rows is not None:
            media = collate([self._media_rows[row] for row in reps], input_ids.device)
        types = token_types(prompt_ids[reps], *self._media_token_ids)
        family = family_of(self.accelerator.unwrap_model(model).config)
        with torch.no_grad():
            positions, _ = rope_module(model).get_rope_index(
                prompt_ids[reps],
                image_grid_thw=media.get("image_grid_thw"),
                video_grid_thw=media.get("video_grid_thw"),
                attention_mask=prompt_mask[reps],
                mm_token_type_ids=types,
                **{key: media.get(key) for key in family.rope_media_keys},
            )
        layout = build_layout(
            prompt_ids,
            prompt_mask,
            input_ids[:, prompt_length:],
            attention_mask[:, prompt_length:],
            positions,
            types,
            groups,
            self._tokenizer.pad_token_id,
        )
        if self._rollout_states is not None:
            self._rollout_states.expect_grouped(
                lambda hidden: (groups.rows, gather_rows(hidden, layout, groups))
            )
        with (
            self.accelerator.autocast(),
            grouped_attention(self.accelerator.unwrap_model(model), layout.attention),
        ):
            outputs = model(
                input_ids=layout.input_ids,
                position_ids=layout.position_ids,
                mm_token_type_ids=layout.token_types,
                shift_labels=layout.shift_labels,
                fused_lm_head=True,
                use_cache=False,
                **media,
            )
        return layout, outputs
