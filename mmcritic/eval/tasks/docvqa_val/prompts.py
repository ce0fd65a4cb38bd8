"""DocVQA's prompt: lmms-eval's; DocVQA releases none, so the official protocol uses it too."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    text = f"{row['question']}\n{lmms_eval.SHORT_ANSWER}"
    return media_first(text, [row["image"]])


PROMPTS = {"lmms-eval": lmms_eval.from_task_file(lmms_eval_prompt, Decoding(32), "docvqa/utils.py")}
