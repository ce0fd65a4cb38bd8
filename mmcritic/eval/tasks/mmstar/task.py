"""MMStar (val): option letter; macro average over the six core capabilities."""

from __future__ import annotations

import re

from mmcritic.eval import metrics
from mmcritic.eval.choices import option_letters
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row
from mmcritic.eval.tasks.common import MC_INSTRUCTION, mc_score

HEADLINE = "average"
_INLINE_OPTION = re.compile(r"\b([A-F])\s*[:.]\s*(.*?)(?=,\s*[A-F]\s*[:.]|\n|$)", re.DOTALL)


def build_problem(row: Row) -> Problem:
    return Problem(
        f"{row['question'].strip()}\n{MC_INSTRUCTION}",
        str(row["answer"]),
        images=[row["image"]],
        meta={
            "letters": option_letters(4),
            "category": row["category"],
            "l2_category": row.get("l2_category", ""),
            "options": _inline_options(row["question"]),
        },
        question=row["question"].partition("Options:")[0].strip(),
    )


def _inline_options(question: str) -> list[str]:
    """MMStar's options, written into its question as `Options: A: cat, B: dog, ...`, so an
    answer that gives an option's text is read too; [] when the question lists none."""
    _, found, listed = question.partition("Options:")
    options = dict(_INLINE_OPTION.findall(listed)) if found else {}
    letters = option_letters(len(options))
    return [options[letter].strip() for letter in letters] if set(options) == set(letters) else []


TASK = PolicyTask(
    name="mmstar",
    dataset=DatasetRef(("Lin-Chen/MMStar",), "val"),
    fields={
        "question": "question",
        "answer": "answer",
        "category": "category",
        "l2_category": "l2_category",
        "image": "image",
    },
    problem=build_problem,
    score=mc_score,
    aggregate=metrics.accuracy_by("category", macro_name="average"),
    scoring="rule-based: option letter; `average` is the macro mean over the 6 categories",
)
