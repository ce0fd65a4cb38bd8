"""VL-RewardBench (test): which of two responses to a visual question is better.

Official scoring: the verdict read by the rule 'Overall Judgment: Answer X is better', with the
pair shown in lmms-eval's length-parity order; overall accuracy and the macro accuracy over
general, hallucination and reasoning.
"""

from mmcritic.eval.tasks.vl_rewardbench.prompts import PROMPTS
from mmcritic.eval.tasks.vl_rewardbench.task import HEADLINE, TASK
from mmcritic.eval.tasks.vl_rewardbench.verdicts import READERS

__all__ = ["HEADLINE", "PROMPTS", "READERS", "TASK"]
