"""MathVerse (testmini): letter for multi-choice, math-verify for free-form."""

from __future__ import annotations

import re

from mmcritic.eval import metrics
from mmcritic.eval.choices import option_letters
from mmcritic.eval.scorers import math_equal
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import MATH_INSTRUCTION, MC_INSTRUCTION, mc_score

HEADLINE = "accuracy"
_VERSE_OPTION = re.compile(r"^\s*([A-E])\s*[:.)]\s*(.+?)\s*$", re.MULTILINE)


def build_problem(row: Row) -> Problem:
    multiple_choice = row["question_type"] == "multi-choice"
    instruction = MC_INSTRUCTION if multiple_choice else MATH_INSTRUCTION
    image = row.get("image")
    listed = row.get("question_for_eval") or row["question"]
    options = dict(_VERSE_OPTION.findall(str(listed)))
    meta = {
        "question_type": row["question_type"],
        "problem_version": row.get("problem_version", ""),
        "letters": option_letters(5),
        # the option texts the question lists ("A:40°"), so an answer giving a value is read
        "options": [options[letter] for letter in sorted(options)] if options else [],
    }
    return Problem(
        f"{row['question']}\n{instruction}",
        str(row["answer"]),
        images=[image] if image not in (None, "") else [],
        meta=meta,
        question=str(listed),
    )


def score(answer: str, problem: Problem) -> Scored:
    """The option letter (`common.mc_score`), or math-verify (`scorers.math_equal`)."""
    if problem.meta["question_type"] == "multi-choice":
        return mc_score(answer, problem)
    return Scored(answer, float(math_equal(answer, str(problem.target), problem.question)))


TASK = PolicyTask(
    name="mathverse_testmini",
    dataset=DatasetRef(
        ("AI4Math/MathVerse", "CaraJ/MathVerse-lmmseval"), "testmini", configs=("testmini",)
    ),
    fields={
        "question": "question",
        "answer": "answer",
        "question_type": "question_type",
        "problem_version": "problem_version",
        "question_for_eval": "question_for_eval",
        "query_wo": "query_wo",
        "image": "image",
    },
    problem=build_problem,
    score=score,
    aggregate=metrics.accuracy_by("problem_version"),
    scoring=(
        "rule-based (option letter; math-verify equivalence for free-form) in place of "
        "MathVerse's GPT-4 extraction and judging"
    ),
    judged_upstream=True,
)
