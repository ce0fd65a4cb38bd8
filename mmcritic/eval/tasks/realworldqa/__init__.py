"""RealWorldQA (test): questions over real-world photographs; the options are written in the
question, and some answers are not letters.

Official scoring: the option letter, or exact match (number words as digits).
"""

from mmcritic.eval.tasks.realworldqa.prompts import PROMPTS
from mmcritic.eval.tasks.realworldqa.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
