"""MathVerse (testmini): multiple-choice and free-form math questions, in several problem
versions.

Official scoring: GPT-4 extracts the answer from the response's last words
(`judge_extract.txt`), then judges the extraction 0 or 1 against the standard answer
(`judge_score.txt`).
"""

from mmcritic.eval.tasks.mathverse_testmini.prompts import PROMPTS
from mmcritic.eval.tasks.mathverse_testmini.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
