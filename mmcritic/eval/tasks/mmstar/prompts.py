"""MMStar's prompts: lmms-eval's `mmstar_doc_to_text` (and its qwen3_vl entry) and the
authors' evaluation code's."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    """The question (its options are part of it) and the post prompt, which has no period."""
    question = str(row["question"]).strip().replace(" Please answer yes or no.", "")
    text = f"{question}\nAnswer with the option's letter from the given choices directly"
    return media_first(text, [row["image"]])


def lmms_eval_qwen3_vl_prompt(row: Row, problem: Problem) -> Prompt:
    """`mmstar_doc_to_text` with the qwen3_vl pre and post prompts (no newline before it)."""
    question = str(row["question"]).strip().replace(" Please answer yes or no.", "")
    return media_first(f"Question: {question}{lmms_eval.QWEN3_VL_LETTER}", [row["image"]])


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """The reference model's prompt in the authors' evaluation code (`llava_next.py`): the
    question, which lists its options, and 'Answer the question directly.'"""
    return media_first(f"{row['question']}\nAnswer the question directly.", problem.images)


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(
        lmms_eval_prompt, lmms_eval.GREEDY_128, "mmstar/utils.py"
    ),
    lmms_eval.model_key("qwen3_vl"): lmms_eval.from_task_file(
        lmms_eval_qwen3_vl_prompt, lmms_eval.GREEDY_128, "mmstar/utils.py (qwen3_vl)"
    ),
    "official": official.released(
        official_prompt,
        Decoding(32),
        "MMStar-Benchmark/MMStar eval/vlmeval/vlm/llava_next.py [88f243a]",
    ),
}
