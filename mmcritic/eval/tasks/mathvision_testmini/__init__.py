"""MathVision (testmini): math questions over a figure, with or without options.

Official scoring: the boxed answer's equivalence to the reference (math-verify), as the paper
reports it.
"""

from mmcritic.eval.tasks.mathvision_testmini.prompts import PROMPTS
from mmcritic.eval.tasks.mathvision_testmini.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
