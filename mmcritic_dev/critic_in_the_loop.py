"""The critic in the loop, at toy scale on the CPU (`benchmarks/critic_in_the_loop.py`):

(a) policy GRPO whose only reward is the quickstart-trained critic (pairwise, win rate in the
    group, both orders): the policy's held-out accuracy on the colour questions before (a base
    policy whose greedy answer is mostly right but whose answers sampled at the training
    temperature often are not) and after, greedy and sampled; the reference answers only score
    (the answer reward is logged with weight 0: the training rollouts' true accuracy);
(b) critic training with both orders of every pair in each batch and the consistency reward
    (J1) against standard training, same steps: the gap between the accuracies with the better
    response first and second, and position-consistent accuracy;
(c) Voting@k with the trained critic on its held-out pairs, k = 1 (one greedy critique), 3, 5.

Each part runs once per seed; the summary gives each figure's mean and 95% t-interval.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from mmcritic.data.media import MediaBudget
from mmcritic.data.schema import Record
from mmcritic.inference.questions import answer_questions
from mmcritic_dev.quickstart import QuickstartData, input_paths, mean_interval, run_quickstart
from mmcritic_dev.toy_stages import (
    TOY_CRITIC,
    Recipes,
    critic_rewarded_policy,
    critic_votes,
    final_model,
    history_mean,
    policy_questions,
    stage_recipe,
)

REPORT_FILE = "critic_in_the_loop.json"
ANSWER_KEY = "rewards/answer/mean"
BOTH_ORDERS = ("grpo.both_orders=true", "rewards.consistency_weight=0.5")


@dataclass(frozen=True)
class LoopScale:
    """Sizes of one seed's run; `quick` is part (a) in a few minutes."""

    critic: QuickstartData = TOY_CRITIC
    critic_steps: int = 300
    policy_train: int = 256
    policy_questions: int = 64
    # 40 supervised steps: greedy answers about 97% right on two colours, but answers sampled
    # at temperature 1 (what GRPO trains on) right about 57% of the time and unreadable a third
    # of the time; 15 steps leave sampled answers unreadable, so no reward could rank them
    policy_base_steps: int = 40
    policy_steps: int = 100
    # answers sampled per held-out question for the sampled accuracy
    samples: int = 4
    votes: tuple[int, ...] = (1, 3, 5)

    @classmethod
    def quick(cls, seed: int = 0) -> LoopScale:
        return cls(
            critic=replace(TOY_CRITIC, seed=seed),
            critic_steps=150,
            policy_questions=32,
            policy_steps=30,
        )


def critic_stage(work: Path, scale: LoopScale, recipes: Recipes, overrides: Sequence[str] = ()):
    """The quickstart's critic (warm start, then GRPO) in `work`; returns its report."""
    report_file = work / "quickstart_report.json"
    if report_file.is_file():
        return json.loads(report_file.read_text())
    return run_quickstart(
        work,
        recipes.sft,
        recipes.grpo,
        scale.critic,
        [f"max_steps={scale.critic_steps}", *overrides],
    )


def critic_reward_part(work: Path, scale: LoopScale, recipes: Recipes) -> dict[str, Any]:
    """(a): policy GRPO rewarded by the trained critic alone."""
    seed = scale.critic.seed
    critic_run = work / "critic"
    critic_stage(critic_run, scale, recipes)
    questions, heldout = policy_questions(
        work / "questions",
        ("color",),
        (scale.policy_train, scale.policy_questions),
        scale.critic.colors,
        seed,
    )
    steps = scale.policy_base_steps
    base = final_model(
        stage_recipe(
            recipes.sft,
            work / "policy_base",
            input_paths(critic_run)["model"],
            questions,
            seed,
            ["sft.target=rationale", "data.eval=null", f"max_steps={steps}", f"save_steps={steps}"],
        )
    )
    heldout_folder = questions.parent / "heldout_color"
    policy = critic_rewarded_policy(
        recipes,
        work / "policy_grpo",
        base,
        questions,
        critic_run / "grpo" / "final",
        seed,
        scale.policy_steps,
        heldout_folder,
    )
    summary, history = policy.summary, policy.history
    before, after = summary["heldout_before"]["policy"], summary["heldout_after"]["policy"]
    budget = policy.recipe.data.media_budget
    rollout_accuracy = [entry[ANSWER_KEY] for entry in history if ANSWER_KEY in entry]
    return {
        "questions": len(heldout),
        "policy_accuracy_before": before["accuracy"],
        "policy_accuracy_before_ci95": before["accuracy_ci95"],
        "policy_accuracy_after": after["accuracy"],
        "policy_accuracy_after_ci95": after["accuracy_ci95"],
        "sampled_accuracy_before": sampled_accuracy(base, heldout, scale, budget),
        "sampled_accuracy_after": sampled_accuracy(
            Path(summary["final_model"]), heldout, scale, budget
        ),
        # the training rollouts' accuracy by the reference, over the first and the last 5 steps
        "rollout_accuracy_first_5": statistics.fmean(rollout_accuracy[:5]),
        "rollout_accuracy_last_5": statistics.fmean(rollout_accuracy[-5:]),
        "critic_calls": int(sum(entry.get("critic/calls", 0) for entry in history)),
        "critic_order_agreement": history_mean(history, "critic/order_agreement"),
        "critic_reward_mean": history_mean(history, "rewards/critic/mean"),
        "steps": summary["global_step"],
    }


