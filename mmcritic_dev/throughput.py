"""Step time of mmcritic's GRPO trainer against TRL's plain one, raced in the same process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mmcritic.data.dataset import read_records
from mmcritic.models.loading import load_processor
from mmcritic.train.config import Recipe, load_recipe
from mmcritic.train.examples import to_dataset
from mmcritic.train.run import make_trainer, train
from mmcritic_dev.profiling import (
    PhaseTimer,
    losses,
    median_interval,
    plain_trainer,
    race,
    ratio_interval,
)
from mmcritic_dev.quickstart import ONE_ORDER, QuickstartData, prepare_inputs

# What ours must not do differently from TRL for the race to compare equal work: the same
# batches (no position balancing, no refills), the same rewards, no held-out passes.
SAME_SAMPLING = (
    "grpo.balance_positions=false",
    "grpo.dynamic_sampling=false",
    *ONE_ORDER,
    "rewards.consistency_weight=0",
    "data.eval=null",
    "report_to=[]",
    "logging_steps=1",
    "save_steps=1000000",
)


def warm_start(work: Path, sft_recipe: Path, steps: int) -> dict[str, Path]:
    """The quickstart's data and a short SFT format warm start; returns the paths."""
    inputs = prepare_inputs(work, QuickstartData(n_heldout=2))
    sft = load_recipe(
        sft_recipe,
        [
            f"output_dir={work / 'sft'}",
            f"model.name_or_path={inputs['model']}",
            f"data.train={inputs['train']}",
            "data.eval=null",
            f"max_steps={steps}",
            f"save_steps={steps}",
            "logging_steps=1",
            "report_to=[]",
        ],
    )
    if not (work / "sft" / "final").is_dir():
        train(sft)
    return {**inputs, "warm": work / "sft" / "final"}


def compare_step_times(
    work: Path,
    sft_recipe: Path,
    grpo_recipe: Path,
    n: int,
    prompts: int,
    steps: int,
    warmup: int,
    block: int,
    threads: int,
    sft_steps: int,
    overrides: list[str] | None = None,
) -> dict[str, Any]:
    """Races plain TRL and ours for `warmup + steps` GRPO steps of `prompts` x `n` rollouts."""
    inputs = warm_start(work, sft_recipe, sft_steps)
    recipe = load_recipe(
        grpo_recipe,
        [
            f"model.name_or_path={inputs['warm']}",
            f"data.train={inputs['train']}",
            f"max_steps={warmup + steps}",
            f"grpo.num_generations={n}",
            f"optim.per_device_train_batch_size={prompts * n}",
            *SAME_SAMPLING,
            *(overrides or []),
        ],
    )
    trainers, timers = {}, {}
    for name, build in (("plain", plain_trainer), ("ours", make_trainer)):
        trainers[name] = _built(build, recipe, work / f"{name}_n{n}")
        timers[name] = PhaseTimer(trainers[name], warmup)
    seconds = race(trainers, block, recipe.seed, threads)
    measured = {name: times[warmup:] for name, times in seconds.items()}
    ratio, low, high = ratio_interval(measured["ours"], measured["plain"])
    result: dict[str, Any] = {"n": n, "prompts": prompts, "threads": threads}
    for name, trainer in trainers.items():
        median, median_low, median_high = median_interval(measured[name])
        result[name] = {
            "step_s_median": round(median, 4),
            "step_s_ci95": [round(median_low, 4), round(median_high, 4)],
            "phases_s": {key: round(value, 4) for key, value in timers[name].phases().items()},
            "losses": losses(trainer)[warmup:],
            "grad_norms": _grad_norms(trainer)[warmup:],
        }
    result["ratio_ours_over_plain"] = round(ratio, 4)
    result["ratio_ci95"] = [round(low, 4), round(high, 4)]
    return result


def _built(build: Any, recipe: Recipe, output_dir: Path) -> Any:
    from dataclasses import replace

    recipe = replace(recipe, output_dir=str(output_dir))
    budget = recipe.data.media_budget
    processor = load_processor(recipe.model.name_or_path, budget)
    return build(recipe, processor, to_dataset(read_records(recipe.data.train), budget))


def _grad_norms(trainer: Any) -> list[float]:
    return [entry["grad_norm"] for entry in trainer.state.log_history if "grad_norm" in entry]
