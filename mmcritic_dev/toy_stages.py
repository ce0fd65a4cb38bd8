"""Stages the toy-scale studies share: a recipe for one stage, the model a stage ends with,
synthetic policy questions and Voting@k of a trained critic (benchmarks/critic_to_policy.py,
benchmarks/critic_in_the_loop.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmcritic.data.convert import BuildOptions
from mmcritic.data.dataset import read_records, write_records
from mmcritic.data.schema import DATA_FILE, Record
from mmcritic.data.synth import synthesize
from mmcritic.models.tiny import TinyModelSpec
from mmcritic.train.config import Recipe, load_recipe
from mmcritic.train.heldout import Rate
from mmcritic.train.instruct_base import InstructSpec
from mmcritic.train.run import FINAL_DIR, LOG_HISTORY_FILE, train
from mmcritic_dev.quickstart import QuickstartData, input_paths

# the critic data and model of the toy studies: the quickstart's prompt, with responses written
# the way the synthetic policy answers, so the critic can judge that policy's answers; two colours
# and the 0.4 M-parameter width and heads, as their README figures were measured
TOY_CRITIC = QuickstartData(
    responses="reasoned",
    colors=2,
    hidden_size=64,
    text_heads=TinyModelSpec.num_heads,
    text_kv_heads=TinyModelSpec.num_kv_heads,
)


@dataclass(frozen=True)
class Recipes:
    """The recipes of a toy study's stages: the warm start (and supervised policy base), critic
    GRPO, and policy GRPO rewarded by a critic."""

    sft: Path
    grpo: Path
    policy: Path


def stage_recipe(
    recipe: Path, out: Path, model: Path, data: Path, seed: int, overrides: Sequence[str]
) -> Recipe:
    """`recipe` for one stage: its output folder, model, training data and seed set."""
    return load_recipe(
        recipe,
        [
            f"output_dir={out}",
            f"model.name_or_path={model}",
            f"data.train={data}",
            f"seed={seed}",
            *overrides,
        ],
    )


def final_model(recipe: Recipe) -> Path:
    """The model a recipe's run ends with (trained now, or found from an earlier run)."""
    final = Path(recipe.output_dir) / FINAL_DIR
    if not (final / "config.json").is_file():
        train(recipe)
    return final


@dataclass(frozen=True)
class PolicyRun:
    """A finished policy GRPO run: its recipe, `train`'s summary and the log history."""

    recipe: Recipe
    summary: dict[str, Any]
    history: list[dict[str, Any]]


def critic_rewarded_policy(
    recipes: Recipes,
    out: Path,
    base: Path,
    questions: Path,
    critic: Path,
    seed: int,
    steps: int,
    heldout: Path | None = None,
) -> PolicyRun:
    """Policy GRPO from `base` on `questions` rewarded by the critic in `critic` alone
    (`recipes.policy`)."""
    recipe = stage_recipe(
        recipes.policy,
        out,
        base,
        questions,
        seed,
        [
            f"data.eval={heldout or 'null'}",
            f"rewards.critic_model={critic}",
            f"max_steps={steps}",
            f"save_steps={steps}",
            "logging_steps=1",
        ],
    )
    summary = train(recipe)
    history = json.loads((Path(recipe.output_dir) / LOG_HISTORY_FILE).read_text())
    return PolicyRun(recipe, summary, history)


def history_mean(history: list[dict[str, Any]], key: str) -> float | None:
    """The mean of a logged metric over a run's log history (None where it was never logged)."""
    values = [entry[key] for entry in history if key in entry]
    return sum(values) / len(values) if values else None


def policy_questions(
    folder: Path, tasks: Sequence[str], sizes: tuple[int, int], colors: int, seed: int
) -> tuple[Path, list[Record]]:
    """Synthetic policy questions of every task: a folder to train on, and held-out ones
    (`sizes`: how many of each per task)."""
    sets: dict[str, list[Record]] = {}
    for split, n, offset in (("train", sizes[0], 10), ("heldout", sizes[1], 20)):
        sets[split] = [
            record
            for index, task in enumerate(tasks)
            for record in _questions(
                folder / f"{split}_{task}", task, n, colors, 1000 * (seed + 1) + offset + index
            )
        ]
    return write_merged(folder / "train", sets["train"]), sets["heldout"]


def _questions(folder: Path, task: str, n: int, colors: int, seed: int) -> list[Record]:
    if not (folder / DATA_FILE).is_file():
        build = BuildOptions(max_prompt_tokens=None)
        synthesize(
            task, n, folder, seed, overwrite=True, build=build, colors=colors, kind="verifiable"
        )
    return read_records(folder)


def write_merged(folder: Path, records: list[Record]) -> Path:
    """One dataset folder holding records of several (their media paths are absolute)."""
    if (folder / DATA_FILE).is_file():
        return folder
    return write_records(folder, records, {"merged": len(records)})


def critic_votes(critic_run: Path, votes: Sequence[int]) -> dict[str, Any]:
    """Voting@k (verdicts sampled at temperature 1) on the held-out pairs of a quickstart run's
    critic (`grpo/final` under `critic_run`), each pair judged in both orders."""
    from mmcritic.inference import Critic, Media, load_model_for_inference

    model, processor = load_model_for_inference(str(critic_run / "grpo" / "final"), "cpu")
    critic = Critic(model, processor, max_new_tokens=24, batch_size=64)
    records = read_records(input_paths(critic_run)["heldout"])
    budget = (InstructSpec.min_pixels, InstructSpec.max_pixels)
    items = [
        (Media.image(r.images[0], *budget), r.meta["question"], *r.meta["responses"])
        for r in records
    ]
    results = {}
    for k in votes:
        judged = critic.compare_many(items, both_orders=True, votes=k)
        right = [c.verdict == r.answer for c, r in zip(judged, records, strict=True)]
        swapped = [c.swapped_verdict == r.answer for c, r in zip(judged, records, strict=True)]
        results[f"k={k}"] = {
            "accuracy": Rate(sum(right) + sum(swapped), 2 * len(records)).value,
            "consistent_accuracy": Rate(
                sum(a and b for a, b in zip(right, swapped, strict=True)), len(records)
            ).value,
        }
    return results
