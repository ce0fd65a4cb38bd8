"""Dynamic-sampling helpers on hand-built TRL rollout dicts."""

from __future__ import annotations

import torch

from mmcritic.train.dynamic_sampling import concat_rollouts, informative_groups, select_rows

PAD = 0


def rollout(prompt_len: int, completion_len: int, tags: list[int]) -> dict:
    """A rollout of len(tags) samples, one 2x2-grid image each; tags mark every tensor row."""
    n = len(tags)
    tag = torch.tensor(tags, dtype=torch.long).unsqueeze(1)
    return {
        "prompt_ids": tag.repeat(1, prompt_len),
        "prompt_mask": torch.ones(n, prompt_len, dtype=torch.long),
        "completion_ids": tag.repeat(1, completion_len),
        "completion_mask": torch.ones(n, completion_len, dtype=torch.long),
        "advantages": tag.squeeze(1).float(),
        "num_items_in_batch": torch.tensor(n * completion_len),
        "pixel_values": tag.repeat_interleave(4, dim=0).float().repeat(1, 3),
        "image_grid_thw": torch.tensor([[1, 2, 2]] * n),
        "mm_token_type_ids": torch.zeros(n, prompt_len + completion_len, dtype=torch.long),
        "num_images": [1] * n,
    }


def test_all_equal_group_is_marked_uninformative():
    rewards = torch.tensor([1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.5, 0.5, 0.5])
    assert informative_groups(rewards, 3).tolist() == [False] * 3 + [True] * 3 + [False] * 3


def test_selecting_rows_keeps_their_images():
    selected = select_rows(rollout(3, 2, [10, 11, 12, 13]), [1, 3])
    assert selected["prompt_ids"][:, 0].tolist() == [11, 13]
    assert selected["pixel_values"][:, 0].tolist() == [11.0] * 4 + [13.0] * 4
    assert selected["image_grid_thw"].shape == (2, 3) and selected["num_images"] == [1, 1]
    assert "num_items_in_batch" not in selected


def test_rounds_of_different_lengths_are_repadded_on_the_right_sides():
    joined = concat_rollouts([rollout(3, 2, [1, 2]), rollout(5, 4, [3])], pad_token_id=PAD)
    assert joined["prompt_ids"].shape == (3, 5) and joined["completion_ids"].shape == (3, 4)
    assert joined["prompt_ids"][0].tolist() == [PAD, PAD, 1, 1, 1]
    assert joined["prompt_mask"][0].tolist() == [0, 0, 1, 1, 1]
    assert joined["completion_ids"][0].tolist() == [1, 1, PAD, PAD]
    assert joined["completion_mask"][0].tolist() == [1, 1, 0, 0]
    assert joined["mm_token_type_ids"].shape == (3, 9)
    assert joined["advantages"].tolist() == [1.0, 2.0, 3.0]
    assert joined["pixel_values"].shape[0] == 12 and joined["num_images"] == [1, 1, 1]
