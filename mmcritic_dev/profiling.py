"""Where a GRPO step's time goes, and a fair race between two trainers in one process.

`PhaseTimer` wraps four methods of one trainer instance (not its class) with timers, so the same
measurement applies to `CriticGRPOTrainer` and to a plain `trl.GRPOTrainer`:
`_generate` (rollouts), `_calculate_rewards` (reward functions),
`_generate_and_score_completions` (rollouts + rewards + old/reference log-probs and batch
preparation) and `training_step` (everything, including the update).

`race` runs several trainers in threads that take turns, a block of optimizer steps each, so a
machine that slows down (another job, a thermal limit) slows every contestant alike; each
trainer's random state is saved when it hands over and restored when it resumes, so its rollouts
are the ones it would sample alone.
"""

from __future__ import annotations

import functools
import random
import statistics
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from transformers import TrainerCallback

TIMED_METHODS = (
    "_generate",
    "_calculate_rewards",
    "_generate_and_score_completions",
    "training_step",
)
BOOTSTRAP_SAMPLES = 2000


class PhaseTimer(TrainerCallback):
    """Accumulates wall time per wrapped method; `phases()` splits a step into its parts.
    The sums restart after `warmup` optimizer steps, so first-step costs do not count."""

    def __init__(self, trainer: Any, warmup: int = 0):
        self.warmup = warmup
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        for name in TIMED_METHODS:
            setattr(trainer, name, self._timed(name, getattr(trainer, name)))
        trainer.add_callback(self)

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

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.warmup:
            self.seconds.clear()
            self.calls.clear()

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


@dataclass
class _Contestant:
    trainer: Any
    thread: threading.Thread | None = None
    rng: tuple | None = None
    mark: float = 0.0
    step_seconds: list[float] = field(default_factory=list)
    error: BaseException | None = None


class _Turns:
    """Who runs now: one contestant at a time, `block` steps each, in a fixed order."""

    def __init__(self, contestants: dict[str, _Contestant], block: int, seed: int, threads: int):
        self.contestants = contestants
        self.block, self.seed, self.threads = block, seed, threads
        self.waiting = list(contestants)
        self.turn = self.waiting[0]
        self.cond = threading.Condition()

    def start(self, name: str) -> None:
        """Runs when `name` first gets the turn: its training starts only now, so its set-up
        (which reseeds the global random state) cannot disturb another contestant's steps."""
        thread = threading.Thread(target=self._train, args=(name,), name=name)
        thread.start()
        # set once started: the race's loop joins every thread it can see (a turn passes only
        # under the condition, which the new thread needs before it can pass one on)
        self.contestants[name].thread = thread

    def _train(self, name: str) -> None:
        torch.set_num_threads(self.threads)  # each thread keeps its own OpenMP thread count
        try:
            self.contestants[name].trainer.train()
        except BaseException as error:  # handed to the caller, which re-raises it
            self.contestants[name].error = error
        finally:
            self._leave(name)

    def begin(self, name: str) -> None:
        _seed_everything(self.seed)
        self.contestants[name].mark = time.perf_counter()

    def step_done(self, name: str) -> None:
        contestant = self.contestants[name]
        contestant.step_seconds.append(time.perf_counter() - contestant.mark)
        if len(contestant.step_seconds) % self.block == 0 and len(self.waiting) > 1:
            contestant.rng = _rng_state()
            with self.cond:
                self._pass_turn(name)
                self.cond.wait_for(lambda: self.turn == name)
            _set_rng_state(contestant.rng)
        contestant.mark = time.perf_counter()

    def _leave(self, name: str) -> None:
        with self.cond:
            self._pass_turn(name)
            self.waiting.remove(name)
            self.cond.notify_all()

    def _pass_turn(self, name: str) -> None:
        following = self.waiting[(self.waiting.index(name) + 1) % len(self.waiting)]
        self.turn = following
        if self.contestants[following].thread is None:
            self.start(following)
        self.cond.notify_all()


