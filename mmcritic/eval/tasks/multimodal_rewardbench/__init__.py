"""Multimodal RewardBench: which of two responses is better, by reporting category.

Official scoring: the verdict read as `[[A]]`, then `[[B]]`, as the release reads them (where
the release draws a random label the verdict is wrong here, and counted), Output1 shown first;
overall and per-category accuracy.
"""

from mmcritic.eval.tasks.multimodal_rewardbench.prompts import PROMPTS
from mmcritic.eval.tasks.multimodal_rewardbench.task import HEADLINE, TASK
from mmcritic.eval.tasks.multimodal_rewardbench.verdicts import READERS

__all__ = ["HEADLINE", "PROMPTS", "READERS", "TASK"]
