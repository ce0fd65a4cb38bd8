"""MM-RLHF-RewardBench's prompts: none. The release gives only a pointwise reward-model prompt,
so every protocol asks with the critic's pairwise training template."""

from __future__ import annotations

from mmcritic.eval.protocols.prompt import TaskPrompt

PROMPTS: dict[str, TaskPrompt] = {}
