"""GRPO's group baseline against POISE's probe on the quickstart critic, at equal compute.

Every setting trains the quickstart's critic (recipes/quickstart_cpu.yaml) from the same
instruct base and warm start per seed, with 64 rollouts a step for the same number of steps, so
each generates about as many tokens: GRPO's group baseline with 4 rollouts a prompt (the
quickstart itself: 16 prompts a step, the pair's baseline over both orders), with 8 (8 prompts)
and with 2 (32 prompts), and POISE with 2 (32 prompts, `grpo.baseline: poise`), which differs
from group_n2 in its baseline alone. The held-out pairs are judged in both orders every
`data.eval_every` steps; the report puts accuracy right in both orders against the generated
tokens counted so far (`tokens/generated`) and the wall time.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from mmcritic.data.dataset import read_records
from mmcritic.data.pairs import with_both_orders
from mmcritic.models.devices import set_cpu_threads
from mmcritic.models.families import family_of_model
from mmcritic.models.loading import load_processor
from mmcritic.train.examples import to_dataset
from mmcritic.train.run import HELDOUT_FILE, LOG_HISTORY_FILE, make_trainer, train
from mmcritic_dev.plots import CHANCE, plot_against_tokens
from mmcritic_dev.profiling import median_interval, race, ratio_interval
from mmcritic_dev.quickstart import (
    QuickstartData,
    mean_interval,
    prepare_inputs,
    quickstart_recipes,
)

logger = logging.getLogger(__name__)

# rollouts a step in every setting (the quickstart's)
ROLLOUTS_PER_STEP = 64
# each setting's name (its run folder is grpo_<name>) and GRPO overrides
SETTINGS: dict[str, tuple[str, ...]] = {
    "group_n2": ("grpo.num_generations=2",),
    "group_n4": ("grpo.num_generations=4",),
    "group_n8": ("grpo.num_generations=8",),
    "poise_n2": (
        "grpo.num_generations=2",
        "grpo.baseline=poise",
        "grpo.scale_rewards=batch",
        "grpo.pair_baseline=false",
    ),
}
# the GRPO stage's wall time, written when a run ends (its other figures are in its logs)
TIMING_FILE = "baseline_result.json"
_HELDOUT = "heldout/consistent_accuracy"
REPORT_FILE = "baseline_compare.json"


def compare_baselines(
    work_dir: Path,
    sft_recipe: Path,
    grpo_recipe: Path,
    data: QuickstartData,
    seeds: list[int],
    overrides: list[str] | None = None,
    settings: list[str] | None = None,
    race_steps: int = 0,
) -> dict[str, Any]:
    """Each setting (all of SETTINGS, or those named) on each seed (a finished run's result
    is read back, not retrained), then one line per setting: held-out accuracy right in both
    orders (mean, 95% t-interval over seeds), generated tokens and wall time, and the curve
    against generated tokens. With `race_steps`, the settings' step times are then measured
    side by side on the first seed (`race_settings`): the runs' own wall times are only
    comparable on equally loaded cores."""
    set_cpu_threads(data.threads)
    chosen = settings or list(SETTINGS)
    unknown = sorted(set(chosen) - set(SETTINGS))
    if unknown:
        raise ValueError(f"no setting {unknown}; the settings are {list(SETTINGS)}")
    runs = [
        _run_setting(
            work_dir / f"seed_{seed}", name, (sft_recipe, grpo_recipe), data, seed, overrides
        )
        for seed in seeds
        for name in chosen
    ]
    report = {
        "seeds": seeds,
        "threads": data.threads,
        "rollouts_per_step": ROLLOUTS_PER_STEP,
        "chance_consistent_accuracy": CHANCE["both orders"],
        "settings": {name: _summary([r for r in runs if r["setting"] == name]) for name in chosen},
        "runs": runs,
    }
    report["plot"] = str(
        plot_against_tokens(
            runs,
            chosen,
            work_dir / "baseline_compare.png",
            f"Critic GRPO on the quickstart task: group baseline vs POISE "
            f"({len(seeds)} seeds, {ROLLOUTS_PER_STEP} rollouts a step, CPU)",
        )
    )
    if race_steps:
        seed_dir = work_dir / f"seed_{seeds[0]}"
        report["step_seconds"] = race_settings(
            seed_dir, (sft_recipe, grpo_recipe), replace(data, seed=seeds[0]), race_steps, 2, 2
        )
    report = {"summary": summary_lines(report), **report}
    (work_dir / REPORT_FILE).write_text(json.dumps(report, indent=2))
    return report


def _run_setting(
    seed_dir: Path,
    name: str,
    recipes: tuple[Path, Path],
    data: QuickstartData,
    seed: int,
    overrides: list[str] | None,
) -> dict[str, Any]:
    """One setting's GRPO on one seed (`recipes`: the warm start's and GRPO's)."""
    output_dir = seed_dir / f"grpo_{name}"
    timing = output_dir / TIMING_FILE
    if not timing.is_file():
        seeded = replace(data, seed=seed)
        sft, grpo = quickstart_recipes(
            seed_dir,
            *recipes,
            seeded,
            [f"output_dir={output_dir}", *SETTINGS[name], *(overrides or [])],
        )
        prepare_inputs(seed_dir, seeded)
        train(sft)
        logger.info("seed %d, %s: GRPO in %s", seed, name, output_dir)
        started = time.perf_counter()
        train(grpo)
        timing.write_text(json.dumps({"seconds": round(time.perf_counter() - started, 1)}))
    history = json.loads((output_dir / LOG_HISTORY_FILE).read_text())
    summary = json.loads((output_dir / HELDOUT_FILE).read_text())
    return {
        "setting": name,
        "seed": seed,
        "steps": summary["global_step"],
        "seconds": json.loads(timing.read_text())["seconds"],
        "curve": _curve(history, summary),
    }


