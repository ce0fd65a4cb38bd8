"""The `lmms-eval` protocol: what lmms-eval 0.7.3 gives `--model qwen2_5_vl` on each task, and
`--model qwen3_vl` to a Qwen3-VL model.

Each builder repeats the task's `doc_to_text` / `doc_to_messages` under the resolved default
`lmms_eval_specific_kwargs`, and the YAML's `generation_kwargs` merged over the chat model's
defaults (128 new tokens, greedy; a temperature above 0 samples whatever `do_sample` says). The
prompt code is the same at commit 75571cfe; `docs/reference/lmms_eval_qwen2_5_vl.md` holds the
source of every fact, and `tests/fixtures/protocols/lmms_eval_snapshots.json`, rendered by
lmms-eval's own functions, pins the strings (`lmms_eval_qwen3_vl_snapshots.json` those of
`--model qwen3_vl`: its YAML entries change the prompts of mmmu_val, mmstar and videomme, the
others resolve to the same `default`).
"""

from __future__ import annotations

import re
from typing import Any

from mmcritic.eval.choices import option_letters
from mmcritic.eval.protocols.prompt import Decoding, Prompt, TaskPrompt, media_first
from mmcritic.eval.tasks import Pair, Problem, Row

VERSION = "lmms-eval 0.7.3"
GREEDY_128 = Decoding(128)  # the chat model's defaults, for YAMLs without generation_kwargs
DIRECT_LETTER = "Answer with the option's letter from the given choices directly."
SHORT_ANSWER = "Answer the question using a single word or phrase."
_IMAGE_TOKEN = re.compile(r"<image \d+>")


def _lettered(options: list[Any], separator: str = ". ") -> str:
    return "\n".join(f"{letter}{separator}{option}" for letter, option in _zip_letters(options))


def _zip_letters(options: list[Any]) -> list[tuple[str, Any]]:
    return list(zip(option_letters(len(options)), options, strict=True))


# mmmu_val: `mmmu_doc_to_messages`, images where the question refers to them.


def mmmu(row: Row, problem: Problem) -> Prompt:
    """The i-th referred image (by ascending name) goes where the i-th `<image N>` stood, each
    text piece stripped; text between placeholders beyond the image count is dropped and the
    last piece always closes the message, as lmms-eval's loop does. A question without
    placeholders shows no image."""
    options = problem.meta["options"]
    if row["question_type"] == "multiple-choice":
        text = f"{row['question']}\n{_lettered(options)}\n\n{DIRECT_LETTER}"
    else:
        text = f"{row['question']}\n\n{SHORT_ANSWER}"
    images = _referred_images(row, text)
    pieces = re.sub(r"<image [1-7]>", "<image>", text).split("<image>")
    parts: list[str | int] = []
    for index in range(len(images)):
        if index < len(pieces) - 1 and pieces[index].strip():
            parts.append(pieces[index].strip())
        parts.append(index)
    parts.append(pieces[-1].strip())
    return Prompt(tuple(parts), images)


def _referred_images(row: Row, text: str) -> tuple[Any, ...]:
    """`mmmu_doc_to_visual`: the row's images the text refers to (`<image N>`), by name."""
    names = sorted({token.strip("<>").replace(" ", "_") for token in _IMAGE_TOKEN.findall(text)})
    return tuple(row[name] for name in names)


# mathvista_testmini: the `format-prompt` variant (`mathvista_testmini_format`).

