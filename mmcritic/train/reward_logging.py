"""Reward functions as the trainer runs them: the same scores as `mmcritic.rewards`, plus the
metrics a critic run needs to be read (position bias, how often the verdict parses).

They keep TRL's signature and a fixed `__name__`, so TRL logs `rewards/preference/mean` (the
preference accuracy) and `rewards/format/mean` (the format rate) under stable names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from mmcritic.rewards import format_reward, preference_reward, verdict_reasons


class PreferenceReward:
    """Preference reward that also logs accuracy by where the correct response sits."""

    __name__ = "preference"

    def __call__(self, completions: list, answer: list, **kwargs: Any) -> list[float]:
        scores = preference_reward(completions, answer=answer, **kwargs)
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        if log_metric is not None:
            positions = kwargs.get("answer_position") or answer
            for position, value in _mean_by(positions, scores).items():
                log_metric(f"preference/accuracy_when_answer_{position}", value)
            reasons = verdict_reasons(completions)
            for reason, count in reasons.items():
                log_metric(f"verdict/{reason}", count / len(completions))
        return scores


class FormatReward:
    """Format reward: 1 when the completion is `<think>...</think> ... \\boxed{...}`."""

    __name__ = "format"

    def __call__(self, completions: list, **kwargs: Any) -> list[float]:
        return format_reward(completions, **kwargs)


def _mean_by(keys: list[Any], values: list[float]) -> dict[str, float]:
    totals: Counter = Counter()
    counts: Counter = Counter()
    for key, value in zip(keys, values, strict=True):
        totals[str(key)] += value
        counts[str(key)] += 1
    return {key: totals[key] / counts[key] for key in counts}
