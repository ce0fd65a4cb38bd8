"""RealWorldQA (test): options are written in the question; some answers are not letters."""

from __future__ import annotations

import re

from mmcritic.eval import metrics
from mmcritic.eval.answers import parse_number, plain_words, same_words
from mmcritic.eval.scorers import numeric_match
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import MC_INSTRUCTION, mc_score
from mmcritic.eval.text_answers import text_answer
from mmcritic.eval.yes_no import yes_no
from mmcritic.reading.statements import STOP_WORDS, content_words, english_gloss
from mmcritic.reading.structure import reading_of

HEADLINE = "accuracy"
_RWQA_DIRECT = "Please answer directly with only the letter of the correct option and nothing else."
_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[.)]\s+(.+?)\s*$", re.MULTILINE)
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def build_problem(row: Row) -> Problem:
    question = row["question"].strip()
    if _RWQA_DIRECT in question:
        question = question.replace(_RWQA_DIRECT, MC_INSTRUCTION)
    options = dict(_OPTION_LINE.findall(row["question"]))
    meta = {"letters": sorted(options), "options": [options[k] for k in sorted(options)]}
    asked = row["question"].strip().split("\n", 1)[0]
    return Problem(
        question, str(row["answer"]).strip(), images=[row["image"]], meta=meta, question=asked
    )


def score(answer: str, problem: Problem) -> Scored:
    """The option letter (`common.mc_score`) for a letter target; yes or no (`yes_no.yes_no`);
    a number (`scorers.numeric_match`); else the answer's words against the target's."""
    target = str(problem.target)
    if target.upper() in problem.meta["letters"]:
        return mc_score(answer, problem)
    if plain_words(target) in ("yes", "no"):
        return Scored(answer, float(yes_no(answer) == plain_words(target)))
    if parse_number(target) is not None and _PLAIN_NUMBER.fullmatch(target.strip()):
        return Scored(answer, float(numeric_match(answer, target, question=problem.question)))
    stated = text_answer(answer, problem.question)
    said = [stated, answer, _without_question_words(stated, problem.question)]
    said.append(english_gloss(answer) or "")  # "El camión es verde." says "green"
    # "It is on the right side of the road." says "right"
    if not reading_of(answer).has("negation"):
        said.append(_without_question_words(answer, problem.question))
        said.append(_head_word(stated))  # "A school bus." is a bus
    return Scored(answer, float(any(same_words(text, target) for text in said)))


def _without_question_words(text: str, question: str) -> str:
    """An answer less the words it repeats from the question, in any inflection ("right side
    of the road" for "Which side of the road ...?" says "right"; "The arrow points to the
    left." for "Which direction does the arrow point?" says "left")."""
    asked = {word.removesuffix("s") for word in content_words(question) | STOP_WORDS}
    kept = [word for word in plain_words(text).split() if word.removesuffix("s") not in asked]
    return " ".join(kept)


def _head_word(text: str) -> str:
    """The last word of a short noun phrase ("school bus" is a "bus"); empty for longer text."""
    words = [word for word in plain_words(text).split() if word not in STOP_WORDS]
    return words[-1] if 1 < len(words) <= 3 else ""


TASK = PolicyTask(
    name="realworldqa",
    dataset=DatasetRef(("lmms-lab/RealWorldQA", "lmms-lab-encoder/RealWorldQA"), "test"),
    fields={"question": "question", "answer": "answer", "image": "image"},
    problem=build_problem,
    score=score,
    aggregate=metrics.accuracy,
    scoring="rule-based: option letter, or exact match (number words as digits)",
)
