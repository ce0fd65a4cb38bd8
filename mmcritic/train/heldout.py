"""Held-out critic accuracy that cannot hide a position bias.

A pairwise critic that boxes "1" whatever it is shown scores 50% on a balanced set and 100% on
every pair whose better response comes first. So every held-out pair is judged in both orders
(`mmcritic.data.pairs`), greedily, and the report gives, each with a 95% Wilson interval:
accuracy over all judged prompts, accuracy with the better response first and second,
position-consistent accuracy (pairs judged right in both orders; 25% by chance), the rate at which
both orders pick the same response whatever its merit, the format rate and how every verdict was
read. Policy questions in a held-out set (verifiable records with a reference answer) get the
policy's greedy accuracy and format rate beside it. The training run reports both before and
after a stage and every `data.eval_every` steps (`HeldoutCallback`), into the log, TensorBoard
and the learning curve.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch
from tqdm.auto import tqdm
from transformers import Trainer, TrainerCallback

from mmcritic.data.media import MediaBudget
from mmcritic.data.pairs import pair_key, with_both_orders
from mmcritic.data.schema import Record
from mmcritic.models.generation import generate
from mmcritic.rewards.correctness import parse_correctness
from mmcritic.rewards.critic import answer_matches
from mmcritic.rewards.parsing import REASONS, has_think_box_format, parse_verdict
from mmcritic.train.examples import MediaLoader

Z_95 = 1.959964
LOG_PREFIX = "heldout/"
# the rates the report gives, each with its interval; the chance level of each, for plots
RATES = {
    "accuracy": 0.5,
    "accuracy_answer_1": 0.5,
    "accuracy_answer_2": 0.5,
    "consistent_accuracy": 0.25,
    "position_consistency": 0.5,
    "format_rate": None,
}
POLICY_RATES = ("accuracy", "format_rate")


@dataclass(frozen=True)
class Rate:
    """A proportion with its 95% Wilson score interval (sound at 0%, 100% and small n)."""

    successes: int
    n: int

    @property
    def value(self) -> float:
        return self.successes / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        if not self.n:
            return (0.0, 1.0)
        p, n, z2 = self.value, self.n, Z_95**2
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        spread = Z_95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
        # at 0% and 100% one end is exact; rounding must not move it inside the rate
        low = 0.0 if self.successes == 0 else max(0.0, centre - spread)
        high = 1.0 if self.successes == self.n else min(1.0, centre + spread)
        return (low, high)


def critic_report(
    model: Any,
    processor: Any,
    records: list[Record],
    budget: MediaBudget,
    max_new_tokens: int = 128,
    batch_size: int = 16,
) -> dict[str, Any]:
    """Greedy verdicts on every pairwise record in both orders, and the rates above; records
    that are not pairwise with a "1"/"2" answer are left out (and counted)."""
    judged = [r for r in records if r.kind == "pairwise" and r.answer in ("1", "2")]
    prompts = with_both_orders(judged)
    completions = _greedy(model, processor, prompts, budget, max_new_tokens, batch_size)
    report = judged_report(prompts, completions)
    report["left_out"] = len(records) - len(judged)
    return report


def heldout_report(
    model: Any,
    processor: Any,
    records: list[Record],
    budget: MediaBudget,
    max_new_tokens: int = 128,
) -> dict[str, Any]:
    """What a held-out set says of the model: the critic's rates on its pairwise records (at the
    top level) and, when it holds policy questions with a reference answer, the policy's
    (`policy`)."""
    report: dict[str, Any] = {}
    if any(record.kind == "pairwise" for record in records):
        report = critic_report(model, processor, records, budget, max_new_tokens)
    if any(_has_reference(record) for record in records):
        report["policy"] = policy_report(model, processor, records, budget, max_new_tokens)
    if any(record.kind == "critique" for record in records):
        report["critique"] = critique_report(model, processor, records, budget, max_new_tokens)
    return report


def critique_report(
    model: Any,
    processor: Any,
    records: list[Record],
    budget: MediaBudget,
    max_new_tokens: int = 128,
    batch_size: int = 16,
) -> dict[str, Any]:
    """Greedy critiques of the critique records' answers: how often the verdict is right
    about the answer (discriminability), apart on right and on wrong answers (a critic that
    rejects everything is right on every wrong one), and the format rate."""
    critiques = [record for record in records if record.kind == "critique"]
    completions = _greedy(model, processor, critiques, budget, max_new_tokens, batch_size)
    accepts = [parse_correctness(text).accepts for text in completions]
    right = [
        verdict == (record.answer == "correct")
        for verdict, record in zip(accepts, critiques, strict=True)
    ]
    truths = [record.answer for record in critiques]
    rates = {
        "accuracy": _rate(right),
        "accuracy_on_correct": _rate(
            r for r, t in zip(right, truths, strict=True) if t == "correct"
        ),
        "accuracy_on_incorrect": _rate(
            r for r, t in zip(right, truths, strict=True) if t != "correct"
        ),
        "format_rate": _rate(has_think_box_format(text) for text in completions),
    }
    return _rates_report(rates)


def policy_report(
    model: Any,
    processor: Any,
    records: list[Record],
    budget: MediaBudget,
    max_new_tokens: int = 128,
    batch_size: int = 16,
) -> dict[str, Any]:
    """Greedy answers to the policy questions (verifiable records with a reference answer):
    accuracy by the answer reward's rule, and the format rate, with 95% intervals."""
    questions = [record for record in records if _has_reference(record)]
    completions = _greedy(model, processor, questions, budget, max_new_tokens, batch_size)
    rates = {
        "accuracy": _rate(
            answer_matches(text, record.answer)
            for text, record in zip(completions, questions, strict=True)
        ),
        "format_rate": _rate(has_think_box_format(text) for text in completions),
    }
    return _rates_report(rates)


