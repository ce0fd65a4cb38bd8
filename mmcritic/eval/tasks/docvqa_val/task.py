"""DocVQA (validation): ANLS over the reference answers."""

from __future__ import annotations

from collections.abc import Sequence

from mmcritic.eval import metrics
from mmcritic.eval.metrics import Record
from mmcritic.eval.scorers import anls
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import SHORT_INSTRUCTION, as_list
from mmcritic.eval.text_answers import text_answer

HEADLINE = "anls"


def build_problem(row: Row) -> Problem:
    return Problem(
        f"{row['question']}\n{SHORT_INSTRUCTION}",
        [str(answer) for answer in as_list(row["answers"])],
        images=[row["image"]],
        question=row["question"],
    )


def score(answer: str, problem: Problem) -> Scored:
    """ANLS (`scorers.anls`) of the answer the response states; for a bare phrase, with or
    without the question's words it opens with ("Page 14" is "14" for "What is the page
    number?", "Room 201" stays whole for golds written "Room 210"), whichever scores higher."""
    spans = [text_answer(answer, problem.question, keep) for keep in (False, True)]
    scores = [anls(span, problem.target) for span in spans]
    best = max(range(len(spans)), key=scores.__getitem__)
    return Scored(spans[best], scores[best])


def aggregate(records: Sequence[Record]) -> dict[str, float]:
    """The mean ANLS."""
    return {"anls": metrics.mean(r["score"] for r in records)}


TASK = PolicyTask(
    name="docvqa_val",
    dataset=DatasetRef(("lmms-lab/DocVQA", "lmms-lab-encoder/DocVQA"), "validation", ("DocVQA",)),
    fields={"question": "question", "answers": "answers", "image": "image"},
    problem=build_problem,
    score=score,
    aggregate=aggregate,
    scoring="rule-based: ANLS with threshold 0.5",
)
