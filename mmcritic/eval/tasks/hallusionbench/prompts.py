"""HallusionBench's prompts: the question as stored, under lmms-eval and the release alike."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    """The question as stored (not stripped), with the row's image whenever it has one."""
    image = row.get("image")
    images = [image] if image is not None else []
    return media_first(str(row["question"]), images)


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """The question as stored; the release adds no wrapper. Questions asked without their
    figure show none."""
    return media_first(str(row["question"]), problem.images)


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(
        lmms_eval_prompt, lmms_eval.GREEDY_128, "hallusion_bench/evaluate_hb.py"
    ),
    "official": official.released(
        official_prompt, official.GREEDY_128, "tianyi-lab/HallusionBench, the question [744007c]"
    ),
}
