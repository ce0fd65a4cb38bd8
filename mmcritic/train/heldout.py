"""Held-out preference accuracy: greedy verdicts on records the run never trained on.

The quickstart and the training runner report it before and after a stage, so whether a run
learned is a number, not a reading of reward curves.
"""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm

from mmcritic.data.media import MediaBudget
from mmcritic.data.schema import Record
from mmcritic.models.generation import generate
from mmcritic.rewards import format_reward, preference_reward
from mmcritic.train.examples import MediaLoader


def preference_accuracy(
    model: Any,
    processor: Any,
    records: list[Record],
    budget: MediaBudget,
    max_new_tokens: int = 128,
    batch_size: int = 16,
) -> dict[str, float]:
    """Greedy-decoding accuracy and format rate on pairwise records."""
    load_media = MediaLoader(budget)
    was_training = model.training
    model.eval()
    completions: list[str] = []
    for start in tqdm(range(0, len(records), batch_size), desc="held-out", leave=False):
        batch = records[start : start + batch_size]
        media = load_media.load_records(batch)
        outputs = generate(
            model,
            processor,
            [r.prompt for r in batch],
            media["images"],
            max_new_tokens,
            videos=media["videos"],
        )
        completions += [samples[0] for samples in outputs]
    model.train(was_training)
    answers = [r.answer for r in records]
    preference = preference_reward(completions, answer=answers)
    formatted = format_reward(completions)
    return {
        "accuracy": sum(preference) / len(records),
        "format_rate": sum(formatted) / len(records),
        "n": float(len(records)),
    }
