"""MMVU (validation): questions over videos, multiple choice (A-E) or open-ended.

Official scoring: the option letter for multiple choice; an open-ended answer by MMVU's
rule-based match (yale-nlp/MMVU; lmms-eval's `evaluate_with_rule_based`), and lmms-eval asks a
GPT judge (`judge_open_ended.txt`) about the open-ended answers the rules reject.
"""

from mmcritic.eval.tasks.mmvu.prompts import PROMPTS
from mmcritic.eval.tasks.mmvu.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
