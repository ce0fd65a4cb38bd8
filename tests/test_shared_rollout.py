"""Rollouts do each prompt's image work and prefill once per group and still sample exactly what
the standard path samples: the tiny Qwen2.5-VL's own generate with and without the sharing."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from PIL import Image

from mmcritic.data.dataset import read_records
from mmcritic.data.synth import synthesize
from mmcritic.models.generation import encode_batch
from mmcritic.train import shared_rollout
from mmcritic.train.examples import MediaLoader
from mmcritic.train.media_rollout import collate, encode_prompts
from mmcritic.train.shared_rollout import group_sizes, shared_prefill, unique_image_processing
from tests.test_shared_prefix import trainer_for

COPIES = 3


@pytest.fixture
def prefills(monkeypatch) -> list[int]:
    """The number of rows each shared prefill ran over, recorded as the real one runs."""
    calls: list[int] = []
    real = shared_rollout._generate_from_shared_prefill

    def spy(model, standard, sizes, *args, **kwargs):
        calls.append(len(sizes))
        return real(model, standard, sizes, *args, **kwargs)

    monkeypatch.setattr(shared_rollout, "_generate_from_shared_prefill", spy)
    return calls


@pytest.fixture(scope="module")
def color_set(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("rollout_color")
    synthesize("color", 4, folder, seed=5, overwrite=True)
    return folder


@pytest.fixture(scope="module")
def motion_set(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("rollout_motion")
    synthesize("motion", 2, folder, seed=3, overwrite=True)
    return folder


def _pictures() -> list[Image.Image]:
    """Three distinct images of different sizes (so different grids)."""
    sizes = ((56, 56), (112, 84), (84, 140))
    return [
        Image.new("RGB", size, (40 * index, 200 - 50 * index, 90))
        for index, size in enumerate(sizes)
    ]


def test_each_distinct_image_is_processed_once_with_the_processors_output(
    tiny_model_and_processor,
):
    _, processor = tiny_model_and_processor
    first, second, third = _pictures()
    equal_copy = second.copy()  # another object with the same pixels
    batch = [first, second, first, third, equal_copy, second]
    expected = processor.image_processor(images=batch, return_tensors="pt")
    with unique_image_processing(processor) as stand_in:
        got = processor.image_processor(images=batch, return_tensors="pt")
        assert stand_in.images_processed == 3
        again = processor.image_processor(images=[[third], [first]], return_tensors="pt")
        assert stand_in.images_processed == 3, "a repeated call processed images again"
    assert type(processor.image_processor).__name__ != "UniqueImages", "stand-in left behind"
    torch.testing.assert_close(got["pixel_values"], expected["pixel_values"], atol=0, rtol=0)
    assert torch.equal(got["image_grid_thw"], expected["image_grid_thw"])
    plain = processor.image_processor(images=[third, first], return_tensors="pt")
    torch.testing.assert_close(again["pixel_values"], plain["pixel_values"], atol=0, rtol=0)


def _generate(model, inputs, sizes, shared: bool, sample: bool):
    from transformers import GenerationConfig

    config = GenerationConfig(
        max_new_tokens=10,
        do_sample=sample,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        return_dict_in_generate=True,
        output_scores=True,
        pad_token_id=model.generation_config.pad_token_id,
        eos_token_id=model.generation_config.eos_token_id,
    )
    torch.manual_seed(11)
    if not shared:
        return model.generate(**inputs, generation_config=config)
    with shared_prefill(model, sizes, *_media_token_ids(model)):
        return model.generate(**inputs, generation_config=config)


def _media_token_ids(model) -> tuple[int, int]:
    return model.config.image_token_id, model.config.video_token_id


def _assert_same_generation(standard, shared):
    assert torch.equal(shared.sequences, standard.sequences)
    for step_a, step_b in zip(standard.scores, shared.scores, strict=True):
        finite = torch.isfinite(step_a)
        assert torch.equal(finite, torch.isfinite(step_b))
        torch.testing.assert_close(step_b[finite], step_a[finite], atol=1e-4, rtol=1e-4)


def _repeated(encoded, sizes: list[int]) -> dict[str, torch.Tensor]:
    rows = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    grids = encoded["image_grid_thw"]
    per_image = torch.split(encoded["pixel_values"], grids.prod(-1).tolist())
    return {
        "input_ids": encoded["input_ids"][rows],
        "attention_mask": encoded["attention_mask"][rows],
        "mm_token_type_ids": encoded["mm_token_type_ids"][rows],
        "pixel_values": torch.cat([per_image[row] for row in rows.tolist()]),
        "image_grid_thw": grids[rows],
    }


@pytest.mark.parametrize("sample", [False, True], ids=["greedy", "sampled"])
def test_shared_prefill_samples_what_the_standard_generate_samples(
    tiny_model_and_processor, color_set, sample, prefills
):
    model, processor = tiny_model_and_processor
    records = read_records(color_set)[:3]
    # the prompts differ in length, so rows are left-padded; the groups differ in size
    records[1].prompt[0]["content"][1]["text"] += " Answer briefly, please."
    pictures = _pictures()
    encoded = encode_batch(processor, [r.prompt for r in records], [[p] for p in pictures], None)
    sizes = [COPIES, 1, COPIES + 1]
    inputs = _repeated(encoded, sizes)
    assert inputs["attention_mask"].min() == 0, "no left padding in the batch"
    standard = _generate(model, inputs, sizes, shared=False, sample=sample)
    shared = _generate(model, inputs, sizes, shared=True, sample=sample)
    assert prefills == [3]
    _assert_same_generation(standard, shared)


def test_shared_prefill_on_videos_and_images_in_one_batch(
    tiny_model_and_processor, color_set, motion_set, prefills
):
    model, processor = tiny_model_and_processor
    records = read_records(motion_set)[:2] + read_records(color_set)[:1]
    from mmcritic.data.media import MediaBudget

    media = MediaLoader(MediaBudget()).load_records(records)
    encoded = encode_prompts(
        processor, [r.prompt for r in records], media["images"], media["videos"]
    ).repeated([COPIES] * len(records))
    width = max(len(ids) for ids in encoded.prompt_ids)
    pad = processor.tokenizer.pad_token_id
    inputs = {
        "input_ids": torch.tensor([[pad] * (width - len(x)) + x for x in encoded.prompt_ids]),
        "attention_mask": torch.tensor(
            [[0] * (width - len(x)) + [1] * len(x) for x in encoded.prompt_ids]
        ),
        "mm_token_type_ids": torch.tensor(
            [[0] * (width - len(x)) + x for x in encoded.generation_fields["mm_token_type_ids"]]
        ),
        **collate(encoded.rows, torch.device("cpu")),
    }
    assert "pixel_values_videos" in inputs and "pixel_values" in inputs
    sizes = [COPIES] * len(records)
    standard = _generate(model, inputs, sizes, shared=False, sample=True)
    shared = _generate(model, inputs, sizes, shared=True, sample=True)
    assert prefills == [len(records)]
    _assert_same_generation(standard, shared)


def test_rows_that_are_not_one_prompt_are_generated_the_standard_way(
    tiny_model_and_processor, color_set, prefills
):
    model, processor = tiny_model_and_processor
    records = read_records(color_set)[:2]
    encoded = encode_batch(
        processor, [r.prompt for r in records], [[p] for p in _pictures()[:2]], None
    )
    inputs = _repeated(encoded, [1, 1])
    standard = _generate(model, inputs, [2], shared=False, sample=True)
    shared = _generate(model, inputs, [2], shared=True, sample=True)  # claims one group of 2
    assert prefills == []
    _assert_same_generation(standard, shared)


def test_group_sizes_are_runs_of_one_id():
    assert group_sizes(torch.tensor([4, 4, 4, 5, 5, 9])) == [3, 2, 1]
    assert group_sizes(torch.tensor([4, 5, 4])) is None


@pytest.mark.parametrize("task", ["color", "motion"])
def test_trainer_rollout_with_shared_prompt_work_equals_the_standard_rollout(
    tiny_model_dir, color_set, motion_set, tmp_path, task, prefills
):
    data = color_set if task == "color" else motion_set
    rollouts = []
    for shared in (False, True):
        trainer, _ = trainer_for(
            tiny_model_dir,
            data,
            tmp_path / str(shared),
            f"grpo.num_generations={COPIES}",
            f"optim.per_device_train_batch_size={2 * COPIES}",
            f"grpo.shared_prefix={str(shared).lower()}",
        )
        dataset = trainer.train_dataset
        rows = [dataset[index] for index in (0, 0, 0, 1, 1, 1)]
        torch.manual_seed(21)
        rollouts.append(trainer._generate_and_score_completions(rows))
        assert prefills == ([2] if shared else [])
    standard, shared = rollouts
    assert torch.equal(shared["completion_ids"], standard["completion_ids"])
    assert torch.equal(shared["prompt_ids"], standard["prompt_ids"])
    for key in ("pixel_values", "image_grid_thw"):
        if key in standard:
            assert torch.equal(shared[key], standard[key])
    if task == "motion":
        for row_a, row_b in zip(standard["media_rows"], shared["media_rows"], strict=True):
            assert torch.equal(row_a.pixel_values_videos, row_b.pixel_values_videos)