_MATHVISTA_FORMAT_HINTS = {
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


def mathvista(row: Row, problem: Problem) -> Prompt:
    """`create_one_query` with `shot_type="format-prompt"`, zero shots, no caption or OCR: of
    the three variants `--tasks mathvista_testmini` runs, the one that asks for the answer
    directly, which rule-based reading can score without lmms-eval's GPT extractor."""
    question = str(row["question"])
    unit = row.get("unit")
    if unit:
        question += f" (Unit: {unit})"
    choices = [str(choice) for choice in problem.meta["options"]]
    elements = [question, _lettered(choices) if choices else "", _mathvista_hint(row)]
    text = "\n".join(element for element in elements if element).strip()
    return media_first(text, [row["image"]])


def _mathvista_hint(row: Row) -> str:
    if row["question_type"] == "multi_choice":
        return DIRECT_LETTER
    answer_type = row["answer_type"]
    key = (answer_type, int(row.get("precision") or 0)) if answer_type == "float" else answer_type
    if key not in _MATHVISTA_FORMAT_HINTS:
        raise ValueError(
            f"mathvista_testmini row {row.doc_id}: lmms-eval has no format hint for answer type "
            f"{key}; its own query builder fails on this row"
        )
    return _MATHVISTA_FORMAT_HINTS[key]


def mathvision(row: Row, problem: Problem) -> Prompt:
    """`mathvision_doc_to_text`: a fixed instruction, then the question with no separator."""
    options = problem.meta["options"]
    text = 'Please solve the problem step by step and put your answer in one "\\boxed{}".'
    if options:
        mc_prompt = "Answer the question with the option's letter from the given choices directly."
        text += f"{row['question']}\nChoices: {_lettered(options)}\n{mc_prompt}"
    else:
        text += str(row["question"])
    return media_first(text, [row["image"]])


def mathverse(row: Row, problem: Problem) -> Prompt:
    """`format-prompt` with `query_wo`: the dataset's own direct-answer query, stripped; no
    image when the row's image is empty (text-only versions)."""
    image = row.get("image")
    images = [] if image is None or str(image).strip() == "" else [image]
    text = str(row["query_wo"]).strip()
    return media_first(text, images)


def mmstar(row: Row, problem: Problem) -> Prompt:
    """The question (its options are part of it) and the post prompt, which has no period."""
    question = str(row["question"]).strip().replace(" Please answer yes or no.", "")
    text = f"{question}\nAnswer with the option's letter from the given choices directly"
    return media_first(text, [row["image"]])


def ai2d(row: Row, problem: Problem) -> Prompt:
    text = f"{row['question']}\n{_lettered(problem.meta['options'])}\n{DIRECT_LETTER}"
    return media_first(text, [row["image"]])


def chartqa(row: Row, problem: Problem) -> Prompt:
    text = f"{row['question']}\nAnswer the question with a single word."
    return media_first(text, [row["image"]])


def docvqa(row: Row, problem: Problem) -> Prompt:
    text = f"{row['question']}\n{SHORT_ANSWER}"
    return media_first(text, [row["image"]])


def ocrbench(row: Row, problem: Problem) -> Prompt:
    text = str(row["question"]).strip()
    return media_first(text, [row["image"]])


def hallusionbench(row: Row, problem: Problem) -> Prompt:
    """The question as stored (not stripped), with the row's image whenever it has one."""
    image = row.get("image")
    images = [image] if image is not None else []
    return media_first(str(row["question"]), images)


def realworldqa(row: Row, problem: Problem) -> Prompt:
    """The stored question, stripped; its own instruction stays, as the post prompt is empty."""
    text = str(row["question"]).strip()
    return media_first(text, [row["image"]])


def blink(row: Row, problem: Problem) -> Prompt:
    """`blink_doc_to_messages`: every image first, then the note naming the letters."""
    letters = ", ".join(option_letters(len(problem.meta["options"])))
    note = f"Note: You only need to respond with {letters} without providing any additional "
    text = f"{note}information.\n{row['prompt']}"
    images = [row.get(f"image_{n}") for n in range(1, 5)]
    shown = [image for image in images if image is not None]
    return media_first(text, shown)


_MMVU_MULTIPLE_CHOICE = (
    "\nQuestion:{question}\nA: {A}\nB: {B}\nC: {C}\nD: {D}\nE: {E}\nVisual Information: "
    "processed video\nDo not generate any intermediate reasoning process. Answer directly with "
    "the option letter from the\ngiven choices.\n"
)
_MMVU_OPEN = (
    "\nQuestion:{question}\nVisual Information: processed video\nDo not generate any "
    "intermediate reasoning process. Directly output the final answer.\n"
)


def mmvu(row: Row, problem: Problem) -> Prompt:
    """`mmvu_doc_to_text`."""
    question = row["question"]
    if row["question_type"] == "multiple-choice":
        choices = problem.meta["choices"]
        values = {letter: choices.get(letter) for letter in "ABCDE"}
        text = _MMVU_MULTIPLE_CHOICE.format(question=question, **values)
    else:
        text = _MMVU_OPEN.format(question=question)
    return media_first(text, videos=[row["video"]])


def videomme(row: Row, problem: Problem) -> Prompt:
    instruction = (
        "Select the best answer to the following multiple-choice question based on the video "
        "and the subtitles. Respond with only the letter (A, B, C, or D) of the correct option."
    )
    options = "\n".join(str(option) for option in problem.meta["option_lines"])
    text = f"{instruction}\n{row['question']}\n{options}\n\n{DIRECT_LETTER}"
    return media_first(text, videos=problem.videos)


# `--model qwen3_vl`: the YAMLs' `qwen3_vl` entries, lmms-eval's adaptation of the Qwen3-VL
# report's prompts (`*_doc_to_text_qwen3vl`; MMMU then shows every image before the text).
QWEN3_VL_LETTER = "Answer with the option letter only."
QWEN3_VL_OPEN_ENDED = "Please select the correct answer from the options above."


def mmmu_qwen3_vl(row: Row, problem: Problem) -> Prompt:
    """`mmmu_doc_to_messages_qwen3vl`: the referred images first (by ascending name, found in
    the question and, for a multiple-choice one, its options), then the text with its
    `<image N>` placeholders kept."""
    lettered = _lettered(problem.meta["options"])
    multiple_choice = row["question_type"] == "multiple-choice"
    ending = QWEN3_VL_LETTER if multiple_choice else QWEN3_VL_OPEN_ENDED
    text = f"Question: {row['question']}\nOptions:\n{lettered}\n{ending}"
    referring = f"{row['question']}\n{lettered}" if multiple_choice else row["question"]
    return media_first(text, _referred_images(row, referring))


def mmstar_qwen3_vl(row: Row, problem: Problem) -> Prompt:
    """`mmstar_doc_to_text` with the qwen3_vl pre and post prompts (no newline before it)."""
    question = str(row["question"]).strip().replace(" Please answer yes or no.", "")
    return media_first(f"Question: {question}{QWEN3_VL_LETTER}", [row["image"]])


def videomme_qwen3_vl(row: Row, problem: Problem) -> Prompt:
    """`videomme_doc_to_text_qwen3vl`."""
    options = "\n".join(str(option) for option in problem.meta["option_lines"])
    text = f"Question: {row['question']}\nOptions:\n{options}\n{QWEN3_VL_LETTER}"
    return media_first(text, videos=problem.videos)


def _task(build, decoding: Decoding, path: str) -> TaskPrompt:
    return TaskPrompt(build, decoding, f"{VERSION} lmms_eval/tasks/{path}")


# The YAMLs' generation_kwargs; mmvu's temperature 0.7 makes the chat model sample although the
# YAML says do_sample false (the chat class samples whenever the temperature is above 0).
POLICY = {
    "mmmu_val": _task(mmmu, GREEDY_128, "mmmu/utils.py"),
    "mathvista_testmini": _task(mathvista, Decoding(16384), "mathvista/mathvista_evals.py"),
    "mathvision_testmini": _task(mathvision, Decoding(16384), "mathvision/utils.py"),
    "mathverse_testmini": _task(mathverse, Decoding(16384), "mathverse/mathverse_evals.py"),
    "mmstar": _task(mmstar, GREEDY_128, "mmstar/utils.py"),
    "ai2d": _task(ai2d, Decoding(16), "ai2d/utils.py"),
    "chartqa": _task(chartqa, Decoding(16), "chartqa/utils.py"),
    "docvqa_val": _task(docvqa, Decoding(32), "docvqa/utils.py"),
    "ocrbench": _task(ocrbench, GREEDY_128, "ocrbench/utils.py"),
    "hallusionbench": _task(hallusionbench, GREEDY_128, "hallusion_bench/evaluate_hb.py"),
    "realworldqa": _task(realworldqa, Decoding(16), "realworldqa/utils.py"),
    "blink": _task(blink, Decoding(1024), "blink/utils.py"),
    "mmvu": _task(mmvu, Decoding(1024, temperature=0.7), "mmvu/utils.py"),
    "videomme": _task(videomme, Decoding(16), "videomme/utils.py"),
}


POLICY_QWEN3_VL = POLICY | {
    "mmmu_val": _task(mmmu_qwen3_vl, GREEDY_128, "mmmu/utils.py (qwen3_vl)"),
    "mmstar": _task(mmstar_qwen3_vl, GREEDY_128, "mmstar/utils.py (qwen3_vl)"),
    "videomme": _task(videomme_qwen3_vl, Decoding(16), "videomme/utils.py (qwen3_vl)"),
}


# by lmms-eval model class; every class without its own prompts follows the chat path's
MODEL_POLICY = {"qwen3_vl": POLICY_QWEN3_VL}


def policy_prompts(model: str) -> dict[str, TaskPrompt]:
    """The policy prompts lmms-eval gives `--model MODEL`."""
    return MODEL_POLICY.get(model, POLICY)


# Critic suites: the judge prompts lmms-eval ships.

VL_REWARDBENCH_JUDGE = (
    " You are a highly capable multimodal AI assistant tasked with evaluating answers to visual "
    "questions. Please analyze the following image and question, then determine which of the two "
    "provided answers is better.\n\nQuestion: {question}\n\nAnswer 1: {answer_1}\n\nAnswer 2: "
    "{answer_2}\n\nPlease evaluate both answers based on the following criteria:\n1. Accuracy: "
    "How well does the answer align with the visual information in the image?\n2. Completeness: "
    "Does the answer fully address all aspects of the question?\n3. Clarity: Is the answer easy "
    "to understand and well-articulated?\n4. Relevance: Does the answer directly relate to the "
    "question and the image?\n\nAfter your evaluation, please:\n1. Explain your reasoning for "
    "each criterion.\n2. Provide an overall judgment on which answer is better (Answer 1 or "
    "Answer 2). For example: Overall Judgment: Answer X is better.\n\nYour response should be "
    "structured and detailed, demonstrating your understanding of both the visual and textual "
    "elements of the task."
)
MULTIMODAL_REWARDBENCH_JUDGE = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two "
    "AI assistants to the user question displayed below. You should choose the assistant that "
    "follows the user's instructions and answers the user's question better. Your evaluation "
    "should consider factors such as the helpfulness, relevance, accuracy, depth, creativity, "
    "and level of detail of their responses. Begin your evaluation by comparing the two "
    "responses and provide a short explanation. Avoid any position biases and ensure that the "
    "order in which the responses were presented does not influence your decision. Do not allow "
    "the length of the responses to influence your evaluation. Do not favor certain names of the "
    "assistants. Be as objective as possible. After providing your explanation, output your "
    'final verdict by strictly following this format: "[[A]]" if assistant A is better, "[[B]]" '
    "if assistant B is better.\n\n[User Question]\n{question}\n\n[The Start of Assistant A's "
    "Answer]\n{answer_1}\n[The End of Assistant A's Answer]\n\n[The Start of Assistant B's "
    "Answer]\n{answer_2}\n[The End of Assistant B's Answer]"
)


def judge(template: str):
    """A critic builder filling a judge template with the pair, in the order shown."""

    def build(pair: Pair, swapped: bool) -> Prompt:
        first, second = (pair.response_1, pair.response_2)
        if swapped:
            first, second = second, first
        text = template.format(question=pair.question, answer_1=first, answer_2=second)
        return media_first(text, pair.images, pair.videos)

    return build


# VL-RewardBench samples (temperature 1.0, do_sample true); Multimodal RewardBench is greedy.
CRITIC = {
    "vl_rewardbench": _task(
        judge(VL_REWARDBENCH_JUDGE), Decoding(1024, temperature=1.0), "vl_rewardbench/utils.py"
    ),
    "multimodal_rewardbench": _task(
        judge(MULTIMODAL_REWARDBENCH_JUDGE), Decoding(1024), "multimodal_rewardbench/utils.py"
    ),
}
