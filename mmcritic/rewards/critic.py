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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mmcritic.rewards.answers import final_boxed, normalize_answer
from mmcritic.rewards.correctness import parse_correctness
from mmcritic.rewards.parsing import has_think_box_format, normalize_choice, parse_verdict

if TYPE_CHECKING:
    import torch

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
    """The preference reward as training runs it: `preference_reward` on pairwise rows (None on
    rows of another kind, which it does not judge), plus the metrics a critic run needs to be
    read (accuracy by where the better response sits, how often the verdict parses and why not).
    `__name__` is what TRL logs it under (`rewards/preference/mean`, the preference accuracy)."""

    __name__ = "preference"

    def __call__(
        self, completions: list, answer: list, kind: list | None = None, **kwargs: Any
    ) -> list[float | None]:
        rows = [i for i, k in enumerate(kind or ["pairwise"] * len(completions)) if k == "pairwise"]
        if not rows:
            return [None] * len(completions)
        picked = [completions[i] for i in rows]
        scores = preference_reward(picked, answer=[answer[i] for i in rows])
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        if log_metric is not None:
            positions = kwargs.get("answer_position") or answer
            for position, value in _mean_by([positions[i] for i in rows], scores).items():
                log_metric(f"preference/accuracy_when_answer_{position}", value)
            for reason, count in verdict_reasons(picked).items():
                log_metric(f"verdict/{reason}", count / len(picked))
        rewards: list[float | None] = [None] * len(completions)
        for row, score in zip(rows, scores, strict=True):
            rewards[row] = score
        return rewards


class AnswerReward:
    """Policy questions (`verifiable` rows that carry a reference answer): 1.0 when the
    completion's final boxed answer is the reference (case, spacing, `$` and a trailing period
    aside, or the same number), else 0.0; None on other rows, which it does not judge (an open
    question with no reference is the critic reward's alone)."""

    __name__ = "answer"

    def __call__(
        self, completions: list, answer: list, kind: list, **kwargs: Any
    ) -> list[float | None]:
        return [
            float(answer_matches(completion_text(completion), str(truth)))
            if row_kind == "verifiable" and str(truth).strip()
            else None
            for completion, truth, row_kind in zip(completions, answer, kind, strict=True)
        ]


class CritiqueVerdictReward:
    """Discriminability on critique rows (`kind: critique`): 1.0 when the critique's boxed
    verdict (`parse_correctness`) says what the critiqued answer is, "correct" or "incorrect",
    else 0.0 (an unreadable verdict too); None on other rows. Logged: accuracy on right and on
    wrong answers apart (a critic that calls everything wrong is right on half), and the share
    of unreadable verdicts."""

    __name__ = "critique_verdict"

    def __call__(
        self, completions: list, answer: list, kind: list, **kwargs: Any
    ) -> list[float | None]:
        rows = [i for i, row_kind in enumerate(kind) if row_kind == "critique"]
        verdicts = {i: parse_correctness(completion_text(completions[i])) for i in rows}
        rewards: list[float | None] = [None] * len(completions)
        for i in rows:
            rewards[i] = float(verdicts[i].accepts == (answer[i] == "correct"))
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        if log_metric is not None and rows:
            truths = [answer[i] for i in rows]
            for truth, value in _mean_by(truths, [rewards[i] for i in rows]).items():
                log_metric(f"critique/accuracy_on_{truth}", value)
            unreadable = sum(verdicts[i].accepts is None for i in rows)
            log_metric("critique/unreadable", unreadable / len(rows))
        return rewards


def answer_matches(completion: str, truth: str) -> bool:
    """Whether a completion's final boxed answer is `truth` (case, spacing, `$` and a trailing
    period aside, or the same number): the answer reward's rule, and the held-out policy's."""
    given = final_boxed(completion)
    if given is None:
        return False
    given, truth = normalize_answer(given), normalize_answer(truth)
    if given == truth:
        return True
    try:
        return float(given) == float(truth)
    except ValueError:
        return False


class FormatReward:
    """The format reward as training runs it (`rewards/format/mean`, the format rate)."""

    __name__ = "format"

    def __call__(self, completions: list, **kwargs: Any) -> list[float]:
        return format_reward(completions, **kwargs)


