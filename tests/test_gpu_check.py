"""The GPU check (`benchmarks/gpu_check.py`): the released Qwen2.5-VL shapes it builds, the
log-prob agreement it enforces, and the whole check on the CPU at one layer (slow)."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from mmcritic.data.dataset import read_records
from mmcritic.data.synth import synthesize
from mmcritic.models.loading import load_processor
from mmcritic.models.published import PUBLISHED, published_config, special_blocks
from mmcritic.models.tiny import TinyModelSpec, build_tiny_processor
from mmcritic.train.config import load_recipe
from mmcritic.train.examples import to_dataset
from mmcritic.train.run import make_trainer
from mmcritic_dev.gpu_check import LOGPROB_TOLERANCE, logprob_agreement
from mmcritic_dev.quickstart import ONE_ORDER

ROOT = Path(__file__).parents[1]
GENERATIONS = 2
SUMMARY = re.compile(
    r"model=qwen2\.5-vl-3b layers=1 shared_prefix=(on|off) step_s=\d+\.\d{3} "
    r"tokens_per_s=\d+\.\d peak_mem_gib=\d+\.\d{2} mfu=na"
)


@pytest.mark.parametrize(
    ("name", "parameters"),
    # the totals of the released safetensors (Qwen/Qwen2-VL-7B-Instruct, Qwen2.5-VL-3B-Instruct,
    # -7B-Instruct, Qwen3-VL-8B-Instruct)
    [
        ("qwen2-vl-7b", 8_291_375_616),
        ("qwen2.5-vl-3b", 3_754_622_976),
        ("qwen2.5-vl-7b", 8_292_166_656),
        ("qwen3-vl-8b", 8_767_123_696),
    ],
)
def test_published_shapes_have_the_released_parameter_counts(name, parameters):
    family = PUBLISHED[name].model_family
    tokenizer = build_tiny_processor(TinyModelSpec(family=family.name)).tokenizer
    with torch.device("meta"):
        model = family.model_type_class()._from_config(published_config(name, tokenizer))
    assert sum(p.numel() for p in model.parameters()) == parameters


def test_a_cut_vision_tower_keeps_each_kind_of_block():
    qwen2_5, qwen3 = PUBLISHED["qwen2.5-vl-7b"], PUBLISHED["qwen3-vl-8b"]
    assert special_blocks(qwen2_5, 32) == [7, 15, 23, 31]
    assert special_blocks(qwen2_5, 16) == [7, 15]
    assert special_blocks(qwen2_5, 2) == [1]
    assert special_blocks(qwen3, 27) == [8, 16, 24]
    assert special_blocks(qwen3, 12) == [8]
    assert special_blocks(qwen3, 2) == [1]
    assert special_blocks(PUBLISHED["qwen2-vl-7b"], 2) == []


def test_a_cut_vocabulary_must_hold_the_tokenizer():
    tokenizer = build_tiny_processor(TinyModelSpec()).tokenizer
    config = published_config("qwen2.5-vl-7b", tokenizer, 1, 1, len(tokenizer))
    assert config.get_text_config().vocab_size == len(tokenizer)
    with pytest.raises(ValueError, match="smaller than the tokenizer"):
        published_config("qwen2.5-vl-7b", tokenizer, 1, 1, len(tokenizer) - 1)


@pytest.fixture(scope="module")
def uneven_rollout(tiny_model_dir, tmp_path_factory):
    """A tiny-model trainer and one real rollout of two prompts tens of tokens apart."""
    folder = tmp_path_factory.mktemp("uneven")
    synthesize("color", 2, folder, seed=4, overwrite=True)
    short, long = read_records(folder)
    long = copy.deepcopy(long)
    text = next(part for part in long.prompt[-1]["content"] if part["type"] == "text")
    text["text"] += " Look again at the colour of the shape before you answer." * 3
    recipe = load_recipe(
        ROOT / "recipes" / "quickstart_cpu.yaml",
        [
            f"output_dir={folder / 'run'}",
            f"model.name_or_path={tiny_model_dir}",
            f"data.train={folder}",
            "data.eval=null",
            "report_to=[]",
            f"grpo.num_generations={GENERATIONS}",
            "grpo.max_completion_length=6",
            *ONE_ORDER,
            f"optim.per_device_train_batch_size={2 * GENERATIONS}",
        ],
    )
    budget = recipe.data.media_budget
    processor = load_processor(str(tiny_model_dir), budget)
    trainer = make_trainer(recipe, processor, to_dataset([short, long], budget))
    rows = [trainer.train_dataset[i] for i in range(2) for _ in range(GENERATIONS)]
    torch.manual_seed(0)
    return trainer, trainer._generate_and_score_completions(rows)


def test_rows_of_a_real_rollout_score_as_they_do_alone(uneven_rollout):
    trainer, rollout = uneven_rollout
    agreement = logprob_agreement(trainer, rollout)
    assert agreement["left_padded_rows"] == GENERATIONS
    assert agreement["tokens"] > 0
    assert agreement["max_abs_diff"] <= LOGPROB_TOLERANCE[torch.float32]


def test_image_tokens_misplaced_by_the_padding_fail_the_agreement(uneven_rollout):
    """Reference log-probs of the batch as TRL's own pass computes them when each row's token
    types are padded on the right while its ids are padded on the left (the image shifted by
    the padding, the upstream bug the trainer now guards against): far off."""
    from trl import GRPOTrainer

    trainer, rollout = uneven_rollout
    ids = torch.cat([rollout["prompt_ids"], rollout["completion_ids"]], 1)
    mask = torch.cat([rollout["prompt_mask"], rollout["completion_mask"]], 1)
    pads = (rollout["prompt_mask"] == 0).sum(1).tolist()
    types = rollout["mm_token_type_ids"]
    shifted = torch.stack([row.roll(-pad) for row, pad in zip(types, pads, strict=True)])
    with torch.no_grad():
        wrong, _, _ = GRPOTrainer._get_per_token_logps_and_entropies(
            trainer,
            trainer.ref_model,
            ids,
            mask,
            rollout["completion_ids"].size(1),
            pixel_values=rollout["pixel_values"],
            image_grid_thw=rollout["image_grid_thw"],
            num_images=rollout["num_images"],
            mm_token_type_ids=shifted,
        )
    agreement = logprob_agreement(trainer, {**rollout, "ref_per_token_logps": wrong})
    assert agreement["max_abs_diff"] > 10 * LOGPROB_TOLERANCE[torch.float32]


@pytest.mark.slow
def test_the_recipe_trains_at_released_shapes_and_padded_rows_score_as_alone(tmp_path):
    """The 3B's shapes at one language layer, shared prefix on then off, on one thread."""
    results_file = tmp_path / "results.json"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "gpu_check.py"),
            "--threads",
            "1",
            "--work",
            str(tmp_path / "work"),
            "--json",
            str(results_file),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    last_lines = run.stdout.strip().splitlines()[-2:]
    assert [SUMMARY.fullmatch(line).group(1) for line in last_lines] == ["on", "off"]
    results = json.loads(results_file.read_text())
    for result in results:
        agreement = result["logprob_agreement"]
        assert agreement["left_padded_rows"] > 0 and len(agreement["prompt_lengths"]) > 1
        assert agreement["max_abs_diff"] <= agreement["tolerance"] == 1e-3
        # Adam moves every weight with a gradient; weight decay alone at lr 1e-6 rounds away
        assert result["weights_changed_fraction"] > 0.5
        assert result["logged"]["grad_norm"] > 0
    assert results[0]["logged"]["shared_prefix/token_fraction"] < 1
    assert "shared_prefix/token_fraction" not in results[1]["logged"]
