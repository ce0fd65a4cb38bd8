"""The log-prob and update passes at a released model's widths: shared prefix against standard.

A random-weight model of the released shapes (`mmcritic.models.published`, a few layers) makes
one real rollout through `CriticGRPOTrainer` on critic prompts of different lengths; the random
model writes to the length limit, so completions are long. The trainer's own
`_get_per_token_logps_and_entropies` then scores that batch again and again, as the old and
reference log-prob passes do (no gradient, in TRL's `batch_size` chunks) and as the update does
(forward and backward of one micro-batch), with the shared prefix on and off in turns (the order
alternating each round, the first round dropped), so a machine that slows down slows both.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from mmcritic.data.dataset import read_records
from mmcritic.data.synth import synthesize
from mmcritic.models.loading import load_processor
from mmcritic.models.published import build_published_model, published_config
from mmcritic.models.tiny import TinyModelSpec, build_tiny_processor
from mmcritic.train.config import load_recipe
from mmcritic.train.examples import to_dataset
from mmcritic.train.run import make_trainer
from mmcritic_dev.profiling import median_interval, ratio_interval
from mmcritic_dev.quickstart import ONE_ORDER

# a sentence of about eleven tokens; prompt i gets i x FILLER_STEP of them
FILLER = " Look again at the colour of the shape before you answer."
FILLER_STEP = 20


def race_passes(
    work: Path,
    recipe_path: Path,
    model: str,
    layers: int,
    prompts: int,
    n: int,
    completion: int,
    rounds: int,
) -> dict[str, Any]:
    """Seconds per pass (median, 95% interval) for each pass and mode, and shared / standard."""
    trainer = _trainer(work, recipe_path, model, layers, prompts, n, completion)
    rows = [trainer.train_dataset[index] for index in range(prompts) for _ in range(n)]
    torch.manual_seed(0)
    rollout = trainer._generate_and_score_completions(rows)
    seconds: dict[str, dict[str, list[float]]] = {"logprob": {}, "update": {}}
    for index in range(rounds + 1):
        modes = ("shared", "standard") if index % 2 == 0 else ("standard", "shared")
        for mode in modes:
            for kind in seconds:
                took = _timed_pass(trainer, rollout, kind, shared=mode == "shared")
                if index:  # the first round warms up
                    seconds[kind].setdefault(mode, []).append(took)
    result: dict[str, Any] = {
        "model": model,
        "layers": layers,
        "n": n,
        "prompt_tokens": rollout["prompt_mask"][::n].sum(dim=1).tolist(),
        "completion_tokens": int(rollout["completion_ids"].size(1)),
    }
    for kind, by_mode in seconds.items():
        ratio, low, high = ratio_interval(by_mode["shared"], by_mode["standard"])
        result[kind] = {
            mode: [round(value, 3) for value in median_interval(values)]
            for mode, values in by_mode.items()
        }
        result[kind]["ratio_shared_over_standard"] = round(ratio, 4)
        result[kind]["ratio_ci95"] = [round(low, 4), round(high, 4)]
    return result


def _trainer(
    work: Path, recipe_path: Path, model: str, layers: int, prompts: int, n: int, completion: int
) -> Any:
    processor = build_tiny_processor(TinyModelSpec())
    config = published_config(model, processor.tokenizer, layers, 1, len(processor.tokenizer))
    model_dir = build_published_model(work / "model", config, processor, torch.float32)
    data = _uneven_prompts(work / "data", prompts)
    recipe = load_recipe(
        recipe_path,
        [
            f"output_dir={work / 'run'}",
            f"model.name_or_path={model_dir}",
            f"data.train={data}",
            "data.eval=null",
            "report_to=[]",
            "grpo.beta=0",
            *ONE_ORDER,
            "grpo.shared_prefix=true",
            f"grpo.num_generations={n}",
            f"grpo.max_completion_length={completion}",
            f"optim.per_device_train_batch_size={prompts * n}",
        ],
    )
    budget = recipe.data.media_budget
    dataset = to_dataset(read_records(data), budget)
    trainer = make_trainer(recipe, load_processor(str(model_dir), budget), dataset)
    trainer.model.train()
    return trainer


def _uneven_prompts(folder: Path, count: int) -> Path:
    synthesize("color", count, folder, seed=1, overwrite=True)
    lines = []
    for index, record in enumerate(read_records(folder)):
        text = next(part for part in record.prompt[-1]["content"] if part["type"] == "text")
        text["text"] += FILLER * (FILLER_STEP * index)
        lines.append(record.to_json())
    (folder / "data.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def _timed_pass(trainer: Any, rollout: dict[str, Any], kind: str, shared: bool) -> float:
    """One pass over the rollout: `logprob` without gradient in chunks of one micro-batch,
    `update` forward and backward over one micro-batch of the first `n` rows."""
    rows = rollout["prompt_ids"].size(0) if kind == "logprob" else trainer.num_generations
    ids = torch.cat([rollout["prompt_ids"], rollout["completion_ids"]], dim=1)[:rows]
    mask = torch.cat([rollout["prompt_mask"], rollout["completion_mask"]], dim=1)[:rows]
    images = rollout["num_images"][:rows]
    pixels = rollout["image_grid_thw"][: sum(images)].prod(-1).sum()
    media = {
        "pixel_values": rollout["pixel_values"][:pixels],
        "image_grid_thw": rollout["image_grid_thw"][: sum(images)],
        "num_images": images,
    }
    trainer.shared_prefix = shared
    trainer._prompt_groups = rollout["prompt_group"][:rows]
    width = rollout["completion_ids"].size(1)
    batch_size = trainer.args.per_device_train_batch_size // 2 if kind == "logprob" else None
    started = time.perf_counter()
    if kind == "logprob":
        with torch.no_grad():
            trainer._get_per_token_logps_and_entropies(
                trainer.model, ids, mask, width, batch_size, **media
            )
    else:
        logps, _, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model, ids, mask, width, batch_size, **media
        )
        logps.sum().backward()
        trainer.model.zero_grad(set_to_none=True)
    took = time.perf_counter() - started
    trainer._prompt_groups = None
    return took
