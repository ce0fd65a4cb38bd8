"""The paper's three claims at toy scale: critic RL gives a better critic, a better policy, and
test-time self-critique that beats majority voting.

One run (one seed):

1. a "base model": the tiny instruct base (the quickstart's, `prepare_inputs`) after one more
   short supervised run on policy questions about the synthetic images ("What colour is the
   shape?", "How many shapes?", with their reasoning and answer), so that, like a real VLM, it
   answers them some of the time (`policy_steps` sets how well), mixed with the quickstart's
   critic warm start (the training pairs with the base's own answer in the think, each verdict
   once: no verdict taught);
2. critic-only GRPO on the synthetic critic pairs from that base: no policy question is trained
   on after step 1;
3. before and after GRPO, on held-out policy questions of each task: greedy accuracy, and over
   `samples` answers sampled per question, a single sample's accuracy (their mean), majority
   vote, and Best-of-N by knockout with the model itself as the critic; the oracle (any sample
   right) bounds what selection can reach (Best-of-N judges each match in both orders). The
   critic's held-out report rides along, with Voting@k on its held-out pairs after GRPO;
4. the critic as a reward: policy GRPO from the base model of step 1 on the training questions,
   rewarded by the critic of step 2 alone (pairwise win rate in the group, both orders; the
   references only score), and the same report of the policy it ends with.

Several seeds give each figure's mean and 95% t-interval. The result is reported whatever it is.
"""

from __future__ import annotations

import json
import logging
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from mmcritic.data.dataset import read_records
from mmcritic.data.media import MediaBudget
from mmcritic.data.schema import Record
from mmcritic.inference.questions import answer_questions, same_answer
from mmcritic.train.heldout import Rate
from mmcritic.train.run import train
from mmcritic_dev.quickstart import QuickstartData, input_paths, mean_interval, prepare_inputs
from mmcritic_dev.toy_stages import (
    TOY_CRITIC,
    Recipes,
    critic_rewarded_policy,
    critic_votes,
    final_model,
    history_mean,
    policy_questions,
    stage_recipe,
    write_merged,
)

logger = logging.getLogger(__name__)

REPORT_FILE = "critic_to_policy.json"
STRATEGIES = ("single", "majority", "bon", "oracle")


@dataclass(frozen=True)
class ToyScale:
    """Sizes of one run; `quick` shrinks them to a few minutes on a CPU."""

    critic: QuickstartData = TOY_CRITIC
    tasks: tuple[str, ...] = ("color", "count")
    # policy questions the base model learns from, and held out, per task, on the critic's
    # palette: the critic is trained to tell these colours apart
    policy_train: int = 256
    policy_questions: int = 64
    policy_steps: int = 80
    samples: int = 8
    grpo_steps: int = 300
    # policy GRPO steps rewarded by the trained critic (step 4)
    policy_grpo_steps: int = 100
    # Voting@k on the trained critic's held-out pairs: k verdicts sampled at temperature 1
    votes: tuple[int, ...] = (1, 3, 5)

    @classmethod
    def quick(cls, seed: int = 0) -> ToyScale:
        return cls(
            critic=replace(TOY_CRITIC, seed=seed),
            policy_questions=32,
            grpo_steps=150,
            policy_grpo_steps=30,
        )


def run_seed(
    work: Path, toy: ToyScale, recipes: Recipes, overrides: Sequence[str] = ()
) -> dict[str, Any]:
    """Steps 1-4 above for `toy.critic.seed`; returns (and writes) the before/after report. A
    seed whose report is already written is read back, so seeds can run in parallel processes
    and one more call gathers them."""
    if (work / REPORT_FILE).is_file():
        return json.loads((work / REPORT_FILE).read_text())
    seed = toy.critic.seed
    prepare_inputs(work, toy.critic)
    inputs = input_paths(work)
    question_train, questions = policy_questions(
        work / "questions",
        toy.tasks,
        (toy.policy_train, toy.policy_questions),
        toy.critic.colors,
        seed,
    )
    steps = toy.policy_steps
    mixed = write_merged(
        work / "base_data", read_records(question_train) + read_records(inputs["warm_start"])
    )
    base = stage_recipe(
        recipes.sft,
        work / "base",
        inputs["model"],
        mixed,
        seed,
        ["data.eval=null", f"max_steps={steps}", f"save_steps={steps}"],
    )
    base_model = final_model(base)
    grpo = stage_recipe(
        recipes.grpo,
        work / "grpo",
        base_model,
        inputs["train"],
        seed,
        [f"data.eval={inputs['heldout']}", f"max_steps={toy.grpo_steps}", *overrides],
    )
    budget = grpo.data.media_budget
    before = policy_report(Path(grpo.model.name_or_path), questions, toy, budget, seed)
    tuned = train(grpo)
    after = policy_report(Path(tuned["final_model"]), questions, toy, budget, seed)
    rewarded = critic_rewarded_policy(
        recipes,
        work / "policy_grpo",
        base_model,
        question_train,
        Path(tuned["final_model"]),
        seed,
        toy.policy_grpo_steps,
    )
    report = {
        "toy": asdict(toy),
        "critic_before": _critic_rates(tuned["heldout_before"]),
        "critic_after": _critic_rates(tuned["heldout_after"]),
        "before": before,
        "after": after,
        "critic_rewarded": policy_report(
            Path(rewarded.summary["final_model"]), questions, toy, budget, seed
        ),
        "critic_reward_signal": {
            # pairs of rollouts the critic judged the same in both orders, and steps whose
            # groups all scored alike (no gradient): what the critic gave the policy to learn
            "order_agreement": history_mean(rewarded.history, "critic/order_agreement"),
            "groups_without_spread": history_mean(rewarded.history, "frac_reward_zero_std"),
            "critic_reward_mean": history_mean(rewarded.history, "rewards/critic/mean"),
            "rollout_accuracy": history_mean(rewarded.history, "rewards/answer/mean"),
        },
        "voting": critic_votes(work, toy.votes),
    }
    (work / REPORT_FILE).write_text(json.dumps(report, indent=2))
    return report


