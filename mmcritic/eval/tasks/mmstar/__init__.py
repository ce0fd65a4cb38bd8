"""MMStar (val): multiple-choice questions over six core capabilities.

Official scoring: the option letter; `average` is the macro mean over the 6 categories.
"""

from mmcritic.eval.tasks.mmstar.prompts import PROMPTS
from mmcritic.eval.tasks.mmstar.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
