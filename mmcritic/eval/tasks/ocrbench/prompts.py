"""OCRBench's prompts: lmms-eval's and the release's `example.py`, both the stored question."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    text = str(row["question"]).strip()
    return media_first(text, [row["image"]])


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """The question as stored (`example.py`)."""
    return media_first(str(row["question"]), problem.images)


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(
        lmms_eval_prompt, lmms_eval.GREEDY_128, "ocrbench/utils.py"
    ),
    "official": official.released(
        official_prompt, Decoding(100), "Yuliang-Liu/MultimodalOCR OCRBench/example.py [794c36d]"
    ),
}
