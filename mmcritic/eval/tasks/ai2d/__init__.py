"""AI2D (test): multiple-choice questions over science diagrams.

Official scoring: the option letter, exact match.
"""

from mmcritic.eval.tasks.ai2d.prompts import PROMPTS
from mmcritic.eval.tasks.ai2d.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