class ConsistencyReward:
    """Agreement with the other order of the same pair (J1, arXiv 2505.10320): 1.0 when a
    completion picks the response the majority of the swapped prompt's completions picked,
    else 0.0.

    Both orders of a pair are in the same rollout batch (`grpo.both_orders`), identified by the
    `pair` column, with the responses in the order each prompt shows them (`responses`). A
    verdict is mapped to the response text it picks, so "1" on one order agrees with "2" on the
    other. A critic that boxes one index whatever it is shown never agrees with itself and earns
    nothing here, whichever answer is right, which is the point: position bias costs reward even
    before the critic can tell the responses apart. A completion whose pair has no other order in
    the batch, or whose other order has no majority, earns 0.0 and is counted
    (`consistency/unpaired`, `consistency/no_majority`); the share of pairs whose two orders'
    majorities pick the same response is logged as `consistency/pair_agreement`."""

    __name__ = "consistency"

    def __call__(
        self, completions: list, pair: list, responses: list, **kwargs: Any
    ) -> list[float]:
        picked = [_picked(c, shown) for c, shown in zip(completions, responses, strict=True)]
        keys = [(str(key), _order_key(shown)) for key, shown in zip(pair, responses, strict=True)]
        orders: dict[tuple[str, str], list[int]] = {}
        for index, key in enumerate(keys):
            orders.setdefault(key, []).append(index)
        majority = {order: _majority(picked, indices) for order, indices in orders.items()}
        other = {
            order: next((o for o in orders if o[0] == order[0] and o != order), None)
            for order in orders
        }
        scores = []
        for index, key in enumerate(keys):
            wanted = majority[other[key]] if other[key] is not None else None
            scores.append(float(wanted is not None and picked[index] == wanted))
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        if log_metric is not None:
            unpaired = sum(other[key] is None for key in keys)
            no_majority = sum(
                other[key] is not None and majority[other[key]] is None for key in keys
            )
            log_metric("consistency/unpaired", unpaired / len(keys))
            log_metric("consistency/no_majority", no_majority / len(keys))
            log_metric("consistency/pair_agreement", _pair_agreement(other, majority))
        return scores


def _picked(completion: Any, shown: Sequence[str]) -> str | None:
    """The response text a completion's verdict picks, in the order its prompt showed them."""
    choice = parse_verdict(completion_text(completion)).choice
    if choice not in ("1", "2") or len(shown) != 2:
        return None
    return shown[int(choice) - 1]


def _order_key(shown: Sequence[str]) -> str:
    return shown[0] if shown else ""


def _majority(picked: list[str | None], indices: list[int]) -> str | None:
    counts = Counter(picked[i] for i in indices if picked[i] is not None).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def _pair_agreement(
    other: dict[tuple[str, str], tuple[str, str] | None],
    majority: dict[tuple[str, str], str | None],
) -> float:
    """Share of pairs (both orders in the batch) whose two majorities pick the same response."""
    pairs = {tuple(sorted((order, found))) for order, found in other.items() if found is not None}
    agreeing = [majority[a] is not None and majority[a] == majority[b] for a, b in pairs]
    return sum(agreeing) / len(agreeing) if agreeing else 0.0


def reward_plan(weights: RewardWeights, kinds: Sequence[str]) -> list[tuple[str, float]]:
    """The rewards GRPO runs, by name, with TRL's `reward_weights`, in order: the one place the
    combination is decided.

    Rows are judged by what they are: pairwise rows by the preference reward (the verdict),
    verifiable rows by the answer reward (the reference), critique rows by whether the verdict
    is right about the critiqued answer (discriminability); all sit in the correctness slot,
    weighted `weights.correctness_weight` (default 1 - format weight: LLaVA-Critic-R1's
    `(1 - w) * preference + w * format`, w = 0.1). The format reward (think/boxed shape) applies
    to every row. The consistency reward, a critic's judgement and the refinement reward on
    critique rows (helpfulness: is the policy's revision guided by the critique right,
    `mmcritic.train.refinement_reward`) join only when weighted."""
    plan = []
    if "pairwise" in kinds:
        plan.append(("preference", weights.correctness_weight))
    if "verifiable" in kinds:
        plan.append(("answer", weights.correctness_weight))
    if "critique" in kinds:
        plan.append(("critique_verdict", weights.correctness_weight))
        if weights.refinement_weight:
            plan.append(("refinement", weights.refinement_weight))
    plan.append(("format", weights.format_weight))
    if weights.consistency_weight:
        plan.append(("consistency", weights.consistency_weight))
    if weights.critic_weight:
        plan.append(("critic", weights.critic_weight))
    return plan


def training_rewards(
    weights: RewardWeights, kinds: Sequence[str], critic: Any = None, refinement: Any = None
) -> tuple[list[Any], list[float]]:
    """The reward functions of `reward_plan` and their weights; `critic` is the critic reward
    (`mmcritic.train.critic_reward.CriticJudgeReward`) and `refinement` the refinement reward
    (`mmcritic.train.refinement_reward.RefinementReward`) when the plan weighs them."""
    made = {
        "preference": PreferenceReward,
        "answer": AnswerReward,
        "critique_verdict": CritiqueVerdictReward,
        "format": FormatReward,
        "consistency": ConsistencyReward,
    }
    given = {"critic": critic, "refinement": refinement}
    functions, factors = [], []
    for name, weight in reward_plan(weights, kinds):
        if name in given and given[name] is None:
            raise ValueError(f"a {name} weight needs a {name} reward")
        functions.append(given[name] if name in given else made[name]())
        factors.append(weight)
    return functions, factors


@dataclass(frozen=True)
class RewardWeights:
    """How much each reward counts; `correctness` (the verdict or the reference answer) is
    1 - format_weight unless given."""

    format_weight: float = 0.1
    consistency_weight: float = 0.0
    critic_weight: float = 0.0
    correctness: float | None = None
    refinement_weight: float = 0.0

    @property
    def correctness_weight(self) -> float:
        return 1.0 - self.format_weight if self.correctness is None else self.correctness


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
