"""The grouped (shared-prompt) log-prob pass gives the standard pass's log-probs, entropies and
gradients, on the tiny Qwen2.5-VL with images, videos, padding and shuffled rows."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from mmcritic.data.dataset import read_records
from mmcritic.data.media import MediaBudget
from mmcritic.data.synth import synthesize
from mmcritic.models.generation import encode_batch
from mmcritic.train.config import load_recipe
from mmcritic.train.examples import MediaLoader, to_dataset
from mmcritic.train.media_rollout import encode_prompts, token_types
from mmcritic.train.run import make_trainer

RECIPE = Path(__file__).parents[1] / "recipes" / "quickstart_cpu.yaml"
GENERATIONS = 3


def trainer_for(model: Path, data: Path, out: Path, *overrides: str):
    """The quickstart recipe's trainer on `data`, groups of GENERATIONS unless overridden;
    returns it and the run's media budget."""
    from transformers import AutoProcessor

    recipe = load_recipe(
        RECIPE,
        [
            f"output_dir={out}",
            f"model.name_or_path={model}",
            f"data.train={data}",
            "data.eval=null",
            "report_to=[]",
            f"grpo.num_generations={GENERATIONS}",
            "optim.per_device_train_batch_size=12",
            *overrides,
        ],
    )
    budget = recipe.data.media_budget
    processor = AutoProcessor.from_pretrained(model)
    dataset = to_dataset(read_records(data), budget)
    trainer = make_trainer(recipe, processor, dataset)
    return trainer, budget


def _completions(rows: int, width: int, vocab: int, generator: torch.Generator):
    """Random completion tokens (no special ones), right-padded to uneven lengths."""
    ids = torch.randint(3, vocab - 20, (rows, width), generator=generator)
    lengths = torch.randint(2, width + 1, (rows,), generator=generator)
    mask = (torch.arange(width)[None] < lengths[:, None]).long()
    return ids.masked_fill(mask == 0, 0), mask


def _both_passes(trainer, ids, mask, width, groups, kwargs, media_rows=None, weights=None):
    """(log-probs, entropies, gradients) of the standard and of the grouped pass, each under
    the loss sum(log-prob * weight) over completion tokens (random weights by default)."""
    results = []
    if weights is None:
        weights = torch.randn(ids.size(0), width, generator=torch.Generator().manual_seed(7))
    for shared in (False, True):
        trainer.model.zero_grad()
        trainer.shared_prefix = shared
        trainer._prompt_groups = groups if shared else None
        trainer._media_rows = media_rows
        logps, entropies, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model, ids, mask, width, ids.size(0), compute_entropy=True, **dict(kwargs)
        )
        completion_mask = mask[:, -width:].to(logps.dtype)
        (logps * weights * completion_mask).sum().backward()
        grads = {
            name: p.grad.clone()
            for name, p in trainer.model.named_parameters()
            if p.grad is not None
        }
        results.append(
            (logps.detach() * completion_mask, entropies.detach() * completion_mask, grads)
        )
    trainer._media_rows = None
    return results


def _assert_same(standard, shared):
    (logps_a, ent_a, grads_a), (logps_b, ent_b, grads_b) = standard, shared
    assert logps_a.abs().sum() > 0, "nothing was scored"
    torch.testing.assert_close(logps_b, logps_a, atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(ent_b, ent_a, atol=2e-5, rtol=1e-4)
    assert set(grads_a) == set(grads_b)
    moved = [name for name, grad in grads_a.items() if grad.abs().sum() > 0]
    assert any("visual" in name for name in moved), "the vision tower got no gradient"
    for name in grads_a:
        torch.testing.assert_close(grads_b[name], grads_a[name], atol=1e-5, rtol=1e-3)


def _image_batch(trainer, budget: MediaBudget, data: Path, prompts: int, width: int, shuffle: bool):
    records = read_records(data)[:prompts]
    media = MediaLoader(budget).load_records(records)
    encoded = encode_batch(
        trainer.processing_class, [r.prompt for r in records], media["images"], None
    )
    repeat = torch.arange(prompts).repeat_interleave(GENERATIONS)
    prompt_ids, prompt_mask = encoded["input_ids"][repeat], encoded["attention_mask"][repeat]
    vocab = trainer.model.config.get_text_config().vocab_size
    completion, completion_mask = _completions(
        len(repeat), width, vocab, torch.Generator().manual_seed(3)
    )
    ids = torch.cat([prompt_ids, completion], dim=1)
    mask = torch.cat([prompt_mask, completion_mask], dim=1)
    grids = encoded["image_grid_thw"]
    per_image = torch.split(encoded["pixel_values"], grids.prod(-1).tolist())
    rows = repeat.tolist()
    if shuffle:  # rows of one prompt apart, as after TRL shuffles a generation batch
        order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(5))
        ids, mask, rows = ids[order], mask[order], [rows[i] for i in order.tolist()]
    kwargs = {
        "pixel_values": torch.cat([per_image[r] for r in rows]),
        "image_grid_thw": grids[rows],
        "num_images": [1] * len(rows),
        "mm_token_type_ids": token_types(
            ids, trainer._image_pad_token_id, trainer._video_pad_token_id
        ),
    }
    return ids, mask, torch.tensor(rows), kwargs


