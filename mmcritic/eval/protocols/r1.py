"""The `r1` protocol: LLaVA-Critic-R1's convention, as the model is trained.

Policy tasks ask the task's own question with the think/boxed instruction appended and decode
greedily up to `--max-new-tokens` (2,048 by default); critic suites use the pairwise template the
critic is trained on. Media come first, images before videos.
"""

from __future__ import annotations

from mmcritic.data.prompts import builtin_template, media_word, render
from mmcritic.eval.protocols.prompt import Decoding, Prompt, TaskPrompt, media_first
from mmcritic.eval.tasks import Pair, Problem, Row
from mmcritic.inference.critic import pairwise_text

SOURCE = "mmcritic r1: the task's question + the think/boxed instruction"
CRITIC_SOURCE = "mmcritic r1: the pairwise training template (mmcritic/data/templates)"
DEFAULT_MAX_NEW_TOKENS = 2048


def _policy(row: Row, problem: Problem, think_suffix: bool = True) -> Prompt:
    text = render(builtin_template("verifiable"), think_suffix, question=problem.text)
    return media_first(text, problem.images, problem.videos)


def _critic(pair: Pair, swapped: bool) -> Prompt:
    """The training template with the tie clause off: a benchmark pair always has a winner."""
    first, second = (
        (pair.response_2, pair.response_1) if swapped else (pair.response_1, pair.response_2)
    )
    media = media_word(len(pair.images), len(pair.videos))
    text = pairwise_text(builtin_template("pairwise"), pair.question, first, second, media)
    return media_first(text, pair.images, pair.videos)


POLICY = TaskPrompt(_policy, Decoding(DEFAULT_MAX_NEW_TOKENS), SOURCE)
CRITIC = TaskPrompt(_critic, Decoding(DEFAULT_MAX_NEW_TOKENS), CRITIC_SOURCE)
