"""MathVista (testmini): math questions over a figure, multiple choice or free-form.

Official scoring: GPT extracts the answer from the response (MathVista's few-shot prompt,
`judge_extract.txt`), then MathVista's own normalisation and exact match score the extraction.
"""

from mmcritic.eval.tasks.mathvista_testmini.prompts import PROMPTS
from mmcritic.eval.tasks.mathvista_testmini.task import HEADLINE, TASK

__all__ = ["HEADLINE", "PROMPTS", "TASK"]
