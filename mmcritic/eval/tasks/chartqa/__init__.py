"""ChartQA (test): questions over charts.

Official scoring: relaxed accuracy (within 5% on numbers, exact match otherwise).
"""

from mmcritic.eval.tasks.chartqa.prompts import PROMPTS
from mmcritic.eval.tasks.chartqa.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
