"""MMVU (validation): video, multiple choice (A-E) or open-ended; 32 frames as in the paper."""

from __future__ import annotations

import json

from mmcritic.eval import metrics
from mmcritic.eval.scorers import letter_score
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import MC_INSTRUCTION, SHORT_INSTRUCTION
from mmcritic.eval.tasks.mmvu.scoring import open_match

HEADLINE = "accuracy"


def build_problem(row: Row) -> Problem:
    choices = row.get("choices") or {}
    if isinstance(choices, str):
        choices = json.loads(choices)
    options = {key: str(value) for key, value in sorted(choices.items()) if value}
    multiple_choice = row["question_type"] == "multiple-choice"
    if multiple_choice:
        listed = "\n".join(f"{key}: {value}" for key, value in options.items())
        text = f"{row['question']}\n{listed}\n{MC_INSTRUCTION}"
    else:
        text = f"{row['question']}\n{SHORT_INSTRUCTION}"
    meta = {
        "question_type": row["question_type"],
        "letters": list(options),
        "options": list(options.values()),
        "choices": dict(choices),
    }
    return Problem(
        text, str(row["answer"]), videos=[row["video"]], meta=meta, question=row["question"]
    )


def score(answer: str, problem: Problem) -> Scored:
    """The option letter (`scorers.letter_score`) over the row's own letters, or MMVU's
    rule-based open-answer check (`scoring.open_match`)."""
    if problem.meta["question_type"] == "multiple-choice":
        letters, options = problem.meta["letters"], problem.meta["options"]
        parsed, value = letter_score(answer, str(problem.target), letters, options)
        return Scored(parsed, value)
    return Scored(answer, float(open_match(answer, str(problem.target), problem.question)))


TASK = PolicyTask(
    name="mmvu",
    dataset=DatasetRef(
        ("yale-nlp/MMVU", "lmms-lab/MMVU", "lmms-lab-encoder/MMVU"),
        "validation",
        local_hint="videos are read from --media-root mmvu=DIR (the dataset's videos/ folder)",
    ),
    fields={
        "question": "question",
        "choices": "choices",
        "answer": "answer",
        "question_type": "question_type",
        "video": ("video_path", "video"),
    },
    problem=build_problem,
    score=score,
    aggregate=metrics.accuracy_by("question_type"),
    scoring=(
        "rule-based (option letter; MMVU's rule-based open-answer match); lmms-eval also asks "
        "a GPT judge about open-ended answers the rules reject"
    ),
    judged_upstream=True,
    max_frames=32,
)
