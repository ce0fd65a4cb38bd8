"""OCRBench (test): reference contained in the answer; score out of 1,000."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from mmcritic.eval import metrics
from mmcritic.eval.metrics import Record
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import as_list
from mmcritic.eval.tasks.ocrbench.scoring import substring_match

HEADLINE = "accuracy"


def build_problem(row: Row) -> Problem:
    answers = row["answer"]
    targets = [str(a) for a in as_list(answers)] if not isinstance(answers, str) else [answers]
    meta = {"question_type": row["question_type"], "dataset": row.get("dataset", "")}
    question = row["question"].strip()
    return Problem(question, targets, images=[row["image"]], meta=meta, question=question)


def score(answer: str, problem: Problem) -> Scored:
    """A reference contained in the answer (`scoring.substring_match`), spaces ignored for a
    handwritten formula (HME100k)."""
    formula = problem.meta["dataset"] == "HME100k"
    matched = substring_match(answer, problem.target, formula, question=problem.question)
    return Scored(answer, float(matched))


def aggregate(records: Sequence[Record]) -> dict[str, float]:
    """OCRBench's score is the count of correct answers (out of 1,000 on the full set);
    `accuracy` is that count over the samples run, which equals score/1000 on the full set."""
    groups: dict[str, float] = defaultdict(float)
    for record in records:
        groups[str(record["meta"]["question_type"])] += float(record["score"])
    result = {"accuracy": metrics.mean(record["score"] for record in records)}
    result["score"] = float(sum(record["score"] for record in records))
    result.update({f"score/{name}": value for name, value in sorted(groups.items())})
    return result


TASK = PolicyTask(
    name="ocrbench",
    dataset=DatasetRef(("echo840/OCRBench",), "test"),
    fields={
        "question": "question",
        "answer": "answer",
        "question_type": "question_type",
        "dataset": "dataset",
        "image": "image",
    },
    problem=build_problem,
    score=score,
    aggregate=aggregate,
    scoring="rule-based: reference contained in the answer (OCRBench's own rule)",
)
