"""MathVision (testmini): boxed answer, math-verify equivalence, letter or option value."""

from __future__ import annotations

from mmcritic.eval import metrics
from mmcritic.eval.choices import option_letters, read_choice
from mmcritic.eval.scorers import math_equal
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import MC_INSTRUCTION, as_list, lettered

HEADLINE = "accuracy"


def build_problem(row: Row) -> Problem:
    options = [str(option) for option in as_list(row.get("options"))]
    text = row["question"]
    if options:
        text = f"{text}\nChoices:\n{lettered(options)}\n{MC_INSTRUCTION}"
    meta = {"subject": row.get("subject", ""), "options": options}
    return Problem(
        text, str(row["answer"]), images=[row["image"]], meta=meta, question=row["question"]
    )


def score(answer: str, problem: Problem) -> Scored:
    """The option letter, or the option's value by math-verify (`scorers.math_equal`); a
    free-form answer by math-verify against the target."""
    options, target = problem.meta["options"], str(problem.target)
    if options:
        letters = option_letters(len(options))
        choice = read_choice(answer, letters, options)
        value = options[ord(target) - ord("A")] if len(target) == 1 and target.isupper() else ""
        # "C. 7" with 7 option D names no option; "14, which corresponds to option D" with 14
        # option C picks D; "= 30 cubic units. (D)" with 30 option C contradicts itself
        if not choice.open:
            return Scored(choice.letter or answer, float(choice.letter == target))
        return Scored(answer, float(bool(value) and math_equal(answer, value, problem.question)))
    return Scored(answer, float(math_equal(answer, target, problem.question)))


TASK = PolicyTask(
    name="mathvision_testmini",
    dataset=DatasetRef(("MathLLMs/MathVision",), "testmini"),
    fields={
        "question": "question",
        "options": "options",
        "answer": "answer",
        "subject": "subject",
        "image": ("decoded_image", "image"),
    },
    problem=build_problem,
    score=score,
    aggregate=metrics.accuracy_by("subject"),
    scoring="rule-based: boxed extraction and math-verify equivalence (as the paper reports it)",
)
