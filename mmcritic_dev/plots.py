"""Training curves as a PNG: reward components per step, held-out accuracy over training (both
answer positions and position-consistent, with 95% intervals and chance lines), and the warm
start against the end of the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TRAIN_CURVES = {
    "rewards/preference/mean": "preference reward (train accuracy)",
    "rewards/format/mean": "format reward",
    "rewards/consistency/mean": "consistency reward",
    "frac_reward_zero_std": "groups with no reward spread",
}
HELDOUT_CURVES = {
    "accuracy_answer_1": ("better response first", "#2a7ab0"),
    "accuracy_answer_2": ("better response second", "#d08a1e"),
    "consistent_accuracy": ("right in both orders", "#2e8b57"),
}
CHANCE = {"per order": 0.5, "both orders": 0.25}


def plot_learning_curve(
    log_history: list[dict[str, Any]],
    heldout: dict[str, dict[str, Any]],
    path: Path,
    title: str,
) -> Path:
    """Draws the three panels into one PNG. `heldout` maps "warm start" and "after GRPO" (in
    that order) to held-out reports (`mmcritic.train.heldout.critic_report`); the reports the
    run logged in between (`heldout/...` entries of the log history) fill the middle panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (train, during, ends) = plt.subplots(
        1, 3, figsize=(16, 4.5), gridspec_kw={"width_ratios": [3, 3, 2]}
    )
    _train_panel(train, log_history)
    _heldout_panel(during, log_history, heldout)
    _ends_panel(ends, heldout)
    figure.suptitle(title)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def _train_panel(axes: Any, log_history: list[dict[str, Any]]) -> None:
    for key, label in TRAIN_CURVES.items():
        points = [(entry["step"], entry[key]) for entry in log_history if key in entry]
        if points:
            steps, values = zip(*points, strict=True)
            style = "--" if key == "frac_reward_zero_std" else "-"
            axes.plot(steps, values, style, label=label)
    axes.set(xlabel="optimizer step", ylabel="mean over the batch", ylim=(-0.02, 1.02))
    axes.set_title("training rollouts")
    axes.legend(loc="lower right", fontsize=8)
    axes.grid(alpha=0.3)


def _heldout_panel(
    axes: Any, log_history: list[dict[str, Any]], heldout: dict[str, dict[str, Any]]
) -> None:
    reports = list(heldout.values())
    last_step = max((entry.get("step", 0) for entry in log_history), default=0)
    for name, (label, colour) in HELDOUT_CURVES.items():
        points = [(0, *_with_interval(reports[0], name))]
        points += [
            (entry["step"], entry[f"heldout/{name}"], entry[f"heldout/{name}_low"],
             entry[f"heldout/{name}_high"])
            for entry in log_history
            if f"heldout/{name}" in entry
        ]  # fmt: skip
        points.append((last_step, *_with_interval(reports[-1], name)))
        steps, values, lows, highs = zip(*sorted(set(points)), strict=True)
        axes.plot(steps, [100 * v for v in values], "-o", color=colour, label=label, ms=3)
        lows_pct, highs_pct = [100 * v for v in lows], [100 * v for v in highs]
        axes.fill_between(steps, lows_pct, highs_pct, color=colour, alpha=0.15)
    for label, level in CHANCE.items():
        axes.axhline(100 * level, color="grey", ls=":", lw=1)
        axes.text(0, 100 * level + 1, f"chance ({label})", color="grey", fontsize=7)
    axes.set(xlabel="optimizer step", ylabel="held-out accuracy (%)", ylim=(0, 105))
    axes.set_title("held-out, judged in both orders (95% intervals)")
    axes.legend(loc="lower right", fontsize=8)
    axes.grid(alpha=0.3)


def _with_interval(report: dict[str, Any], name: str) -> tuple[float, float, float]:
    low, high = report[f"{name}_ci95"]
    return report[name], low, high


def _ends_panel(axes: Any, heldout: dict[str, dict[str, Any]]) -> None:
    names = {"accuracy": "accuracy", "consistent_accuracy": "right in\nboth orders"}
    width = 0.8 / len(heldout)
    for offset, (stage, report) in enumerate(heldout.items()):
        xs = [index + offset * width for index in range(len(names))]
        values = [100 * report[name] for name in names]
        errors = [
            [100 * max(report[name] - report[f"{name}_ci95"][0], 0.0) for name in names],
            [100 * max(report[f"{name}_ci95"][1] - report[name], 0.0) for name in names],
        ]
        axes.bar(xs, values, width, yerr=errors, capsize=3, label=stage)
        for x, value in zip(xs, values, strict=True):
            axes.text(x, value + 2, f"{value:.0f}", ha="center", fontsize=8)
    axes.set_xticks([index + width * (len(heldout) - 1) / 2 for index in range(len(names))])
    axes.set_xticklabels(names.values())
    axes.set(ylabel="held-out (%)", ylim=(0, 110))
    axes.set_title("warm start vs after GRPO")
    axes.legend(fontsize=8)


def plot_against_tokens(
    runs: list[dict[str, Any]], settings: list[str], path: Path, title: str
) -> Path:
    """Held-out accuracy right in both orders against generated tokens: each run faint, each
    setting's mean over its runs (at the same steps) bold, and chance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5))
    colours = ["#2a7ab0", "#d08a1e", "#2e8b57", "#8b3a62"]
    for name, colour in zip(settings, colours, strict=False):
        curves = [run["curve"] for run in runs if run["setting"] == name]
        for curve in curves:
            axes.plot(
                [p["tokens"] for p in curve],
                [p["consistent_accuracy"] for p in curve],
                color=colour,
                alpha=0.25,
            )
        points = min(len(curve) for curve in curves)
        tokens = [sum(c[i]["tokens"] for c in curves) / len(curves) for i in range(points)]
        accuracy = [
            sum(c[i]["consistent_accuracy"] for c in curves) / len(curves) for i in range(points)
        ]
        axes.plot(tokens, accuracy, "o-", color=colour, linewidth=2, label=f"{name} (mean)")
    axes.axhline(CHANCE["both orders"], color="grey", linestyle=":", label="chance (25%)")
    axes.set(
        xlabel="generated tokens",
        ylabel="held-out pairs right in both orders",
        ylim=(-0.02, 1.02),
    )
    axes.legend(loc="lower right")
    axes.set_title(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
