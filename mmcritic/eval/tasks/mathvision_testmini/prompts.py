"""MathVision's prompts: lmms-eval's `mathvision_doc_to_text` and the release's Qwen-VL
chain-of-thought prompt."""

from __future__ import annotations

from mmcritic.eval.choices import option_letters
from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    """`mathvision_doc_to_text`: a fixed instruction, then the question with no separator."""
    options = problem.meta["options"]
    text = 'Please solve the problem step by step and put your answer in one "\\boxed{}".'
    if options:
        mc_prompt = "Answer the question with the option's letter from the given choices directly."
        text += f"{row['question']}\nChoices: {lmms_eval.lettered(options)}\n{mc_prompt}"
    else:
        text += str(row["question"])
    return media_first(text, [row["image"]])


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """`models/Qwen-VL.py`'s chain-of-thought prompt, the Qwen family's in the release; the
    options are left out when they are only the letters A to E (drawn in the figure)."""
    options = problem.meta["options"]
    listed = "" if options == option_letters(len(options)) else official.parenthesised(options)
    instruction = (
        'Please solve the problem step by step and put your answer in one "\\boxed{}". If it is '
        'a multiple choice question, only one letter is allowed in the "\\boxed{}".\n'
    )
    return media_first(f"{instruction}{row['question']}\n{listed}", problem.images)


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(lmms_eval_prompt, Decoding(16384), "mathvision/utils.py"),
    "official": official.released(
        official_prompt, Decoding(4096), "mathllm/MATH-V models/Qwen-VL.py [a1f5cc3]"
    ),
}
