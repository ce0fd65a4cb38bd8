"""SFT warm start, the LLaVA-Critic way: imitate a rationale and the boxed verdict.

Same dataset folders as GRPO; the target is `<think>{rationale}</think>\n\\boxed{answer}`. Records
without a rationale (converted preference data, whose GPT rationales are dropped because they
name responses in the source order) still teach the output format with an empty think block.
"""

from __future__ import annotations

import random
from typing import Any

from trl import SFTTrainer


def sft_target(rationale: str, answer: str) -> str:
    """The completion SFT imitates: reasoning in a think block, the verdict boxed after it."""
    return f"<think>{rationale.strip()}</think>\n\\boxed{{{answer}}}"


def sft_completion(row: dict[str, Any], target: str) -> list[dict[str, Any]]:
    """The assistant turn SFTTrainer's prompt-completion format reads.

    `target="format"` keeps the think block empty and draws the verdict at random (seeded by
    the record id), so the warm start teaches the shape of an answer but not which one is right.
    """
    if target == "format":
        text = sft_target("", random.Random(row["id"]).choice(["1", "2"]))
    else:
        text = sft_target(row["rationale"], row["answer"])
    return [{"role": "assistant", "content": [{"type": "text", "text": text}]}]


def make_sft_trainer(model: Any, processor: Any, dataset: Any, config: Any, peft_config: Any):
    return SFTTrainer(
        model=model,
        args=config,
        train_dataset=dataset,
        processing_class=processor,
        peft_config=peft_config,
    )
