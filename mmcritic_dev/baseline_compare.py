"""GRPO's group baseline against POISE's probe on the quickstart critic, at equal compute.

Every setting trains the quickstart's critic (recipes/quickstart_cpu.yaml) from the same
instruct base and warm start per seed, with 64 rollouts a step for the same number of steps, so
each generates about as many tokens: GRPO's group baseline with 4 rollouts a prompt (the
quickstart itself: 16 prompts a step, the pair's baseline over both orders) and with 8 (8
prompts), and POISE with 2 (32 prompts, `grpo.baseline: poise`). The held-out pairs are judged
in both orders every `data.eval_every` steps; the report puts accuracy right in both orders
against the generated tokens counted so far (`tokens/generated`) and the wall time.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from mmcritic.models.devices import set_cpu_threads
from mmcritic.train.run import HELDOUT_FILE, LOG_HISTORY_FILE, train
from mmcritic_dev.plots import CHANCE, plot_against_tokens
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
) -> dict[str, Any]:
    """Each setting (all of SETTINGS, or those named) on each seed (a finished run's result
    is read back, not retrained), then one line per setting: held-out accuracy right in both
    orders (mean, 95% t-interval over seeds), generated tokens and wall time, and the curve
    against generated tokens."""
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
        "settings": {
            name: _summary([r for r in runs if r["setting"] == name]) for name in SETTINGS
        },
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


def summary_lines(report: dict[str, Any]) -> list[str]:
    """One line per setting, as the benchmark ends."""
    lines = []
    for name, summary in report["settings"].items():
        accuracy, seconds = summary["consistent_accuracy"], summary["seconds"]
        lines.append(
            f"{name}: right in both orders {accuracy['mean']:.1f}% +- {accuracy['ci95']:.1f} "
            f"(chance 25%) after {summary['generated_tokens']:,} generated tokens, "
            f"{seconds['mean']:.0f} s of GRPO ({len(report['seeds'])} seeds)"
        )
    return lines
