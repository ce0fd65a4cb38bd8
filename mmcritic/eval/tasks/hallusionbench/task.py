"""HallusionBench (image split): yes/no; aAcc, qAcc, fAcc."""

from __future__ import annotations

from collections.abc import Sequence

from mmcritic.eval import metrics
from mmcritic.eval.metrics import Record
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.yes_no import yes_no

HEADLINE = "aAcc"


def build_problem(row: Row) -> Problem:
    image = row.get("image")
    has_figure = str(row.get("visual_input", "1")) != "0" and image is not None
    meta = {role: row[role] for role in ("category", "subcategory", "set_id", "figure_id")} | {
        "question_id": row["question_id"],
        "visual_input": str(row.get("visual_input", "1")),
    }
    target = "yes" if str(row["gt_answer"]) == "1" else "no"
    images = [image] if has_figure else []
    return Problem(row["question"], target, images=images, meta=meta, question=row["question"])


def score(answer: str, problem: Problem) -> Scored:
    """The yes or no the answer gives (`yes_no.yes_no`); 'unclear' is right only for a question
    asked without its figure."""
    parsed = yes_no(answer, problem.question)
    no_figure = problem.meta["visual_input"] == "0"  # asked without its figure
    right = parsed == problem.target or (parsed == "unclear" and no_figure)
    return Scored(parsed, float(right))


def aggregate(records: Sequence[Record]) -> dict[str, float]:
    """aAcc (per question), qAcc (per question over its figures) and fAcc (per figure over its
    questions), as in HallusionBench's `get_eval_all`, `get_eval_pair_all` and `get_eval_fig`;
    fAcc leaves out the visual-supplement questions asked without a figure."""
    with_figure = [
        record
        for record in records
        if not (record["meta"]["category"] == "VS" and str(record["meta"]["figure_id"]) == "0")
    ]
    return {
        "aAcc": metrics.mean(record["score"] for record in records),
        "qAcc": metrics.all_correct_rate(
            records, ("category", "subcategory", "set_id", "question_id")
        ),
        "fAcc": metrics.all_correct_rate(
            with_figure, ("category", "subcategory", "set_id", "figure_id")
        ),
    }


TASK = PolicyTask(
    name="hallusionbench",
    dataset=DatasetRef(("lmms-lab/HallusionBench", "lmms-lab-encoder/HallusionBench"), "image"),
    fields={
        "question": "question",
        "gt_answer": "gt_answer",
        "category": "category",
        "subcategory": "subcategory",
        "set_id": "set_id",
        "figure_id": "figure_id",
        "question_id": "question_id",
        "visual_input": "visual_input",
        "image": "image",
    },
    problem=build_problem,
    score=score,
    aggregate=aggregate,
    scoring=(
        "rule-based yes/no reading in place of HallusionBench's GPT-4 judge; an answer that "
        "says it cannot tell counts as 'unclear' (right only for questions asked without their "
        "figure); one that says nothing readable is wrong"
    ),
    judged_upstream=True,
)
