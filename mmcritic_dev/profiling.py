"""Where a GRPO step's time goes: generation, reward, log-probs, update.

Wraps four methods of one trainer instance (not its class) with timers, so the same measurement
applies to `CriticGRPOTrainer` and to a plain `trl.GRPOTrainer` in one process:
`_generate` (rollouts), `_calculate_rewards` (reward functions),
`_generate_and_score_completions` (rollouts + rewards + old/reference log-probs and batch
preparation) and `training_step` (everything, including the update).
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from typing import Any

TIMED_METHODS = (
    "_generate",
    "_calculate_rewards",
    "_generate_and_score_completions",
    "training_step",
)


class PhaseTimer:
    """Accumulates wall time per wrapped method; `phases()` splits a step into its parts."""

    def __init__(self, trainer: Any):
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        for name in TIMED_METHODS:
            setattr(trainer, name, self._timed(name, getattr(trainer, name)))

    def _timed(self, name: str, method):
        @functools.wraps(method)
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - started
                self.calls[name] += 1

        return wrapper

    def phases(self) -> dict[str, float]:
        """Mean seconds per optimizer step in each phase."""
        steps = max(self.calls["training_step"], 1)
        generation = self.seconds["_generate"]
        reward = self.seconds["_calculate_rewards"]
        scoring = self.seconds["_generate_and_score_completions"]
        total = self.seconds["training_step"]
        return {
            "generation_s": generation / steps,
            "reward_s": reward / steps,
            "logprob_s": (scoring - generation - reward) / steps,
            "update_s": (total - scoring) / steps,
            "step_s": total / steps,
        }


def _plain_trainer(recipe: Any, processor: Any, dataset: Any) -> Any:
    """TRL's own GRPOTrainer on the same model, data, config and rewards: the baseline."""
    from trl import GRPOTrainer

    from mmcritic.models.loading import load_model, resolve_device, resolve_dtype, vision_token_ids
    from mmcritic.rewards import format_reward, preference_reward
    from mmcritic.train.trl_configs import grpo_config

    device = resolve_device(recipe.device)
    dtype = resolve_dtype(recipe.model.dtype, device)
    config = grpo_config(recipe, device, dtype, vision_token_ids(processor.tokenizer))
    return GRPOTrainer(
        model=load_model(recipe.model.name_or_path, dtype, recipe.model.attn_implementation),
        reward_funcs=[preference_reward, format_reward],
        args=config,
        train_dataset=dataset,
        processing_class=processor,
    )


def measure_step_phases(recipe: Any, plain: bool) -> dict[str, float]:
    """Trains `recipe.max_steps` GRPO steps and returns the per-step phase times and tokens/s."""
    from mmcritic.data.dataset import read_records
    from mmcritic.models.loading import load_processor
    from mmcritic.train.examples import to_dataset
    from mmcritic.train.run import make_trainer

    budget = recipe.data.media_budget
    processor = load_processor(recipe.model.name_or_path, budget)
    dataset = to_dataset(read_records(recipe.data.train), budget)
    trainer = (_plain_trainer if plain else make_trainer)(recipe, processor, dataset)
    timer = PhaseTimer(trainer)
    started = time.perf_counter()
    trainer.train()
    elapsed = time.perf_counter() - started
    tokens = max(entry.get("num_tokens", 0) for entry in trainer.state.log_history)
    return {**timer.phases(), "tokens_per_s": tokens / elapsed}