def _curve(history: list[dict[str, Any]], summary: dict[str, Any]) -> list[dict[str, float]]:
    """(step, generated tokens, right in both orders) from the warm start to the end."""
    tokens = {e["step"]: e["tokens/generated"] for e in history if "tokens/generated" in e}
    points = [_point(0, 0.0, summary["heldout_before"])]
    for entry in history:
        if _HELDOUT in entry:
            step = entry["step"]
            heldout = {"consistent_accuracy": entry[_HELDOUT]}
            points.append(_point(step, _tokens_at(step, tokens), heldout))
    last = max(tokens)
    if points[-1]["step"] != last:
        points.append(_point(last, tokens[last], summary["heldout_after"]))
    return points


def _tokens_at(step: int, tokens: dict[int, float]) -> float:
    """The generated tokens at `step`: logged there, or interpolated between the nearest
    logged steps (a held-out report logged at a logging step used to displace that step's
    training log)."""
    if step in tokens:
        return tokens[step]
    before = max((s for s in tokens if s < step), default=0)
    after = min(s for s in tokens if s > step)
    low = tokens.get(before, 0.0)
    return low + (tokens[after] - low) * (step - before) / (after - before)


def _point(step: int, tokens: float, heldout: dict[str, Any]) -> dict[str, float]:
    return {"step": step, "tokens": tokens, "consistent_accuracy": heldout["consistent_accuracy"]}


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    finals = [100 * run["curve"][-1]["consistent_accuracy"] for run in runs]
    return {
        "consistent_accuracy": mean_interval(finals),
        "generated_tokens": round(statistics.fmean(run["curve"][-1]["tokens"] for run in runs)),
        "seconds": mean_interval([run["seconds"] for run in runs]),
    }


def race_settings(
    seed_dir: Path,
    recipes: tuple[Path, Path],
    data: QuickstartData,
    steps: int,
    warmup: int,
    block: int,
) -> dict[str, Any]:
    """Seconds per optimizer step of every setting from one seed's warm start, the trainers
    taking turns `block` steps at a time with threads pinned (`mmcritic_dev.profiling.race`),
    `warmup` steps of each dropped; medians with 95% intervals and ratios to group_n4's."""
    trainers = {}
    for name, overrides in SETTINGS.items():
        _, recipe = quickstart_recipes(
            seed_dir,
            *recipes,
            data,
            [
                f"output_dir={seed_dir / 'race' / name}",
                f"max_steps={warmup + steps}",
                "report_to=[]",
                *overrides,
            ],
        )
        trainers[name] = _trainer(recipe)
    seconds = race(trainers, block, data.seed, data.threads)
    measured = {name: times[warmup:] for name, times in seconds.items()}
    timing: dict[str, Any] = {"steps": steps, "warmup": warmup, "block": block}
    for name, times in measured.items():
        median, low, high = median_interval(times)
        ratio, ratio_low, ratio_high = ratio_interval(times, measured["group_n4"])
        timing[name] = {
            "step_s_median": round(median, 3),
            "step_s_ci95": [round(low, 3), round(high, 3)],
            "ratio_to_group_n4": round(ratio, 3),
            "ratio_ci95": [round(ratio_low, 3), round(ratio_high, 3)],
        }
    return timing


def _trainer(recipe: Any) -> Any:
    """The recipe's GRPO trainer on its training pairs (in both orders where it asks), as
    `mmcritic.train.run.train` builds it."""
    budget = family_of_model(recipe.model.name_or_path).media_budget(recipe.data.media_budget)
    records = read_records(recipe.data.train)
    if recipe.grpo.both_orders:
        records = with_both_orders(records)
    processor = load_processor(recipe.model.name_or_path, budget)
    return make_trainer(recipe, processor, to_dataset(records, budget))


def summary_lines(report: dict[str, Any]) -> list[str]:
    """One line per setting, as the benchmark ends."""
    lines = []
    timing = report.get("step_seconds", {})
    for name, summary in report["settings"].items():
        accuracy, seconds = summary["consistent_accuracy"], summary["seconds"]
        line = (
            f"{name}: right in both orders {accuracy['mean']:.1f}% +- {accuracy['ci95']:.1f} "
            f"(chance 25%) after {summary['generated_tokens']:,} generated tokens, "
            f"{seconds['mean']:.0f} s of GRPO ({len(report['seeds'])} seeds)"
        )
        if name in timing:
            step = timing[name]
            line += (
                f"; {step['step_s_median']:.2f} s a step interleaved, "
                f"{step['ratio_to_group_n4']:.2f}x group_n4's"
            )
        lines.append(line)
    return lines
