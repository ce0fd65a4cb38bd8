"""Self-critique scaling: accuracy against the number of sampled answers N, per strategy.

For each question the policy samples N_max answers once; every N in the sweep then uses the
first N of them, so the curves differ only in how answers are picked, never in which answers
were drawn. Majority vote is the baseline (no critic calls) and `oracle` (any of the N answers
right) the ceiling. N = 1 is the single sampled answer for every strategy.

Output folder: `scaling.json` (settings and curves), `scaling_samples.jsonl` (candidates and
each strategy's pick per question) and `scaling.png`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mmcritic.data.schema import RecordError
from mmcritic.eval.backends import Generation, ModelBackend, Sample, sample_media
from mmcritic.eval.metrics import mean
from mmcritic.eval.registry import get_task
from mmcritic.eval.rows import TaskRows
from mmcritic.eval.runner import make_sample
from mmcritic.eval.tasks import PolicyTask
from mmcritic.inference.engines import EngineOptions, open_engine
from mmcritic.inference.self_critique import STRATEGIES, Strategy
from mmcritic.reading.final import final_answer

logger = logging.getLogger(__name__)
BASELINE = "majority"
ORACLE = "oracle"


@dataclass(frozen=True)
class ScalingOptions:
    """One policy task, the N values to sweep (powers of two by default) and the strategies."""

    model: str
    task: str
    output: Path
    ns: tuple[int, ...] = (1, 2, 4, 8)
    strategies: tuple[Strategy, ...] = ("knockout", "round_robin", "pointwise", "majority")
    limit: int | None = None
    temperature: float = 1.0
    both_orders: bool = False
    max_new_tokens: int = 2048
    batch_size: int = 8
    seed: int = 0
    task_data: str | None = None
    media_root: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    show_progress: bool = True

    def __post_init__(self) -> None:
        if not isinstance(get_task(self.task), PolicyTask):
            raise ValueError(f"{self.task} is a critic task; self-critique scaling needs a policy")
        if not self.ns or min(self.ns) < 1 or list(self.ns) != sorted(set(self.ns)):
            raise ValueError(f"ns must be increasing positive counts, got {self.ns}")
        unknown = sorted(set(self.strategies) - set(STRATEGIES))
        if unknown:
            raise ValueError(f"unknown strategies {unknown}; choose from {sorted(STRATEGIES)}")
        if max(self.ns) > 1 and self.temperature <= 0:
            raise ValueError("sampling several answers needs temperature > 0 (e.g. 1.0)")


def run_scaling(options: ScalingOptions) -> dict[str, Any]:
    """Samples, selects and scores; writes the output folder and returns `scaling.json`."""
    task = get_task(options.task)
    generation = Generation(
        max_new_tokens=options.max_new_tokens,
        batch_size=options.batch_size,
        both_orders=options.both_orders,
        seed=options.seed,
    )
    engine = EngineOptions("hf", options.model, options.device, options.dtype, options.batch_size)
    backend = ModelBackend(open_engine(engine), generation)
    options.output.mkdir(parents=True, exist_ok=True)
    records = []
    with (options.output / "scaling_samples.jsonl").open("w", encoding="utf-8") as log:
        for sample in tqdm(_samples(task, options), disable=not options.show_progress):
            record = _question(backend, task, sample, options)
            log.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            log.flush()
            records.append(record)
    result = {
        "settings": {k: v for k, v in asdict(options).items() if k != "output"},
        "n_questions": len(records),
        "curves": scaling_curves(records, options.ns, options.strategies),
    }
    (options.output / "scaling.json").write_text(json.dumps(result, indent=2, default=str))
    plot_scaling(result["curves"], options.output / "scaling.png", title=options.task)
    return result


def _samples(task: PolicyTask, options: ScalingOptions) -> list[Sample]:
    rows = TaskRows(task, options.task_data)
    base = Path(options.media_root) if options.media_root else rows.base_dir()
    samples = []
    for doc_id, row in islice(rows, options.limit):
        if isinstance(row, RecordError):
            raise ValueError(f"{rows.location} row {doc_id}: {row}")
        samples.append(make_sample(task, doc_id, row, base))
    return samples


def _question(
    backend: ModelBackend, task: PolicyTask, sample: Sample, options: ScalingOptions
) -> dict[str, Any]:
    """One question: N_max candidates, each candidate's score, and each (strategy, N) pick."""
    from mmcritic.inference import best_of_n

    media, question = sample_media(sample, task.max_frames), sample.item.text
    candidates = backend.complete([(media, question)], max(options.ns), options.temperature)[0]
    scores = [task.score(final_answer(text), sample.item).score for text in candidates]
    picks: dict[str, dict[str, int]] = {}
    for strategy in options.strategies:
        picks[strategy] = {"1": 0}
        for n in (n for n in options.ns if n > 1):
            chosen = best_of_n(
                backend.critic,
                media,
                question,
                candidates[:n],
                strategy,
                both_orders=options.both_orders,
                seed=options.seed,
            ).chosen
            picks[strategy][str(n)] = chosen
    return {"doc_id": sample.doc_id, "candidates": candidates, "scores": scores, "picks": picks}


def scaling_curves(
    records: Sequence[Mapping[str, Any]], ns: Sequence[int], strategies: Sequence[str]
) -> dict[str, dict[str, float]]:
    """`{strategy: {N: accuracy}}` plus `oracle`: the mean score of each strategy's pick, and
    the share of questions with at least one right answer among the first N."""
    curves = {
        strategy: {
            str(n): mean(r["scores"][r["picks"][strategy][str(n)]] for r in records) for n in ns
        }
        for strategy in strategies
    }
    curves[ORACLE] = {str(n): mean(max(r["scores"][:n]) for r in records) for n in ns}
    return curves


def plot_scaling(curves: Mapping[str, Mapping[str, float]], path: Path, title: str = "") -> Path:
    """Accuracy against N on a log2 axis: a line per strategy, majority vote dashed as the
    baseline and the oracle dotted as the ceiling."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4))
    ns: list[int] = []
    for name, curve in curves.items():
        ns = [int(n) for n in curve]
        style = {BASELINE: "--", ORACLE: ":"}.get(name, "-")
        axis.plot(ns, list(curve.values()), style, marker="o", label=name)
    axis.set_xscale("log", base=2)
    axis.set_xticks(ns, [str(n) for n in ns])
    axis.set_ylim(0, 1)
    axis.set_xlabel("N (sampled answers)")
    axis.set_ylabel("accuracy")
    axis.set_title(f"Self-critique scaling{f': {title}' if title else ''}")
    axis.legend()
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
