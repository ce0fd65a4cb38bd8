"""What self-critique costs: critic comparisons, sequential rounds and wall time per strategy
and N, and what batching each round buys over judging one pair at a time.

Candidates are fixed synthetic answers of similar length rather than policy samples, so the
figures measure selection alone and repeat from run to run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mmcritic.inference.critic import Critic
from mmcritic.inference.media import Media
from mmcritic.inference.self_critique import BestOfN, Judge, Strategy, best_of_n

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "black", "white")


@dataclass(frozen=True)
class CostRow:
    """One strategy at one N; `sequential_seconds` is set where one-at-a-time was timed."""

    strategy: str
    n: int
    comparisons: int
    rounds: int
    seconds: float
    sequential_seconds: float | None = None

    @property
    def speedup(self) -> float | None:
        return self.sequential_seconds / self.seconds if self.sequential_seconds else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"speedup": self.speedup}


def synthetic_candidates(n: int) -> list[str]:
    """n think/boxed answers that differ only in the colour they name."""
    return [
        f"<think>The square in the picture looks {COLOURS[i % len(COLOURS)]} to me.</think> "
        f"The answer is \\boxed{{{COLOURS[i % len(COLOURS)]}}}."
        for i in range(n)
    ]


def timed_best_of_n(
    judge: Judge,
    media: Media | None,
    question: str,
    n: int,
    strategy: Strategy,
    repeats: int = 1,
) -> tuple[BestOfN, float]:
    """The result and the fastest of `repeats` wall times: on a shared machine the minimum is
    the figure least disturbed by other work."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = best_of_n(judge, media, question, synthetic_candidates(n), strategy)
        times.append(time.perf_counter() - started)
    return result, min(times)


def self_critique_cost(
    model: Any,
    processor: Any,
    media: Media | None,
    question: str,
    sizes: Sequence[int] = (8, 16, 32),
    strategies: Sequence[Strategy] = ("knockout", "round_robin", "pointwise"),
    sequential: Sequence[Strategy] = ("knockout",),
    max_new_tokens: int = 32,
    batch_size: int = 32,
    repeats: int = 1,
) -> list[CostRow]:
    """Times every strategy at every size with batched rounds, and the `sequential` strategies
    again with one comparison per generate call."""
    batched = Critic(model, processor, max_new_tokens, batch_size=batch_size)
    one_at_a_time = Critic(model, processor, max_new_tokens, batch_size=1)
    for critic in (batched, one_at_a_time):  # warm-up: the first calls of each shape pay setup
        timed_best_of_n(critic, media, question, min(sizes), "knockout")
    rows = []
    for strategy in strategies:
        for n in sizes:
            result, seconds = timed_best_of_n(batched, media, question, n, strategy, repeats)
            sequential_seconds = None
            if strategy in sequential:
                timed = timed_best_of_n(one_at_a_time, media, question, n, strategy, repeats)
                sequential_seconds = timed[1]
            rounds = len(result.rounds) if strategy == "knockout" else 1
            rows.append(
                CostRow(strategy, n, result.comparisons, rounds, seconds, sequential_seconds)
            )
    return rows


def cost_table(rows: Sequence[CostRow]) -> str:
    """A fixed-width table of the rows, for reports."""
    lines = [
        f"{'strategy':<12} {'N':>3} {'comparisons':>11} {'rounds':>6} {'batched s':>9} "
        f"{'one-by-one s':>12} {'speed-up':>8}"
    ]
    for row in rows:
        sequential = f"{row.sequential_seconds:.2f}" if row.sequential_seconds else "-"
        speedup = f"{row.speedup:.1f}x" if row.speedup else "-"
        lines.append(
            f"{row.strategy:<12} {row.n:>3} {row.comparisons:>11} {row.rounds:>6} "
            f"{row.seconds:>9.2f} {sequential:>12} {speedup:>8}"
        )
    return "\n".join(lines)