class _TurnCallback(TrainerCallback):
    def __init__(self, turns: _Turns, name: str):
        self.turns, self.name = turns, name

    def on_train_begin(self, args, state, control, **kwargs):
        self.turns.begin(self.name)

    def on_step_end(self, args, state, control, **kwargs):
        self.turns.step_done(self.name)


def race(trainers: dict[str, Any], block: int, seed: int, threads: int) -> dict[str, list[float]]:
    """Trains every trainer to its `max_steps`, taking turns `block` optimizer steps at a time,
    and returns each one's seconds per optimizer step (data loading and logging included)."""
    contestants = {name: _Contestant(trainer) for name, trainer in trainers.items()}
    turns = _Turns(contestants, block, seed, threads)
    for name, contestant in contestants.items():
        contestant.trainer.add_callback(_TurnCallback(turns, name))
    turns.start(turns.turn)
    while any(c.thread is None or c.thread.is_alive() for c in contestants.values()):
        for contestant in contestants.values():
            if contestant.thread is not None:
                contestant.thread.join(timeout=0.1)
    for contestant in contestants.values():
        if contestant.error is not None:
            raise contestant.error
    return {name: contestant.step_seconds for name, contestant in contestants.items()}


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _rng_state() -> tuple:
    return random.getstate(), np.random.get_state(), torch.get_rng_state()


def _set_rng_state(state: tuple) -> None:
    python, numpy_state, torch_state = state
    random.setstate(python)
    np.random.set_state(numpy_state)
    torch.set_rng_state(torch_state)


def median_interval(values: list[float], seed: int = 0) -> tuple[float, float, float]:
    """The median and a 95% bootstrap interval of it."""
    rng = np.random.default_rng(seed)
    data = np.asarray(values)
    resampled = np.median(rng.choice(data, (BOOTSTRAP_SAMPLES, len(data))), axis=1)
    low, high = np.percentile(resampled, [2.5, 97.5])
    return float(np.median(data)), float(low), float(high)


def ratio_interval(ours: list[float], baseline: list[float], seed: int = 0) -> tuple[float, ...]:
    """median(ours) / median(baseline) and a 95% bootstrap interval of that ratio."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(ours), np.asarray(baseline)
    ratios = np.median(rng.choice(a, (BOOTSTRAP_SAMPLES, len(a))), axis=1) / np.median(
        rng.choice(b, (BOOTSTRAP_SAMPLES, len(b))), axis=1
    )
    low, high = np.percentile(ratios, [2.5, 97.5])
    return statistics.median(ours) / statistics.median(baseline), float(low), float(high)


def plain_trainer(recipe: Any, processor: Any, dataset: Any) -> Any:
    """TRL's own GRPOTrainer on the same model, data, config and rewards: the baseline."""
    from trl import GRPOTrainer

    from mmcritic.models.loading import (
        load_model,
        resolve_attention,
        resolve_device,
        resolve_dtype,
        vision_token_ids,
    )
    from mmcritic.rewards import training_rewards
    from mmcritic.train.run import critic_reward, reward_weights
    from mmcritic.train.trl_configs import grpo_config

    device = resolve_device(recipe.device)
    dtype = resolve_dtype(recipe.model.dtype, device)
    functions, weights = training_rewards(
        reward_weights(recipe), dataset.unique("kind"), critic_reward(recipe, device)
    )
    config = grpo_config(recipe, device, dtype, vision_token_ids(processor.tokenizer), weights)
    attention = resolve_attention(recipe.model.attn_implementation, device)
    return GRPOTrainer(
        model=load_model(recipe.model.name_or_path, dtype, attention),
        reward_funcs=functions,
        args=config,
        train_dataset=dataset,
        processing_class=processor,
    )


def losses(trainer: Any) -> list[float]:
    """The loss of every logged optimizer step, in order."""
    return [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
