"""DocVQA (validation): questions over document images, with several reference answers.

Official scoring: ANLS over the reference answers, with threshold 0.5.
"""

from mmcritic.eval.tasks.docvqa_val.prompts import PROMPTS
from mmcritic.eval.tasks.docvqa_val.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
