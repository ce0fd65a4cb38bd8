"""RealWorldQA's prompt: lmms-eval's; RealWorldQA releases none, so the official protocol uses
it too."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    """The stored question, stripped; its own instruction stays, as the post prompt is empty."""
    text = str(row["question"]).strip()
    return media_first(text, [row["image"]])


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(lmms_eval_prompt, Decoding(16), "realworldqa/utils.py")
}
