"""MMVU's prompts: lmms-eval's `mmvu_doc_to_text` and the release's chain-of-thought
templates."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row

_LMMS_EVAL_MULTIPLE_CHOICE = (
    "\nQuestion:{question}\nA: {A}\nB: {B}\nC: {C}\nD: {D}\nE: {E}\nVisual Information: "
    "processed video\nDo not generate any intermediate reasoning process. Answer directly with "
    "the option letter from the\ngiven choices.\n"
)
_LMMS_EVAL_OPEN = (
    "\nQuestion:{question}\nVisual Information: processed video\nDo not generate any "
    "intermediate reasoning process. Directly output the final answer.\n"
)
_COT_CHOICE = (
    "\nQuestion: {question}\n{options}\n\nAnswer the given multiple-choice question step by "
    "step. Begin by explaining your reasoning process clearly. Conclude by stating the final "
    "answer using the following format: 'Therefore, the final answer is: $LETTER' (without "
    "quotes), where $LETTER is one of the options. Think step by\nstep before answering."
)
_COT_OPEN = (
    "\nQuestion: {question}\n\nAnswer the given question step by step. Begin by explaining your "
    "reasoning process clearly. Conclude by stating the final answer using the following format: "
    "'Therefore, the final answer is: 'Answer: $ANSWER' (without quotes), where $ANSWER is the "
    "final answer of the question. Think step by step\nbefore answering."
)


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    """`mmvu_doc_to_text`."""
    question = row["question"]
    if row["question_type"] == "multiple-choice":
        choices = problem.meta["choices"]
        values = {letter: choices.get(letter) for letter in "ABCDE"}
        text = _LMMS_EVAL_MULTIPLE_CHOICE.format(question=question, **values)
    else:
        text = _LMMS_EVAL_OPEN.format(question=question)
    return media_first(text, videos=[row["video"]])


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """`utils/constant.py`'s chain-of-thought templates, the default of the release's
    `main.py`; the options are the row's `choices` as `A: text` lines; frames first."""
    if row["question_type"] == "multiple-choice":
        choices = problem.meta["choices"]
        options = "\n".join(f"{key}: {value}" for key, value in choices.items())
        text = _COT_CHOICE.format(question=row["question"], options=options)
    else:
        text = _COT_OPEN.format(question=row["question"])
    return media_first(text, videos=problem.videos)


# lmms-eval's temperature 0.7 makes the chat model sample although the YAML says do_sample
# false (the chat class samples whenever the temperature is above 0).
PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(
        lmms_eval_prompt, Decoding(1024, temperature=0.7), "mmvu/utils.py"
    ),
    "official": official.released(
        official_prompt,
        Decoding(1024, temperature=1.0),
        "yale-nlp/MMVU utils/constant.py, CoT [4d54223]",
    ),
}
