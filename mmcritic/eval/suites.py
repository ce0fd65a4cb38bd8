"""The benchmark suites the scripts in `benchmarks/` run, and the one-number summary per task."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mmcritic.eval.registry import CRITIC_BENCHMARKS, POLICY_BENCHMARKS, benchmark

POLICY_SUITE = POLICY_BENCHMARKS
CRITIC_SUITE = CRITIC_BENCHMARKS


def headline_metric(name: str) -> str:
    """The figure the benchmark's papers lead with (its folder's `HEADLINE`; the rest of the
    metrics stay in results.json); `accuracy` for a task of your own."""
    folder = benchmark(name)
    return folder.HEADLINE if folder is not None else "accuracy"


def headline(results: Mapping[str, Any]) -> dict[str, float | None]:
    """`{task: headline metric}` from `run_eval`'s results (None for a task with no samples)."""
    summary = {}
    for name, task in results["tasks"].items():
        metrics = task["metrics"]
        summary[name] = metrics.get(headline_metric(name)) if metrics else None
    return summary


def summary(results: Mapping[str, Any]) -> str:
    """A few lines a person reads after a run: per task its headline figure, sample count, the
    protocol with its prompt source and decoding, and what the run overrode."""
    lines = []
    for (name, task), figure in zip(
        results["tasks"].items(), headline(results).values(), strict=True
    ):
        settings = task.get("protocol", {})
        decoding = settings.get("decoding", {})
        shown = "n/a" if figure is None else f"{figure:.4f}"
        sampled = f"T={decoding.get('temperature')}" if decoding.get("sampled") else "greedy"
        lines.append(
            f"{name}: {headline_metric(name)} {shown} on {task['n_samples']} samples | "
            f"protocol {settings.get('name')}, {sampled}, max_new_tokens "
            f"{decoding.get('max_new_tokens')} | prompt: {settings.get('prompt_source')}"
        )
        if settings.get("overrides"):
            lines.append(f"  overrides: {settings['overrides']} (not the protocol's own numbers)")
        if task.get("n_failed"):
            lines.append(
                f"  FAILED: {task['n_failed']} samples got no response; --resume redoes them"
            )
        if task.get("n_rejected"):
            lines.append(f"  REJECTED: {task['n_rejected']} rows (reasons in rejected_rows.jsonl)")
        if task.get("n_score_errors"):
            lines.append(f"  SCORE ERRORS: {task['n_score_errors']} responses could not be scored")
        if "verdict_sources" in task:
            lines.append(f"  verdicts read: {task['verdict_sources']}")
    return "\n".join(lines)
