"""A row scored in a left-padded batch gets the log-probs it gets alone, through TRL's own scoring
pass and through the shared-prefix pass, with the processor and the rollout inputs the trainer
really builds (`load_processor`, `_generate_and_score_completions`).

Qwen2.5-VL places image tokens in its 3-D rotary positions by their token types. TRL left-pads
the prompt ids but took the token types from a processor call that pads on the tokenizer's side,
so every row shorter than its batch's longest was scored with its image in the wrong place."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from mmcritic.data.dataset import read_records
from mmcritic.data.synth import synthesize
from mmcritic.models.loading import load_processor
from mmcritic.models.published import released_widths
from mmcritic.models.tiny import build_tiny_model
from mmcritic.train.config import load_recipe
from mmcritic.train.examples import to_dataset
from mmcritic.train.media_rollout import token_types
from mmcritic.train.run import make_trainer
from mmcritic_dev.quickstart import ONE_ORDER

RECIPE = Path(__file__).parents[1] / "recipes" / "quickstart_cpu.yaml"
GENERATIONS = 2
# words added to one prompt so the batch's rows differ in length by tens of tokens
PADDING_WORDS = " Look again at the colour of the shape before you answer." * 3


@pytest.fixture(scope="module")
def uneven_records(tmp_path_factory):
    """Two color-task records whose prompts differ in length by tens of tokens."""
    folder = tmp_path_factory.mktemp("uneven")
    synthesize("color", 2, folder, seed=4, overwrite=True)
    short, long = read_records(folder)[:2]
    long = copy.deepcopy(long)
    text = next(part for part in long.prompt[-1]["content"] if part["type"] == "text")
    text["text"] += PADDING_WORDS
    return folder, [short, long]


def _trainer(model_dir: Path, data: Path, records, out: Path, shared: bool):
    recipe = load_recipe(
        RECIPE,
        [
            f"output_dir={out}",
            f"model.name_or_path={model_dir}",
            f"data.train={data}",
            "data.eval=null",
            "report_to=[]",
            f"grpo.num_generations={GENERATIONS}",
            "grpo.max_completion_length=6",
            *ONE_ORDER,
            f"grpo.shared_prefix={str(shared).lower()}",
            f"optim.per_device_train_batch_size={GENERATIONS * len(records)}",
        ],
    )
    processor = load_processor(str(model_dir), recipe.data.media_budget)
    dataset = to_dataset(records, recipe.data.media_budget)
    return make_trainer(recipe, processor, dataset)


def _score(trainer, ids, mask, completion_width, **media):
    with torch.no_grad():
        logps, _, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model, ids, mask, completion_width, **media
        )
    return logps


def _rollout_scored_in_batch_and_alone(trainer, *, shared: bool):
    """(log-probs of every row scored in its left-padded batch, the same rows scored one by
    one without padding, completion mask), from one real rollout."""
    rows = [trainer.train_dataset[i] for i in range(2) for _ in range(GENERATIONS)]
    torch.manual_seed(0)
    rollout = trainer._generate_and_score_completions(rows)
    prompt_ids, prompt_mask = rollout["prompt_ids"], rollout["prompt_mask"]
    completion_ids, completion_mask = rollout["completion_ids"], rollout["completion_mask"]
    assert prompt_mask.min() == 0, "the batch must hold prompts of different lengths"
    ids = torch.cat([prompt_ids, completion_ids], dim=1)
    mask = torch.cat([prompt_mask, completion_mask], dim=1)
    width = completion_ids.size(1)
    media_keys = ("pixel_values", "image_grid_thw", "num_images", "mm_token_type_ids")
    media = {key: rollout[key] for key in media_keys}
    trainer._prompt_groups = rollout["prompt_group"] if shared else None
    batch = _score(trainer, ids, mask, width, **media)
    trainer._prompt_groups = None
    alone = torch.zeros_like(batch)
    per_image = torch.split(rollout["pixel_values"], rollout["image_grid_thw"].prod(-1).tolist())
    special = (trainer._image_pad_token_id, trainer._video_pad_token_id)
    for row in range(ids.size(0)):
        row_ids = torch.cat([prompt_ids[row][prompt_mask[row].bool()], completion_ids[row]])[None]
        row_mask = torch.cat([torch.ones_like(row_ids[:, :-width]), completion_mask[row][None]], 1)
        alone[row] = _score(
            trainer,
            row_ids,
            row_mask,
            width,
            pixel_values=per_image[row],
            image_grid_thw=rollout["image_grid_thw"][row : row + 1],
            num_images=[1],
            mm_token_type_ids=token_types(row_ids, *special),
        )[0]
    return batch, alone, completion_mask.bool()


def _assert_rows_score_as_alone(model_dir, uneven_records, tmp_path, shared):
    data, records = uneven_records
    trainer = _trainer(model_dir, data, records, tmp_path, shared)
    trainer.model.float()
    batch, alone, scored = _rollout_scored_in_batch_and_alone(trainer, shared=shared)
    assert scored.sum() > 0 and alone[scored].abs().sum() > 0, "nothing was scored"
    difference = (batch - alone)[scored].abs().max().item()
    assert difference < 1e-5, f"a left-padded row scores {difference:.2e} nats off"


@pytest.mark.parametrize("shared", [False, True], ids=["trl_pass", "shared_pass"])
def test_left_padded_rows_score_as_they_do_alone(tiny_model_dir, uneven_records, tmp_path, shared):
    _assert_rows_score_as_alone(tiny_model_dir, uneven_records, tmp_path, shared)


@pytest.fixture(scope="module")
def seven_b_width_model(tmp_path_factory) -> Path:
    spec = released_widths("qwen2.5-vl-7b")
    return build_tiny_model(tmp_path_factory.mktemp("qwen2_5_vl_7b_widths"), spec)


@pytest.mark.slow
@pytest.mark.parametrize("shared", [False, True], ids=["trl_pass", "shared_pass"])
def test_left_padded_rows_score_as_alone_at_7b_widths(
    seven_b_width_model, uneven_records, tmp_path, shared
):
    _assert_rows_score_as_alone(seven_b_width_model, uneven_records, tmp_path, shared)
