"""What several policy benchmarks share: the answer-format instructions, option lists, list
columns stored as text, and the option-letter score.

A task's own prompt (`Problem.text`) ends with an answer-format instruction; the runner appends
the think/boxed instruction unless it is switched off, and scorers read the final answer, so a
boxed answer and a direct one are scored alike. Instructions that say "directly" upstream drop
that word here, since the think instruction asks for reasoning first.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from mmcritic.eval.choices import option_letters
from mmcritic.eval.scorers import letter_score
from mmcritic.eval.tasks import Problem, Scored

MC_INSTRUCTION = "Answer with the option's letter from the given choices."
SHORT_INSTRUCTION = "Answer the question using a single word or phrase."
MATH_INSTRUCTION = "Answer with a number or a mathematical expression."


def lettered(options: list[str], separator: str = ". ") -> str:
    """Options as `A. first` lines, the layout lmms-eval uses for MMMU, AI2D and MathVision."""
    letters = option_letters(len(options))
    return "\n".join(
        f"{letter}{separator}{option}" for letter, option in zip(letters, options, strict=True)
    )


def as_list(value: Any) -> list[Any]:
    """A list column that some copies store as its Python or JSON text (MMMU's `options`)."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parsed = json.loads(text)
        return list(parsed)
    return list(value) if value is not None else []


def mc_score(answer: str, problem: Problem) -> Scored:
    """The option letter the answer picks against the target letter (`scorers.letter_score`),
    over the problem's options, or its bare letters when it lists none."""
    options = problem.meta.get("options", [])
    letters = option_letters(len(options)) if options else problem.meta["letters"]
    parsed, score = letter_score(answer, str(problem.target), letters, options, problem.question)
    return Scored(parsed, score)
