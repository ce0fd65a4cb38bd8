"""OCRBench (test): text recognition and text-centred questions over images.

Official scoring: the reference contained in the answer (OCRBench's own rule); the score is the
count of correct answers, out of 1,000 on the full set.
"""

from mmcritic.eval.tasks.ocrbench.prompts import PROMPTS
from mmcritic.eval.tasks.ocrbench.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
