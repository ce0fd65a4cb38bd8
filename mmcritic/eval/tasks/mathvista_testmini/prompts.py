"""MathVista's prompts: lmms-eval's `format-prompt` variant (`mathvista_testmini_format`) and
the dataset's own `query`."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row

_FORMAT_HINTS = {
    "integer": "Answer the question using a single integer number.",
    (
        "float",
        1,
    ): "Answer the question using a single floating-point number with one decimal place.",
    ("float", 2): (
        "Answer the question using a single floating-point number with two decimal places."
    ),
    "list": "Answer the question using a Python list.",
}


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    """`create_one_query` with `shot_type="format-prompt"`, zero shots, no caption or OCR: of
    the three variants `--tasks mathvista_testmini` runs, the one that asks for the answer
    directly, which rule-based reading can score without lmms-eval's GPT extractor."""
    question = str(row["question"])
    unit = row.get("unit")
    if unit:
        question += f" (Unit: {unit})"
    choices = [str(choice) for choice in problem.meta["options"]]
    elements = [question, lmms_eval.lettered(choices) if choices else "", _format_hint(row)]
    text = "\n".join(element for element in elements if element).strip()
    return media_first(text, [row["image"]])


def _format_hint(row: Row) -> str:
    if row["question_type"] == "multi_choice":
        return lmms_eval.DIRECT_LETTER
    answer_type = row["answer_type"]
    key = (answer_type, int(row.get("precision") or 0)) if answer_type == "float" else answer_type
    if key not in _FORMAT_HINTS:
        raise ValueError(
            f"mathvista_testmini row {row.doc_id}: lmms-eval has no format hint for answer type "
            f"{key}; its own query builder fails on this row"
        )
    return _FORMAT_HINTS[key]


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """The dataset's `query`, documented as the evaluation input (hint, question, choices)."""
    return media_first(str(row["query"]), problem.images)


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(
        lmms_eval_prompt, Decoding(16384), "mathvista/mathvista_evals.py"
    ),
    "official": official.released(
        official_prompt, Decoding(1024), "lupantech/MathVista README, the query column [53d5258]"
    ),
}
