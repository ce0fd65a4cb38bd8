"""Video-MME's prompts: lmms-eval's `videomme_doc_to_text` (and its qwen3_vl entry) and the
README's prompt without subtitles."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    instruction = (
        "Select the best answer to the following multiple-choice question based on the video "
        "and the subtitles. Respond with only the letter (A, B, C, or D) of the correct option."
    )
    options = "\n".join(str(option) for option in problem.meta["option_lines"])
    text = f"{instruction}\n{row['question']}\n{options}\n\n{lmms_eval.DIRECT_LETTER}"
    return media_first(text, videos=problem.videos)


def lmms_eval_qwen3_vl_prompt(row: Row, problem: Problem) -> Prompt:
    """`videomme_doc_to_text_qwen3vl`."""
    options = "\n".join(str(option) for option in problem.meta["option_lines"])
    text = f"Question: {row['question']}\nOptions:\n{options}\n{lmms_eval.QWEN3_VL_LETTER}"
    return media_first(text, videos=problem.videos)


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """The README's prompt without subtitles."""
    options = "\n".join(problem.meta["option_lines"])
    text = (
        "Select the best answer to the following multiple-choice question based on the video. "
        "Respond with only the letter (A, B, C, or D) of the correct option.\n"
        f"{row['question']}\n{options}\nThe best answer is:"
    )
    return media_first(text, videos=problem.videos)


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(lmms_eval_prompt, Decoding(16), "videomme/utils.py"),
    lmms_eval.model_key("qwen3_vl"): lmms_eval.from_task_file(
        lmms_eval_qwen3_vl_prompt, Decoding(16), "videomme/utils.py (qwen3_vl)"
    ),
    "official": official.released(
        official_prompt, Decoding(16), "BradyFU/Video-MME README [8889f31]"
    ),
}
