"""MMMU (validation): multiple-choice and open questions over college subjects.

Official scoring: MMMU's official parser (the option letter for a multiple-choice question, its
open-answer matching otherwise), micro accuracy, reported per subject.
"""

from mmcritic.eval.tasks.mmmu_val.prompts import PROMPTS
from mmcritic.eval.tasks.mmmu_val.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