def run_seeds(
    work: Path, toy: ToyScale, seeds: int, recipes: Recipes, overrides: Sequence[str] = ()
) -> dict[str, Any]:
    """`run_seed` for seeds toy.critic.seed, +1, ...; each figure's mean and 95% interval."""
    runs = []
    for offset in range(seeds):
        seeded = replace(toy, critic=replace(toy.critic, seed=toy.critic.seed + offset))
        runs.append(run_seed(work / f"seed_{seeded.critic.seed}", seeded, recipes, overrides))
    summary: dict[str, Any] = {"toy": asdict(toy), "seeds": seeds, "runs": runs}
    for stage in ("before", "after", "critic_rewarded"):
        summary[stage] = {
            name: mean_interval([100 * run[stage]["overall"][name] for run in runs])
            for name in ("policy_accuracy", *(f"{s}_accuracy" for s in STRATEGIES))
        }
    for stage in ("critic_before", "critic_after"):
        summary[stage] = {
            name: mean_interval([100 * run[stage][name] for run in runs]) for name in runs[0][stage]
        }
    summary["voting"] = {
        k: {name: mean_interval([100 * run["voting"][k][name] for run in runs]) for name in rates}
        for k, rates in runs[0]["voting"].items()
    }
    summary["critic_reward_signal"] = {
        name: _mean_of_logged([run["critic_reward_signal"][name] for run in runs])
        for name in runs[0]["critic_reward_signal"]
    }
    (work / REPORT_FILE).write_text(json.dumps(summary, indent=2))
    return summary


def headline(summary: dict[str, Any]) -> dict[str, float]:
    """The figures the benchmark's last line holds (after GRPO unless named `_before`), in %."""
    before, after = summary["before"], summary["after"]
    line = {
        "policy_accuracy_before": before["policy_accuracy"],
        "policy_accuracy_after": after["policy_accuracy"],
    }
    for strategy in ("bon", "majority", "single"):
        line[f"{strategy}_accuracy"] = after[f"{strategy}_accuracy"]
        line[f"{strategy}_accuracy_before"] = before[f"{strategy}_accuracy"]
    rewarded = summary["critic_rewarded"]
    line["critic_rewarded_policy_accuracy"] = rewarded["policy_accuracy"]
    line["critic_rewarded_single_accuracy"] = rewarded["single_accuracy"]
    line["critic_consistent_accuracy"] = summary["critic_after"]["consistent_accuracy"]
    for k, rates in summary["voting"].items():
        line[f"voting_{k}_consistent_accuracy"] = rates["consistent_accuracy"]
    return {key: value["mean"] if isinstance(value, dict) else value for key, value in line.items()}


def policy_report(
    model_dir: Path, questions: list[Record], toy: ToyScale, budget: MediaBudget, seed: int
) -> dict[str, Any]:
    """Greedy, single-sample, majority, Best-of-N (knockout, self as critic) and oracle
    accuracy on the questions, per task and over all of them."""
    from mmcritic.inference import Critic, best_of_n

    answered = answer_questions(model_dir, questions, toy.samples, budget, seed)
    critic = Critic(
        answered.model, answered.processor, max_new_tokens=24, batch_size=32, template="pairwise"
    )
    right: dict[str, list[bool]] = {name: [] for name in ("policy", *STRATEGIES)}
    right["policy"] = answered.greedy_right()
    for question, item, samples, correct in zip(
        questions, answered.items, answered.sampled, answered.sampled_right(), strict=True
    ):
        texts = [answer.text for answer in samples]
        majority = best_of_n(critic, *item, texts, "majority").answer
        bon = best_of_n(critic, *item, texts, "knockout", both_orders=True, seed=seed).answer
        right["single"].append(statistics.fmean(correct))
        right["majority"].append(same_answer(majority, question.answer))
        right["bon"].append(same_answer(bon, question.answer))
        right["oracle"].append(any(correct))
    tasks = [question.meta["task"] for question in questions]
    report = {"overall": _rates(right, [True] * len(tasks))}
    for task in dict.fromkeys(tasks):
        report[task] = _rates(right, [t == task for t in tasks])
    return report


def _rates(right: dict[str, list[float]], keep: list[bool]) -> dict[str, Any]:
    rates: dict[str, Any] = {"n": sum(keep)}
    for name, values in right.items():
        kept = [value for value, k in zip(values, keep, strict=True) if k]
        key = "policy_accuracy" if name == "policy" else f"{name}_accuracy"
        rates[key] = round(statistics.fmean(kept), 4)
        if name != "single":  # a mean of per-question rates, not a count of successes
            rate = Rate(sum(map(bool, kept)), len(kept))
            rates[f"{key}_ci95"] = [round(end, 4) for end in rate.interval]
    return rates


def _mean_of_logged(values: list[float | None]) -> dict[str, float] | None:
    """Mean and interval, in %, over the seeds that logged the metric (None if none did)."""
    logged = [100 * value for value in values if value is not None]
    return mean_interval(logged) if logged else None


def _critic_rates(heldout: dict[str, Any]) -> dict[str, float]:
    kept = ("accuracy", "accuracy_answer_1", "accuracy_answer_2", "consistent_accuracy")
    return {name: heldout[name] for name in kept}
