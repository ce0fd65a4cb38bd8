"""HallusionBench (image split): yes/no questions, some asked without their figure.

Official scoring: GPT-4 judges each answer correct, incorrect or unclear against the reference
(`judge.txt`), unclear being right only for a question asked without its figure; aAcc per
question, qAcc per question over its figures, fAcc per figure over its questions.
"""

from mmcritic.eval.tasks.hallusionbench.prompts import PROMPTS
from mmcritic.eval.tasks.hallusionbench.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