def sampled_accuracy(
    model_dir: Path, questions: list[Record], scale: LoopScale, budget: MediaBudget
) -> float:
    """The mean accuracy of `scale.samples` answers per question sampled at temperature 1."""
    answered = answer_questions(model_dir, questions, scale.samples, budget, scale.critic.seed)
    return statistics.fmean(right for rights in answered.sampled_right() for right in rights)


def both_orders_part(
    work: Path, standard: Path, scale: LoopScale, recipes: Recipes
) -> dict[str, Any]:
    """(b): critic training with both orders and the consistency reward against standard
    training (the run in `standard`, shared with the other parts)."""
    results = {}
    for name, folder, overrides in (
        ("standard", standard, ()),
        ("both_orders", work / "both_orders", BOTH_ORDERS),
    ):
        report = critic_stage(folder, scale, recipes, overrides)
        after = report["grpo"]
        results[name] = {
            "consistent_accuracy": after["consistent_accuracy"],
            "accuracy": after["accuracy"],
            "accuracy_answer_1": after["accuracy_answer_1"],
            "accuracy_answer_2": after["accuracy_answer_2"],
            "position_gap": abs(after["accuracy_answer_1"] - after["accuracy_answer_2"]),
        }
    return results


def run_seed(work: Path, scale: LoopScale, recipes: Recipes, parts: str) -> dict[str, Any]:
    report: dict[str, Any] = {"scale": asdict(scale)}
    critic_run = work / "a" / "critic"  # the quickstart's critic, which every part uses
    if "a" in parts:
        report["critic_reward"] = critic_reward_part(work / "a", scale, recipes)
    if "b" in parts:
        report["both_orders"] = both_orders_part(work / "b", critic_run, scale, recipes)
    if "c" in parts:
        critic_stage(critic_run, scale, recipes)
        report["voting"] = critic_votes(critic_run, scale.votes)
    (work / REPORT_FILE).write_text(json.dumps(report, indent=2))
    return report


def run_seeds(
    work: Path, scale: LoopScale, recipes: Recipes, seeds: int, parts: str = "abc"
) -> dict[str, Any]:
    runs = []
    for offset in range(seeds):
        seeded = replace(scale, critic=replace(scale.critic, seed=scale.critic.seed + offset))
        runs.append(run_seed(work / f"seed_{seeded.critic.seed}", seeded, recipes, parts))
    summary: dict[str, Any] = {"scale": asdict(scale), "seeds": seeds, "runs": runs}
    for part in ("critic_reward", "both_orders", "voting"):
        if part in runs[0]:
            summary[part] = _summarise([run[part] for run in runs])
    (work / REPORT_FILE).write_text(json.dumps(summary, indent=2))
    return summary


def _summarise(values: list[Any]) -> Any:
    """Each number's mean and 95% interval over seeds, nested as the per-seed reports are."""
    first = values[0]
    if isinstance(first, dict):
        return {key: _summarise([value[key] for value in values]) for key in first}
    if isinstance(first, int | float) and not isinstance(first, bool):
        return mean_interval([float(value) for value in values])
    return values
