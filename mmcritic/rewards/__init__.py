"""Rewards for RL-training critics, and the one parser of a critic's boxed verdict."""

from mmcritic.reading.markup import boxed_contents
from mmcritic.rewards.critic import (
    AnswerReward,
    ConsistencyReward,
    FormatReward,
    PreferenceReward,
    RewardWeights,
    completion_text,
    format_reward,
    preference_reward,
    reward_plan,
    training_rewards,
    verdict_reasons,
    weighted_total,
)
from mmcritic.rewards.parsing import (
    MAX_VERDICT_CHARS,
    REASONS,
    Reason,
    Verdict,
    has_think_box_format,
    normalize_choice,
    normalize_tags,
    parse_verdict,
)

__all__ = [
    "MAX_VERDICT_CHARS",
    "REASONS",
    "AnswerReward",
    "ConsistencyReward",
    "FormatReward",
    "PreferenceReward",
    "Reason",
    "RewardWeights",
    "Verdict",
    "boxed_contents",
    "completion_text",
    "format_reward",
    "has_think_box_format",
    "normalize_choice",
    "normalize_tags",
    "parse_verdict",
    "preference_reward",
    "reward_plan",
    "training_rewards",
    "verdict_reasons",
    "weighted_total",
]
