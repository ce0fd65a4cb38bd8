"""Stages the toy-scale studies share: a recipe for one stage, the model a stage ends with, and
synthetic policy questions (benchmarks/critic_to_policy.py, benchmarks/critic_in_the_loop.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmcritic.data.convert import BuildOptions
from mmcritic.data.dataset import DatasetWriter, read_records
from mmcritic.data.media import MediaBudget
from mmcritic.data.schema import DATA_FILE, Record
from mmcritic.data.synth import synthesize
from mmcritic.rewards.answers import normalize_answer
from mmcritic.train.config import Recipe, load_recipe
from mmcritic.train.run import FINAL_DIR, train
from mmcritic_dev.quickstart import QuickstartData

# the critic data and model of the toy studies: the quickstart's prompt, with responses written
# the way the synthetic policy answers, so the critic can judge that policy's answers; two colours
# and the 0.4 M-parameter width, as their README figures were measured
TOY_CRITIC = QuickstartData(responses="reasoned", colors=2, hidden_size=64)


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
    writer = DatasetWriter(folder, {"merged": len(records)}, "overwrite")
    for record in records:
        writer.add_row([record])
    writer.close()
    return folder


@dataclass
class Answered:
    """A model's answers to policy questions: one greedy and `samples` sampled at temperature 1
    per question, with the loaded model, so a study can go on to judge the samples."""

    model: Any
    processor: Any
    questions: list[Record]
    items: list[tuple[Any, str]]
    greedy: list[Any]
    sampled: list[list[Any]]

    def greedy_right(self) -> list[bool]:
        """Whether each question's greedy answer is its reference answer."""
        return [
            same_answer(answer.final_answer, question.answer)
            for answer, question in zip(self.greedy, self.questions, strict=True)
        ]

    def sampled_right(self) -> list[list[bool]]:
        """Whether each sampled answer is its question's reference answer, per question."""
        return [
            [same_answer(answer.final_answer, question.answer) for answer in answers]
            for answers, question in zip(self.sampled, self.questions, strict=True)
        ]


def answer_questions(
    model_dir: Path, questions: list[Record], samples: int, budget: MediaBudget, seed: int
) -> Answered:
    """Greedy and sampled answers of the model in `model_dir` to the questions, on the CPU."""
    from mmcritic.inference import Policy
    from mmcritic.inference.engines import load_model_for_inference
    from mmcritic.inference.media import Media

    model, processor = load_model_for_inference(str(model_dir), "cpu", "float32")
    policy = Policy(model, processor, max_new_tokens=48, batch_size=32)
    image = budget.image
    items = [
        (Media.image(q.images[0], image.min_pixels, image.max_pixels), q.meta["question"])
        for q in questions
    ]
    greedy = [answers[0] for answers in policy.answer_many(items)]
    sampled = policy.answer_many(items, n=samples, temperature=1.0, seed=seed)
    return Answered(model, processor, questions, items, greedy, sampled)


def same_answer(answer: str | None, reference: str) -> bool:
    """Whether a final answer is the reference answer, both normalized."""
    return answer is not None and normalize_answer(answer) == normalize_answer(reference)
