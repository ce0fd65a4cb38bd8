"""AI2D's prompt: lmms-eval's; AI2D releases none, so the official protocol uses it too."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    text = f"{row['question']}\n{lmms_eval.lettered(problem.meta['options'])}\n"
    return media_first(f"{text}{lmms_eval.DIRECT_LETTER}", [row["image"]])


PROMPTS = {"lmms-eval": lmms_eval.from_task_file(lmms_eval_prompt, Decoding(16), "ai2d/utils.py")}
