"""MM-RLHF-RewardBench: which of a chosen and a rejected response is better, over images and
videos.

Official scoring: Acc per pair and Acc+ per question (every pair built from its responses
right), overall and per category, as in the benchmark's released scoring.
"""

from collections.abc import Callable

from mmcritic.eval.tasks.mm_rlhf_rewardbench.prompts import PROMPTS
from mmcritic.eval.tasks.mm_rlhf_rewardbench.task import HEADLINE, TASK
from mmcritic.rewards.parsing import Judgement

# no verdict rule of its own: read as a box, else the verdict stated in words, under every
# protocol
READERS: dict[str, Callable[[str], Judgement]] = {}

__all__ = ["HEADLINE", "PROMPTS", "READERS", "TASK"]
