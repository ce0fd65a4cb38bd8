"""Aggregating per-sample records into a task's metrics.

Aggregators read only what the per-sample log holds (`score`, `correct`, `meta`, ...), so a
resumed run, a replay and a fresh run compute their metrics from the same lines. Each returns a
flat `{metric name: value}`; per-group values are named `metric/group`. These are the shared
ones; a benchmark's own (HallusionBench's, OCRBench's, MM-RLHF-RewardBench's) is in its folder.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from typing import Any

Record = dict[str, Any]
Aggregator = Callable[[Sequence[Record]], dict[str, float]]


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean; 0.0 for no values, so an empty group never breaks a report."""
    items = [float(value) for value in values]
    return sum(items) / len(items) if items else 0.0


def grouped(records: Sequence[Record], field: str, value: str = "score") -> dict[str, float]:
    """Mean of `value` per distinct `meta[field]`, in sorted group order."""
    groups: dict[str, list[float]] = defaultdict(list)
    for record in records:
        groups[str(record["meta"][field])].append(float(record[value]))
    return {name: mean(groups[name]) for name in sorted(groups)}


def accuracy(records: Sequence[Record]) -> dict[str, float]:
    """Micro accuracy: the mean per-sample score."""
    return {"accuracy": mean(record["score"] for record in records)}


def accuracy_by(field: str, macro_name: str | None = None, metric: str = "accuracy") -> Aggregator:
    """Micro accuracy plus accuracy per `meta[field]`, named `metric` and `metric/group`; with
    `macro_name`, also the unweighted mean over groups under that name (MMStar's "average")."""

    def aggregate(records: Sequence[Record]) -> dict[str, float]:
        groups = grouped(records, field)
        result = {metric: mean(record["score"] for record in records)}
        if macro_name:
            result[macro_name] = mean(groups.values())
        result.update({f"{metric}/{name}": value for name, value in groups.items()})
        return result

    return aggregate


def all_correct_rate(records: Sequence[Record], key_fields: Sequence[str]) -> float:
    """Share of groups (records with equal `meta[key_fields]`) in which every record scored 1:
    HallusionBench's question- and figure-level accuracy, MM-RLHF-RewardBench's Acc+."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for record in records:
        key = tuple(str(record["meta"][field]) for field in key_fields)
        groups[key].append(float(record["score"]))
    return mean(float(all(score == 1.0 for score in scores)) for scores in groups.values())


def critic_metrics(group_field: str | None = None, macro: bool = False) -> Aggregator:
    """Pairwise critic accuracy; with both answer orders scored, also the order-robust figures.

    `accuracy` is the order the benchmark's published numbers use. With `swapped_correct` in
    the records: `accuracy_swapped`, their mean `accuracy_order_mean`, `consistent_accuracy`
    (right in both orders) and `position_consistency` (the same response preferred in both).
    """

    def aggregate(records: Sequence[Record]) -> dict[str, float]:
        result = {"accuracy": mean(record["correct"] for record in records)}
        if group_field:
            groups = grouped(records, group_field, value="correct")
            if macro:
                result["macro_accuracy"] = mean(groups.values())
            result.update({f"accuracy/{name}": value for name, value in groups.items()})
        if records and all("swapped_correct" in record for record in records):
            result.update(_order_metrics(records))
        return result

    return aggregate


def _order_metrics(records: Sequence[Record]) -> dict[str, float]:
    swapped = mean(record["swapped_correct"] for record in records)
    first = mean(record["correct"] for record in records)
    return {
        "accuracy_swapped": swapped,
        "accuracy_order_mean": (first + swapped) / 2,
        "consistent_accuracy": mean(
            record["correct"] and record["swapped_correct"] for record in records
        ),
        "position_consistency": mean(record["position_consistent"] for record in records),
    }


def refinement(records: Sequence[Record], rounds: int) -> dict[str, Any]:
    """What critique-and-revise rounds did (`--refine-rounds`): accuracy after each round (a
    sample that stopped early keeps its last answer), and per round how many revisions turned
    a right answer wrong and a wrong one right, from the task's own rule (`refine_scores`: the
    score of every answer in turn). A score of 0.5 or more counts as right (ANLS-style scores
    lie in between). `stopped` counts why each sample left the loop."""
    scored = [record for record in records if "refine_scores" in record]
    per_round: list[float] = []
    right_to_wrong, wrong_to_right = [0] * rounds, [0] * rounds
    for step in range(rounds + 1):
        per_round.append(mean(_score_at(record, step) for record in scored))
    for record in scored:
        right = [score >= 0.5 for score in record["refine_scores"]]
        for step, (before, after) in enumerate(pairwise(right)):
            right_to_wrong[step] += before and not after
            wrong_to_right[step] += after and not before
    stopped: dict[str, int] = defaultdict(int)
    for record in scored:
        stopped[record["refinement"]["stopped"]] += 1
    return {
        "rounds": rounds,
        "accuracy_per_round": per_round,
        "right_to_wrong": right_to_wrong,
        "wrong_to_right": wrong_to_right,
        "revised": sum(len(record["refine_scores"]) > 1 for record in scored),
        "stopped": dict(sorted(stopped.items())),
    }


def _score_at(record: Record, step: int) -> float:
    scores = record["refine_scores"]
    return float(scores[min(step, len(scores) - 1)])