def _rates_report(rates: dict[str, Rate]) -> dict[str, Any]:
    """Each rate as the report gives it: its value, its 95% interval and its count."""
    report: dict[str, Any] = {}
    for name, rate in rates.items():
        report |= {name: rate.value, f"{name}_ci95": list(rate.interval), f"{name}_n": rate.n}
    return report


def _has_reference(record: Record) -> bool:
    return record.kind == "verifiable" and bool(record.answer.strip())


def judged_report(prompts: list[Record], completions: list[str]) -> dict[str, Any]:
    """The rates of `critic_report` for prompts (both orders of each pair, `meta.pair` shared)
    and the critic's completions for them."""
    verdicts = [parse_verdict(text) for text in completions]
    right = [
        verdict.choice == record.answer for verdict, record in zip(verdicts, prompts, strict=True)
    ]
    rates = {
        "accuracy": _rate(right),
        "accuracy_answer_1": _rate(
            r for r, p in zip(right, prompts, strict=True) if p.answer == "1"
        ),
        "accuracy_answer_2": _rate(
            r for r, p in zip(right, prompts, strict=True) if p.answer == "2"
        ),
        **_pair_rates(prompts, verdicts, right),
        "format_rate": _rate(has_think_box_format(text) for text in completions),
    }
    report = _rates_report(rates)
    reasons = Counter(verdict.reason for verdict in verdicts)
    report["verdicts"] = {reason: reasons.get(reason, 0) for reason in REASONS}
    report["prompts"] = len(prompts)
    return report


def _rate(flags: Any) -> Rate:
    values = [bool(flag) for flag in flags]
    return Rate(sum(values), len(values))


def _pair_rates(prompts: list[Record], verdicts: list[Any], right: list[bool]) -> dict[str, Rate]:
    """Over pairs judged in both orders: right in both, and the same response picked in both."""
    orders: dict[str, list[int]] = {}
    for index, record in enumerate(prompts):
        orders.setdefault(pair_key(record), []).append(index)
    pairs = [indices for indices in orders.values() if len(indices) == 2]
    consistent = [right[a] and right[b] for a, b in pairs]
    picks = [(_picked(prompts[a], verdicts[a]), _picked(prompts[b], verdicts[b])) for a, b in pairs]
    same = [first is not None and first == second for first, second in picks]
    return {"consistent_accuracy": _rate(consistent), "position_consistency": _rate(same)}


def _picked(record: Record, verdict: Any) -> str | None:
    """The response text a verdict picks, whatever order it was shown in."""
    if verdict.choice not in ("1", "2"):
        return None
    return record.meta["responses"][int(verdict.choice) - 1]


def _greedy(
    model: Any,
    processor: Any,
    records: list[Record],
    budget: MediaBudget,
    max_new_tokens: int,
    batch_size: int,
) -> list[str]:
    load_media = MediaLoader(budget)
    was_training = model.training
    model.eval()
    completions: list[str] = []
    # greedy decoding draws nothing, but the training RNG must not move whatever a backend does
    with torch.random.fork_rng(devices=[]):
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
    return completions


def log_entries(report: dict[str, Any]) -> dict[str, float]:
    """The report as flat numbers for the training log and TensorBoard: each rate, the ends of
    its interval, and the verdict reading counts."""
    entries: dict[str, float] = {}
    if "accuracy" in report:
        entries |= _rate_entries(report, RATES, LOG_PREFIX)
        for reason, count in report["verdicts"].items():
            entries[f"{LOG_PREFIX}verdicts/{reason}"] = float(count)
    if "policy" in report:
        entries |= _rate_entries(report["policy"], POLICY_RATES, f"{LOG_PREFIX}policy/")
    return entries


def _rate_entries(report: dict[str, Any], names: Any, prefix: str) -> dict[str, float]:
    entries: dict[str, float] = {}
    for name in names:
        low, high = report[f"{name}_ci95"]
        entries |= {f"{prefix}{name}": report[name]}
        entries |= {f"{prefix}{name}_low": low, f"{prefix}{name}_high": high}
    return entries


class HeldoutCallback(TrainerCallback):
    """The held-out report every `every` optimizer steps, logged as `heldout/...` (the training
    log, TensorBoard, the learning curve). It is logged through the base `Trainer.log`, so TRL's
    own metric averaging and completion logging are left untouched."""

    def __init__(
        self,
        trainer: Any,
        records: list[Record],
        budget: MediaBudget,
        every: int,
        max_new_tokens: int,
    ):
        self.trainer = trainer
        self.records = records
        self.budget = budget
        self.every = every
        self.max_new_tokens = max_new_tokens

    def on_step_end(self, args, state, control, **kwargs):
        if self.every and state.global_step % self.every == 0 and self.records:
            report = heldout_report(
                self.trainer.model,
                self.trainer.processing_class,
                self.records,
                self.budget,
                self.max_new_tokens,
            )
            # `Trainer.log` clears `should_log`, which would drop this step's training log
            should_log = control.should_log
            Trainer.log(self.trainer, log_entries(report))
            control.should_log = should_log
