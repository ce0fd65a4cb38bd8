"""Rewards for RL-training critics, and the one parser of a critic's boxed verdict."""

from mmcritic.rewards.critic import (
    CriticReward,
    completion_text,
    critic_reward,
    format_reward,
    preference_reward,
    verdict_reasons,
)
from mmcritic.rewards.parsing import (
    MAX_VERDICT_CHARS,
    REASONS,
    Reason,
    Verdict,
    boxed_contents,
    has_think_box_format,
    normalize_choice,
    normalize_tags,
    parse_verdict,
)

__all__ = [
    "MAX_VERDICT_CHARS",
    "REASONS",
    "CriticReward",
    "Reason",
    "Verdict",
    "boxed_contents",
    "completion_text",
    "critic_reward",
    "format_reward",
    "has_think_box_format",
    "normalize_choice",
    "normalize_tags",
    "parse_verdict",
    "preference_reward",
    "verdict_reasons",
]
