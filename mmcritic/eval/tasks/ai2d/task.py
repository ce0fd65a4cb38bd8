"""AI2D (test): options listed A., B., ...; the answer column holds the option index."""

from __future__ import annotations

from mmcritic.eval import metrics
from mmcritic.eval.choices import option_letters
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row
from mmcritic.eval.tasks.common import MC_INSTRUCTION, as_list, lettered, mc_score

HEADLINE = "accuracy"


def build_problem(row: Row) -> Problem:
    options = [str(option) for option in as_list(row["options"])]
    text = f"{row['question']}\n{lettered(options)}\n{MC_INSTRUCTION}"
    target = option_letters(len(options))[int(row["answer"])]
    meta = {"options": options}
    return Problem(text, target, images=[row["image"]], meta=meta, question=row["question"])


TASK = PolicyTask(
    name="ai2d",
    dataset=DatasetRef(("lmms-lab/ai2d", "lmms-lab-encoder/ai2d"), "test"),
    fields={"question": "question", "options": "options", "answer": "answer", "image": "image"},
    problem=build_problem,
    score=mc_score,
    aggregate=metrics.accuracy,
    scoring="rule-based: option letter, exact match",
)
