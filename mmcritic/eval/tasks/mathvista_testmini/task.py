"""MathVista (testmini): the dataset's own `query` prompt; rule-based extraction."""

from __future__ import annotations

from mmcritic.eval import metrics
from mmcritic.eval.answers import answer_span, extract_numbers
from mmcritic.eval.choices import option_letters, read_choice
from mmcritic.eval.scorers import closest_option, numeric_match, relaxed_match
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import as_list
from mmcritic.eval.text_answers import text_answer

HEADLINE = "accuracy"


def build_problem(row: Row) -> Problem:
    meta = {
        "question_type": row["question_type"],
        "answer_type": row["answer_type"],
        "precision": row.get("precision"),
        "options": [str(choice) for choice in as_list(row.get("choices"))],
    }
    return Problem(
        row["query"], row["answer"], images=[row["image"]], meta=meta, question=row["question"]
    )


def score(answer: str, problem: Problem) -> Scored:
    """MathVista's normalisation, then exact match: the option a choice names, numbers by
    `scorers.numeric_match` (to the row's precision for floats), lists number by number, a text
    as the text answer it states (`text_answers.text_answer`)."""
    meta, target = problem.meta, str(problem.target)
    if meta["question_type"] == "multi_choice":
        parsed = _mathvista_choice(answer, meta["options"])
        return Scored(parsed, float(parsed.strip() == target.strip()))
    if meta["answer_type"] == "integer":  # exactly: 2.4 is no answer to "how many inches"
        return Scored(answer, float(numeric_match(answer, target, question=problem.question)))
    if meta["answer_type"] == "float":
        precision = int(meta["precision"] or 0)
        return Scored(answer, float(numeric_match(answer, target, precision, problem.question)))
    if meta["answer_type"] == "list":
        wanted = extract_numbers(target)
        return Scored(
            answer, float(bool(wanted) and extract_numbers(answer_span(answer)) == wanted)
        )
    stated = text_answer(answer, problem.question)  # "Germany has the highest value, at 41%."
    return Scored(stated, float(relaxed_match(answer, target, question=problem.question)))


def _mathvista_choice(answer: str, options: list[str]) -> str:
    """MathVista's normalisation: a letter picks its option; else, for a short answer (what its
    extractor returns) that names nothing, the nearest option text. A longer answer that names
    no option, or one that offers two, picks none."""
    if not options:
        return answer
    letters = option_letters(len(options))
    choice = read_choice(answer, letters, options)
    if choice.letter is not None:
        return options[ord(choice.letter) - ord("A")]
    if not choice.open:
        return answer  # "B or C" hedges; "B. 10" with 10 option C: the letter and text disagree
    return closest_option(answer, options) if len(answer.split()) <= 5 else answer


TASK = PolicyTask(
    name="mathvista_testmini",
    dataset=DatasetRef(("AI4Math/MathVista",), "testmini"),
    fields={
        "query": "query",
        "question": "question",
        "unit": "unit",
        "answer": "answer",
        "choices": "choices",
        "question_type": "question_type",
        "answer_type": "answer_type",
        "precision": "precision",
        "image": ("decoded_image", "image"),
    },
    problem=build_problem,
    score=score,
    aggregate=metrics.accuracy_by("question_type"),
    scoring=(
        "rule-based answer extraction (boxed, 'answer is', nearest option) in place of "
        "MathVista's GPT answer extractor; then MathVista's own normalisation and exact match"
    ),
    judged_upstream=True,
)
