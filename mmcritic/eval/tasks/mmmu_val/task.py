"""MMMU (validation): MMMU's official parser, micro accuracy, per subject."""

from __future__ import annotations

import re

from mmcritic.eval import metrics
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import (
    MC_INSTRUCTION,
    SHORT_INSTRUCTION,
    as_list,
    lettered,
    mc_score,
)
from mmcritic.eval.tasks.mmmu_val.scoring import open_match

HEADLINE = "accuracy"
# the images a question or its options refer to: "<image 2>"
IMAGE_TOKEN = re.compile(r"<image (\d+)>")


def build_problem(row: Row) -> Problem:
    """The images the question or its options refer to (`<image N>`) are shown in ascending N
    before the text, and the markers stay in the text: lmms-eval's `mmmu_doc_to_visual` and its
    Qwen2.5-VL model, which lists images first unless told to interleave. With images 1..k
    referred to, `<image N>` is the N-th image shown. A question without markers shows every
    image its row has."""
    question, options = row["question"], [str(o) for o in as_list(row.get("options"))]
    multiple_choice = row["question_type"] == "multiple-choice"
    if multiple_choice:
        text = f"{question}\n{lettered(options)}\n\n{MC_INSTRUCTION}"
    else:
        text = f"{question}\n\n{SHORT_INSTRUCTION}"
    referenced = sorted({int(n) for n in IMAGE_TOKEN.findall(f"{question} {options}")})
    images = [row.get(f"image_{n}") for n in referenced or range(1, 8)]
    subject = re.sub(r"^[^_]+_(.+)_\d+$", r"\1", str(row["id"]))
    return Problem(
        text,
        row["answer"],
        images=[image for image in images if image is not None],
        meta={"subject": subject, "question_type": row["question_type"], "options": options},
        question=question,
    )


def score(answer: str, problem: Problem) -> Scored:
    """The option letter (`common.mc_score`), or MMMU's open-answer match (`scoring.open_match`)."""
    if problem.meta["question_type"] == "multiple-choice":
        return mc_score(answer, problem)
    return Scored(answer, float(open_match(answer, problem.target, problem.question)))


TASK = PolicyTask(
    name="mmmu_val",
    dataset=DatasetRef(("lmms-lab/MMMU", "lmms-lab-encoder/MMMU"), "validation"),
    fields={
        "id": "id",
        "question": "question",
        "options": "options",
        "answer": "answer",
        "question_type": "question_type",
        **{f"image_{n}": f"image_{n}" for n in range(1, 8)},
    },
    problem=build_problem,
    score=score,
    aggregate=metrics.accuracy_by("subject"),
    scoring="rule-based: MMMU's official option-letter and open-answer matching",
)
