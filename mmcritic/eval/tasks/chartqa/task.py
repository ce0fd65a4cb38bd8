"""ChartQA (test): relaxed accuracy, 5% on numbers."""

from __future__ import annotations

from mmcritic.eval import metrics
from mmcritic.eval.scorers import relaxed_match
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import SHORT_INSTRUCTION

HEADLINE = "relaxed_accuracy"


def build_problem(row: Row) -> Problem:
    return Problem(
        f"{row['question']}\n{SHORT_INSTRUCTION}",
        str(row["answer"]),
        images=[row["image"]],
        meta={"type": row.get("type", "")},
        question=row["question"],
    )


def score(answer: str, problem: Problem) -> Scored:
    """ChartQA's relaxed match (`scorers.relaxed_match`)."""
    return Scored(answer, float(relaxed_match(answer, problem.target, question=problem.question)))


TASK = PolicyTask(
    name="chartqa",
    dataset=DatasetRef(("lmms-lab/ChartQA", "lmms-lab-encoder/ChartQA"), "test"),
    fields={"question": "question", "answer": "answer", "type": "type", "image": "image"},
    problem=build_problem,
    score=score,
    aggregate=metrics.accuracy_by("type", metric="relaxed_accuracy"),
    scoring="rule-based: relaxed accuracy (5% on numbers, exact match otherwise)",
)
