"""MMMU's prompts: lmms-eval's (`mmmu_doc_to_messages`, and its qwen3_vl entry) and MMMU's own
`construct_prompt`."""

from __future__ import annotations

import re
from typing import Any

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Prompt, media_first
from mmcritic.eval.tasks import Problem, Row
from mmcritic.eval.tasks.mmmu_val.task import IMAGE_TOKEN


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    """`mmmu_doc_to_messages`, images where the question refers to them: the i-th referred
    image (by ascending name) goes where the i-th `<image N>` stood, each text piece stripped;
    text between placeholders beyond the image count is dropped and the last piece always
    closes the message, as lmms-eval's loop does. A question without placeholders shows no
    image."""
    options = problem.meta["options"]
    if row["question_type"] == "multiple-choice":
        text = f"{row['question']}\n{lmms_eval.lettered(options)}\n\n{lmms_eval.DIRECT_LETTER}"
    else:
        text = f"{row['question']}\n\n{lmms_eval.SHORT_ANSWER}"
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
    names = sorted({f"image_{number}" for number in IMAGE_TOKEN.findall(text)})
    return tuple(row[name] for name in names)


def lmms_eval_qwen3_vl_prompt(row: Row, problem: Problem) -> Prompt:
    """`mmmu_doc_to_messages_qwen3vl`: the referred images first (by ascending name, found in
    the question and, for a multiple-choice one, its options), then the text with its
    `<image N>` placeholders kept."""
    lettered = lmms_eval.lettered(problem.meta["options"])
    multiple_choice = row["question_type"] == "multiple-choice"
    ending = lmms_eval.QWEN3_VL_LETTER if multiple_choice else lmms_eval.QWEN3_VL_OPEN_ENDED
    text = f"Question: {row['question']}\nOptions:\n{lettered}\n{ending}"
    referring = f"{row['question']}\n{lettered}" if multiple_choice else row["question"]
    return media_first(text, _referred_images(row, referring))


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """MMMU's `construct_prompt` with `configs/llava1.5.yaml` (the YAML's folded lines are single
    newlines; the options' own trailing newline leaves a blank line before the instruction). The
    markers stay in the text and the images come first."""
    if row["question_type"] == "multiple-choice":
        options = official.parenthesised(problem.meta["options"])
        instruction = "Answer with the option's letter from the given choices directly."
        text = f"{row['question']}\n{options}\n{instruction}"
    else:
        text = f"{row['question']}\nAnswer the question using a single word or phrase."
    return media_first(text, problem.images)


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(lmms_eval_prompt, lmms_eval.GREEDY_128, "mmmu/utils.py"),
    lmms_eval.model_key("qwen3_vl"): lmms_eval.from_task_file(
        lmms_eval_qwen3_vl_prompt, lmms_eval.GREEDY_128, "mmmu/utils.py (qwen3_vl)"
    ),
    "official": official.released(
        official_prompt,
        official.GREEDY_128,
        "MMMU-Benchmark/MMMU mmmu/configs/llava1.5.yaml [bb0b95a]",
    ),
}
