"""Critique that improves answers, at toy scale: refinement per round before and after
refinement-aware critic training, and Critique-GRPO against plain GRPO.

One run (one seed), from the quickstart's tiny instruct base of that seed:

1. synthetic policy questions (count, shape, yes/no: the kinds the base gets partly right) and
   the base's sampled answers to the training ones, as critique records;
2. a format warm start on them (each verdict once per prompt, no label), then critic GRPO on
   the critique records with discriminability from the first step and helpfulness (the model's
   own revision, guided by the critique, right) from half-way (recipes/critique_rl_cpu.yaml);
3. before (the warm start) and after (the trained critic) as the critic, the base as the policy:
   held-out answers critiqued and revised for up to `rounds` rounds; accuracy per round, how
   many revisions went wrong-to-right and right-to-wrong, and how often the first verdict is
   right about the answer;
4. policy GRPO from the base on the training questions, plainly and with Critique-GRPO
   (recipes/critique_grpo_cpu.yaml), the same steps and rollouts a step: held-out accuracy and
   the tokens each generated.

Several seeds give each figure's mean and 95% t-interval; the result is reported as it comes.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mmcritic.data.media import MediaBudget, PixelBudget
from mmcritic.data.schema import Record
from mmcritic.eval import metrics
from mmcritic.inference.questions import critique_data, record_media
from mmcritic.rewards.critic import answer_matches
from mmcritic.train.instruct_base import InstructSpec, build_instruct_base
from mmcritic.train.run import train
from mmcritic_dev.quickstart import QuickstartData, mean_interval
from mmcritic_dev.toy_stages import final_model, policy_questions, stage_recipe, write_merged

logger = logging.getLogger(__name__)

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
REPORT_FILE = "refinement_study.json"
BUDGET = MediaBudget(image=PixelBudget(InstructSpec.min_pixels, InstructSpec.max_pixels))


@dataclass(frozen=True)
class StudyScale:
    """Sizes of one run; `quick` shrinks them to a few minutes on a CPU."""

    tasks: tuple[str, ...] = ("count", "shape", "yesno")
    train_questions: int = 64
    heldout_questions: int = 32
    samples: int = 2
    warm_steps: int = 40
    critic_steps: int = 120
    policy_steps: int = 100
    rounds: int = 2
    max_new_tokens: int = 48

    @classmethod
    def quick(cls) -> StudyScale:
        return cls(
            train_questions=8, heldout_questions=4, warm_steps=4, critic_steps=4, policy_steps=2
        )


def run_seed(work: Path, seed: int, scale: StudyScale) -> dict[str, Any]:
    """One seed of the study (see the module docstring); reuses what `work` already holds."""
    report_path = work / REPORT_FILE
    if report_path.is_file():
        return json.loads(report_path.read_text())
    base = work / "instruct_base"
    build_instruct_base(base, QuickstartData(seed=seed).base)
    train_folder, heldout = policy_questions(
        work / "questions", scale.tasks, (scale.train_questions, scale.heldout_questions), 6, seed
    )
    heldout_folder = write_merged(work / "questions" / "heldout", heldout)
    critic_before, critic_after = _critics(work, base, train_folder, seed, scale)
    report = {
        "seed": seed,
        "refinement": {
            "before": refinement_accuracy(base, critic_before, heldout, scale),
            "after": refinement_accuracy(base, critic_after, heldout, scale),
        },
        "policy": {
            name: _policy_run(work, base, train_folder, heldout_folder, seed, scale, enabled)
            for name, enabled in (("grpo", False), ("critique_grpo", True))
        },
    }
    report_path.write_text(json.dumps(report, indent=2))
    return report


def _critics(
    work: Path, base: Path, questions: Path, seed: int, scale: StudyScale
) -> tuple[Path, Path]:
    """The critic before (format warm start) and after critic GRPO on the base's answers."""
    from mmcritic.inference import Policy, load_model_for_inference

    critiques = work / "critiques"
    if not (critiques / "stats.json").is_file():
        model, processor = load_model_for_inference(str(base), "cpu", "float32")
        policy = Policy(model, processor, scale.max_new_tokens, batch_size=32)
        critique_data(policy, questions, critiques, scale.samples, 1.0, seed, BUDGET)
    data = [f"data.eval={critiques}", f"grpo.max_completion_length={scale.max_new_tokens}"]
    warm = final_model(
        stage_recipe(
            RECIPES / "quickstart_cpu_sft.yaml",
            work / "critic_warm",
            base,
            critiques,
            seed,
            ["sft.target=format", f"max_steps={scale.warm_steps}", *data],
        )
    )
    steps = scale.critic_steps
    trained = final_model(
        stage_recipe(
            RECIPES / "critique_rl_cpu.yaml",
            work / "critic_rl",
            warm,
            critiques,
            seed,
            [f"max_steps={steps}", f"rewards.refinement_from_step={steps // 2}", *data],
        )
    )
    return warm, trained