@pytest.fixture(scope="module")
def color_set(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("prefix_color")
    synthesize("color", 6, folder, seed=2, overwrite=True)
    return folder


@pytest.mark.parametrize("shuffle", [False, True], ids=["grouped", "shuffled"])
def test_grouped_pass_equals_the_standard_pass_on_images(
    tiny_model_dir, color_set, tmp_path, shuffle
):
    trainer, budget = trainer_for(tiny_model_dir, color_set, tmp_path)
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 4, 7, shuffle)
    assert mask[:, : ids.size(1) - 7].min() == 0, "prompts of different lengths: left padding"
    standard, shared = _both_passes(trainer, ids, mask, 7, groups, kwargs)
    _assert_same(standard, shared)


def test_grouped_pass_equals_the_standard_pass_on_videos(tiny_model_dir, tmp_path):
    data = tmp_path / "motion"
    synthesize("motion", 3, data, seed=1, overwrite=True)
    trainer, budget = trainer_for(tiny_model_dir, data, tmp_path / "run")
    records = read_records(data)
    media = MediaLoader(budget).load_records(records)
    encoded = encode_prompts(
        trainer.processing_class, [r.prompt for r in records], media["images"], media["videos"]
    )
    repeat = torch.arange(len(records)).repeat_interleave(GENERATIONS).tolist()
    width = max(len(ids) for ids in encoded.prompt_ids)
    pad = trainer._tokenizer.pad_token_id
    prompt_ids = torch.tensor([[pad] * (width - len(x)) + x for x in encoded.prompt_ids])[repeat]
    prompt_mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in encoded.prompt_ids])[
        repeat
    ]
    vocab = trainer.model.config.get_text_config().vocab_size
    completion, completion_mask = _completions(
        len(repeat), 6, vocab, torch.Generator().manual_seed(4)
    )
    ids, mask = torch.cat([prompt_ids, completion], 1), torch.cat([prompt_mask, completion_mask], 1)
    rows = [encoded.rows[r] for r in repeat]
    standard, shared = _both_passes(
        trainer, ids, mask, 6, torch.tensor(repeat), {}, media_rows=rows
    )
    _assert_same(standard, shared)


def test_in_float64_the_grouped_gradients_are_the_standard_ones_up_to_rounding(
    tiny_model_dir, color_set, tmp_path
):
    """GRPO-like weights (advantages that cancel within each group) in float64: the grouped
    pass's log-probs equal the standard pass's exactly and its gradients to 1e-6 relative,
    the rounding of TRL's log-prob head, which computes in float32 whatever the model's
    dtype. A wrong mask, position or gather would differ by orders of magnitude more."""
    trainer, budget = trainer_for(tiny_model_dir, color_set, tmp_path)
    trainer.model.to(torch.float64)
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 4, 7, shuffle=True)
    kwargs["pixel_values"] = kwargs["pixel_values"].to(torch.float64)
    advantages = torch.randn(ids.size(0), generator=torch.Generator().manual_seed(7))
    for group in groups.unique():
        advantages[groups == group] -= advantages[groups == group].mean()
    weights = advantages[:, None].to(torch.float64).expand(-1, 7)
    standard, shared = _both_passes(trainer, ids, mask, 7, groups, kwargs, weights=weights)
    assert torch.equal(shared[0], standard[0])
    flat = [
        torch.cat([grads[name].flatten() for name in sorted(grads)])
        for *_, grads in (standard, shared)
    ]
    assert (flat[1] - flat[0]).norm() <= 1e-6 * flat[0].norm()
