"""A tiny instruct base: the tiny model after supervised training on synthetic visual instructions.

LLaVA-Critic-R1 starts critic RL from a model that already sees and answers (Qwen2.5-VL-7B-
Instruct). A random tiny model does neither, so GRPO on verdict tokens alone would have to teach
vision, language and judging at once. This stage gives the tiny model what an instruct model
brings: it learns, with its reasoning and a boxed answer, to name the shape's colour, count the
shapes, name the shape, answer yes or no about its colour and describe the image in a few words
(`mmcritic.data.synth`'s `color`, `count`, `shape`, `yesno` and `describe` questions). It is
then measured on held-out questions of each kind, greedy and sampled.

The build is deterministic from its seed and cached: a folder holding a base built with the same
settings is returned as it is, so the quickstart and the studies share one.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmcritic.data.media import MediaBudget, PixelBudget
from mmcritic.models.tiny import TinyModelSpec, build_tiny_model

if TYPE_CHECKING:
    from mmcritic.data.schema import Record

logger = logging.getLogger(__name__)

INSTRUCT_TASKS = ("color", "count", "shape", "yesno", "describe")
REPORT_FILE = "instruct_base.json"
# the settings a build folder was started with
BUILD_SETTINGS = "settings.json"
LOGGING_STEPS = 20


@dataclass(frozen=True)
class InstructSpec:
    """How the base is trained and measured: questions per task to train on and to hold out,
    SFT steps and rate, answers sampled per held-out question, the palette size and the seed."""

    tasks: tuple[str, ...] = INSTRUCT_TASKS
    questions: int = 384
    heldout: int = 32
    steps: int = 600
    learning_rate: float = 2e-3
    batch_size: int = 16
    samples: int = 4
    colors: int = 6
    seed: int = 0
    # the quickstart's image budget: 4 to 16 visual tokens an image keeps a step cheap on a CPU
    min_pixels: int = 3136
    max_pixels: int = 12544
    # the model trained: `mmcritic tiny-model`'s defaults (about 0.4 M parameters)
    model: TinyModelSpec = field(default_factory=TinyModelSpec)

    @property
    def media_budget(self) -> MediaBudget:
        return MediaBudget(PixelBudget(self.min_pixels, self.max_pixels))


def build_instruct_base(out: Path, spec: InstructSpec | None = None) -> dict[str, Any]:
    """Builds the base into `out` (the model and processor, and `instruct_base.json`: the
    settings and the held-out accuracy) and returns that report; a folder that already holds a
    base of the same settings is left as it is and its report returned."""
    spec = spec or InstructSpec()
    settings = _settings(spec)
    report_path = out / REPORT_FILE
    if report_path.is_file():
        report = json.loads(report_path.read_text())
        if report["settings"] == settings:
            logger.info("instruct base in %s is built with these settings: reused", out)
            return report
    work = _build_folder(out, settings)
    train_dir, heldout = _questions(work, spec)
    final = _supervised(work, spec, train_dir)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(final, out)
    report = {"settings": settings, "accuracy": question_accuracy(out, heldout, spec)}
    report_path.write_text(json.dumps(report, indent=1))
    return report


def _settings(spec: InstructSpec) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(spec)))


def _build_folder(out: Path, settings: dict[str, Any]) -> Path:
    """The folder the base is built in, beside `out`: kept when it holds an interrupted build
    of the same settings (the SFT run then resumes), emptied otherwise, since a finished or
    resumed run of other settings would stand in for the one asked for."""
    work = out.with_name(f"{out.name}.build")
    stamp = work / BUILD_SETTINGS
    if work.exists() and not (stamp.is_file() and json.loads(stamp.read_text()) == settings):
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(settings))
    return work


def _questions(work: Path, spec: InstructSpec) -> tuple[Path, list[Record]]:
    """Training questions of every task in one folder, and the held-out ones."""
    from mmcritic.data.convert import BuildOptions
    from mmcritic.data.dataset import read_records, write_records
    from mmcritic.data.synth import synthesize

    build = BuildOptions(
        max_prompt_tokens=None, min_pixels=spec.min_pixels, max_pixels=spec.max_pixels
    )
    splits: dict[str, list[Record]] = {"train": [], "heldout": []}
    for index, task in enumerate(spec.tasks):
        for split, n, offset in (("train", spec.questions, 0), ("heldout", spec.heldout, 500)):
            folder = work / "questions" / f"{split}_{task}"
            seed = 1000 * spec.seed + offset + index
            synthesize(
                task,
                n,
                folder,
                seed,
                overwrite=True,
                build=build,
                colors=spec.colors,
                kind="verifiable",
            )
            splits[split] += read_records(folder)
    settings = {"tasks": list(spec.tasks)}
    return write_records(work / "questions" / "train", splits["train"], settings), splits["heldout"]


def _supervised(work: Path, spec: InstructSpec, train_dir: Path) -> Path:
    """The SFT run on the questions, from a fresh tiny model; returns its final model."""
    from mmcritic.train.config import load_recipe
    from mmcritic.train.run import train

    tiny = build_tiny_model(work / "tiny", spec.model)
    recipe = load_recipe(
        None,
        [
            f"output_dir={work / 'sft'}",
            "stage=sft",
            f"max_steps={spec.steps}",
            f"save_steps={spec.steps}",
            f"logging_steps={math.gcd(LOGGING_STEPS, spec.steps)}",
            "resume=auto",
            f"seed={spec.seed}",
            "device=cpu",
            "report_to=[]",
            f"model.name_or_path={tiny}",
            "model.dtype=float32",
            "model.gradient_checkpointing=false",
            f"data.train={train_dir}",
            "data.eval=null",
            f"data.min_pixels={spec.min_pixels}",
            f"data.max_pixels={spec.max_pixels}",
            "data.max_prompt_tokens=2048",
            "sft.target=rationale",
            "sft.max_length=1024",
            f"optim.learning_rate={spec.learning_rate}",
            "optim.weight_decay=0.0",
            "optim.lr_scheduler_type=constant",
            f"optim.per_device_train_batch_size={spec.batch_size}",
        ],
    )
    return Path(train(recipe)["final_model"])


def question_accuracy(
    model_dir: Path, questions: list[Record], spec: InstructSpec
) -> dict[str, dict[str, float]]:
    """Per task and over all: the share of greedy answers that are right, and of answers sampled
    at temperature 1 (`spec.samples` per question)."""
    from mmcritic.inference.questions import answer_questions

    answered = answer_questions(model_dir, questions, spec.samples, spec.media_budget, spec.seed)
    greedy, sampled = answered.greedy_right(), answered.sampled_right()
    tasks = [question.meta["task"] for question in questions]
    accuracy = {}
    for task in [*spec.tasks, None]:
        rows = [index for index, name in enumerate(tasks) if task in (None, name)]
        accuracy[task or "all"] = {
            "greedy": statistics.fmean(greedy[index] for index in rows),
            "sampled": statistics.fmean(right for index in rows for right in sampled[index]),
            "questions": len(rows),
        }
    return accuracy
