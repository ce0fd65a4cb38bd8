"""BLINK (val): multi-image multiple choice, one dataset config per sub-task.

Official scoring: the option letter.
"""

from mmcritic.eval.tasks.blink.prompts import PROMPTS
from mmcritic.eval.tasks.blink.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
