"""GRPO rewards for a pairwise critic, with TRL's reward-function signature.

TRL calls each reward as `fn(prompts=..., completions=..., completion_ids=..., trainer_state=...,
**dataset_columns)`, so every function takes the columns it needs by name and ignores the rest.
Completions come from the policy and may be anything, so no completion may raise; a ground truth
comes from the dataset, so a bad one is a data error and raises.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from mmcritic.rewards.parsing import has_think_box_format, normalize_choice, parse_verdict

logger = logging.getLogger(__name__)


def completion_text(completion: Any) -> str:
    """The text of one completion, whether TRL passes a plain string or a conversational list of
    messages whose content is a string or a list of `{"type": "text", "text": ...}` parts.
    Anything else (None content, image parts) contributes no text rather than raising."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, Sequence):
        return "\n".join(_content_text(_content(message)) for message in completion)
    return ""


def _content(message: Any) -> Any:
    return message.get("content") if isinstance(message, Mapping) else message


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(_part_text(part) for part in content)
    return ""


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and isinstance(part.get("text"), str):
        return part["text"]
    return ""


def format_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """1.0 for a completion shaped `<think>...</think>...\\boxed{...}...`, else 0.0; it says
    nothing about whether the verdict is right."""
    return [float(has_think_box_format(completion_text(c))) for c in completions]


def preference_reward(
    completions: Sequence[Any], answer: Sequence[Any], **kwargs: Any
) -> list[float]:
    """1.0 when the parsed verdict equals the ground truth, else 0.0, regardless of format, so
    the two signals can be weighted and logged separately."""
    truths = _ground_truths(answer, len(completions))
    choices = [_choice(i, c) for i, c in enumerate(completions)]
    return [float(choice == truth) for choice, truth in zip(choices, truths, strict=True)]


def _ground_truths(answer: Sequence[Any], expected: int) -> list[str]:
    if len(answer) != expected:
        raise ValueError(f"got {len(answer)} answers for {expected} completions")
    return [_ground_truth(i, value) for i, value in enumerate(answer)]


def _ground_truth(index: int, value: Any) -> str:
    truth = None if isinstance(value, bool) else normalize_choice(str(value))
    if truth is None:
        raise ValueError(
            f"answer[{index}] = {value!r} is not a verdict; expected 1, 2 or tie "
            "(or a form normalize_choice accepts)"
        )
    return truth


def _choice(index: int, completion: Any) -> str | None:
    verdict = parse_verdict(completion_text(completion))
    if not verdict.ok:
        logger.debug(
            "completion %d has no verdict (%s), raw box %.80r", index, verdict.reason, verdict.raw
        )
    return verdict.choice


def verdict_reasons(completions: Sequence[Any]) -> Counter[str]:
    """Counts of parse outcomes (`ok`, `no_box`, `conflicting_boxes`, ...) for a batch, so a
    trainer can log why preference rewards are zero instead of only that they are."""
    return Counter(parse_verdict(completion_text(c)).reason for c in completions)


class PreferenceReward:
    """The preference reward as training runs it: `preference_reward`, plus the metrics a
    critic run needs to be read (accuracy by where the better response sits, how often the
    verdict parses and why not). `__name__` is what TRL logs it under
    (`rewards/preference/mean`, the preference accuracy)."""

    __name__ = "preference"

    def __call__(self, completions: list, answer: list, **kwargs: Any) -> list[float]:
        scores = preference_reward(completions, answer=answer, **kwargs)
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        if log_metric is not None:
            positions = kwargs.get("answer_position") or answer
            for position, value in _mean_by(positions, scores).items():
                log_metric(f"preference/accuracy_when_answer_{position}", value)
            for reason, count in verdict_reasons(completions).items():
                log_metric(f"verdict/{reason}", count / len(completions))
        return scores


class FormatReward:
    """The format reward as training runs it (`rewards/format/mean`, the format rate)."""

    __name__ = "format"

    def __call__(self, completions: list, **kwargs: Any) -> list[float]:
        return format_reward(completions, **kwargs)


def training_rewards() -> list[Any]:
    """The reward functions GRPO runs, in the order `reward_weights` weighs them."""
    return [PreferenceReward(), FormatReward()]


def reward_weights(format_weight: float) -> list[float]:
    """TRL's `reward_weights` for `training_rewards`: the total reward is
    `(1 - w) * preference + w * format` (LLaVA-Critic-R1, w = 0.1), mostly the right verdict
    with a small push towards the think/boxed shape that keeps verdicts parseable."""
    return [1.0 - format_weight, format_weight]


def weighted_total(rewards_per_function: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Each completion's total reward, as TRL sums it: weights times rewards, NaN skipped."""
    return (rewards_per_function * weights.to(rewards_per_function.device)).nansum(dim=1)


def _mean_by(keys: list[Any], values: list[float]) -> dict[str, float]:
    totals: Counter = Counter()
    counts: Counter = Counter()
    for key, value in zip(keys, values, strict=True):
        totals[str(key)] += value
        counts[str(key)] += 1
    return {key: totals[key] / counts[key] for key in counts}
