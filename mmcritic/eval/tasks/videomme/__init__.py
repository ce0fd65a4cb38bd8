"""Video-MME (test): four-option questions over videos of several durations.

Official scoring: the option letter.
"""

from mmcritic.eval.tasks.videomme.prompts import PROMPTS
from mmcritic.eval.tasks.videomme.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