def refinement_accuracy(
    policy_dir: Path, critic_dir: Path, questions: list[Record], scale: StudyScale
) -> dict[str, Any]:
    """The policy's greedy answers to `questions`, critiqued by the critic and revised by the
    policy for up to `scale.rounds` rounds: accuracy per round, the flips, why each stopped,
    and how often the first verdict says rightly whether the first answer is right."""
    from mmcritic.inference import Critic, Policy, load_model_for_inference
    from mmcritic.inference.refine import refine_many

    policy = Policy(
        *load_model_for_inference(str(policy_dir), "cpu", "float32"), scale.max_new_tokens
    )
    critic = Critic(
        *load_model_for_inference(str(critic_dir), "cpu", "float32"), scale.max_new_tokens
    )
    items = [(record_media(q, BUDGET), q.meta["question"]) for q in questions]
    first = [answers[0].text for answers in policy.answer_many(items)]
    refined = refine_many(
        policy,
        critic,
        [(*item, text) for item, text in zip(items, first, strict=True)],
        scale.rounds,
    )
    records = [
        {
            "refine_scores": [float(answer_matches(step.answer, q.answer)) for step in r.steps],
            "refinement": {"stopped": r.stopped},
        }
        for r, q in zip(refined, questions, strict=True)
    ]
    verdicts = [
        r.steps[0].critique.accepts == bool(record["refine_scores"][0])
        for r, record in zip(refined, records, strict=True)
        if r.steps[0].critique is not None and r.steps[0].critique.accepts is not None
    ]
    return metrics.refinement(records, scale.rounds) | {
        "verdict_right": sum(verdicts) / len(questions)
    }


def _policy_run(
    work: Path,
    base: Path,
    questions: Path,
    heldout: Path,
    seed: int,
    scale: StudyScale,
    critique_grpo: bool,
) -> dict[str, Any]:
    name = "critique_grpo" if critique_grpo else "grpo"
    recipe = stage_recipe(
        RECIPES / "critique_grpo_cpu.yaml",
        work / name,
        base,
        questions,
        seed,
        [
            f"data.eval={heldout}",
            f"max_steps={scale.policy_steps}",
            f"grpo.critique_grpo.enabled={str(critique_grpo).lower()}",
        ],
    )
    summary = train(recipe)
    history = json.loads((Path(recipe.output_dir) / "log_history.json").read_text())
    tokens = [entry["tokens/generated"] for entry in history if "tokens/generated" in entry]
    after = summary.get("heldout_after", {}).get("policy", {})
    before = summary.get("heldout_before", {}).get("policy", {})
    return {
        "accuracy_before": before.get("accuracy"),
        "accuracy_after": after.get("accuracy"),
        "rollout_tokens": tokens[-1] if tokens else None,
    }


def summarize(runs: list[dict[str, Any]], scale: StudyScale) -> dict[str, Any]:
    """Each figure's mean and 95% t-interval over the seeds, in percent."""
    summary: dict[str, Any] = {"scale": asdict(scale), "seeds": [run["seed"] for run in runs]}
    for when in ("before", "after"):
        rounds = [run["refinement"][when]["accuracy_per_round"] for run in runs]
        summary[f"refinement_{when}"] = [
            mean_interval([100 * r[k] for r in rounds]) for k in range(scale.rounds + 1)
        ]
        summary[f"verdict_right_{when}"] = mean_interval(
            [100 * run["refinement"][when]["verdict_right"] for run in runs]
        )
    for name in ("grpo", "critique_grpo"):
        summary[name] = mean_interval([100 * run["policy"][name]["accuracy_after"] for run in runs])
    summary["base_policy"] = mean_interval(
        [100 * run["policy"]["grpo"]["accuracy_before"] for run in runs]
    )
    summary["runs"] = runs
    return summary
