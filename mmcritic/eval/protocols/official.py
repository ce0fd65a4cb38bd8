"""The `official` protocol: each benchmark's own released prompt, where its authors release one.

Each benchmark's entry (its folder's `prompts.py`, under `"official"`) cites the authors'
repository file (commit read in brackets) the wording comes from. Where the release fixes
decoding it is used; otherwise lmms-eval's Qwen2.5-VL decoding. Media go where the release puts
them when it does so for every model (BLINK, VL-RewardBench and Multimodal RewardBench send the
text first); otherwise first, Qwen's order. Benchmarks with no released prompt (AI2D, ChartQA,
DocVQA, RealWorldQA) use lmms-eval's, and MM-RLHF-RewardBench, which releases only a pointwise
reward-model prompt, the training template; `mmcritic.eval.protocols.task_prompt` resolves
both. This module holds what the entries share.
"""

from __future__ import annotations

from collections.abc import Callable

from mmcritic.eval.choices import option_letters
from mmcritic.eval.protocols import lmms_eval
from mmcritic.eval.protocols.prompt import Decoding, Prompt, TaskPrompt
from mmcritic.eval.tasks import Pair

GREEDY_128 = lmms_eval.GREEDY_128


def parenthesised(options: list[str]) -> str:
    """`(A) first\n(B) second\n`: every option line ends with a newline, as MMMU's and
    MathVision's prompt builders write them."""
    letters = option_letters(len(options))
    return "".join(
        f"({letter}) {option}\n" for letter, option in zip(letters, options, strict=True)
    )


def released(build: Callable[..., Prompt], decoding: Decoding, where: str) -> TaskPrompt:
    """A builder with the release's decoding, citing where its wording comes from."""
    return TaskPrompt(build, decoding, f"official: {where}")


def text_first(template: str) -> Callable[[Pair, bool], Prompt]:
    """A judge builder that sends the text before the image, as both critic releases do."""
    build = lmms_eval.judge(template)

    def text_first(pair: Pair, swapped: bool) -> Prompt:
        shown = build(pair, swapped)
        count = len(shown.images) + len(shown.videos)
        return Prompt((shown.text, *range(count)), shown.images, shown.videos)

    return text_first
