"""Training curves as a PNG: reward components per step, and held-out accuracy before/after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CURVES = {
    "rewards/preference/mean": "preference reward (train accuracy)",
    "rewards/format/mean": "format reward",
    "reward": "total reward",
}


def plot_learning_curve(
    log_history: list[dict[str, Any]], heldout: dict[str, float], path: Path, title: str
) -> Path:
    """Draws the logged reward curves and the held-out accuracy points into one figure.

    `heldout` maps a label (e.g. "warm start", "after GRPO") to an accuracy in [0, 1].
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (curves, bars) = plt.subplots(
        1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 1]}
    )
    for key, label in CURVES.items():
        points = [(entry["step"], entry[key]) for entry in log_history if key in entry]
        if points:
            steps, values = zip(*points, strict=True)
            curves.plot(steps, values, label=label)
    curves.set(xlabel="optimizer step", ylabel="mean reward", ylim=(-0.02, 1.02), title=title)
    curves.legend(loc="lower right")
    curves.grid(alpha=0.3)
    labels = list(heldout)
    values = [100 * heldout[label] for label in labels]
    bars.bar(labels, values, color=["#999999", "#2a7ab0"][: len(labels)])
    for index, value in enumerate(values):
        bars.text(index, value + 1, f"{value:.1f}", ha="center")
    bars.set(ylabel="held-out preference accuracy (%)", ylim=(0, 105), title="held-out")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
