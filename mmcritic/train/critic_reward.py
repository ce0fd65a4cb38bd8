"""A critic model as the reward of policy GRPO: the trained critic (or the policy itself) judges
each group's rollouts.

`CriticJudgeReward` is a TRL reward function. Rows of one prompt arrive next to each other (the
`id` column names the prompt); per group the critic either

- scores each rollout alone (`pointwise`): a 1..scale score mapped to [0, 1]; an unreadable
  score gives no reward (None, which TRL leaves out of the weighted sum), or
- compares rollouts in pairs (`pairwise`), each pair judged in both orders by default so a
  position-biased critic cannot favour whoever is shown first: a rollout's reward is its win
  rate within the group, a win 1, a loss 0, a tie, an undecided pair (the orders disagree, or
  only one of them could be read: one order alone is the critic's position bias as much as its
  judgement) or an unreadable verdict 1/2 each. `round_robin` plays every pair (n(n-1)/2
  comparisons); `knockout`
  plays a bracket (n-1), and the win rate is over the matches a rollout played.

All comparisons of a step go to the critic in one batched call per round. The critic is a
`mmcritic.inference.Critic` over a checkpoint, the same in a separate process
(`CriticProcess`), a critic served elsewhere (`rewards.critic_engine: openai`: every request of
a round goes out concurrently, spread over `rewards.critic_base_urls`), or the policy being
trained (`bind`, done by the trainer each step, with the weights frozen for it). A judgement the
server lost books nothing: a rollout left with no judged match, or no score, gets None (left out
by TRL), never 0. Logged per step: `critic/calls` (generations), `critic/unreadable` (share of
judgements without a verdict or score), `critic/order_agreement` (share of readable both-order
comparisons whose orders agree), `critic/one_order` (share of both-order comparisons with one
order unread, undecided), `critic/failed` (judgements lost by the engine), `critic/latency_s`
(time waiting on the critic) and `critic/seconds`.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

from mmcritic.data.media import MediaBudget
from mmcritic.rewards.answers import as_judged
from mmcritic.rewards.critic import completion_text

if TYPE_CHECKING:
    from mmcritic.inference.critic import Comparison, PairItem, PointItem, Score

JudgeMode = Literal["pointwise", "pairwise"]
Tournament = Literal["round_robin", "knockout"]
UNDECIDED_POINTS = 0.5


@dataclass(frozen=True)
class JudgeOptions:
    mode: JudgeMode = "pairwise"
    tournament: Tournament = "round_robin"
    both_orders: bool = True
    scale: int = 10
    # for a critic the trainer builds over the policy (`judges_itself`)
    max_new_tokens: int = 512
    batch_size: int = 16


@dataclass
class _Step:
    """What one reward call asked of the critic, for the step's metrics."""

    calls: int = 0
    judgements: int = 0
    unreadable: int = 0
    agreements: int = 0
    both_readable: int = 0
    one_order: int = 0
    failed: int = 0
    waited_s: float = 0.0


class CriticJudgeReward:
    """The critic's judgement of each rollout as a reward in [0, 1] (see the module docstring).
    `critic` is anything with `compare_many` and `score_many` (`Critic`, `CriticProcess`);
    None until `bind` gives it one (the policy as its own judge)."""

    __name__ = "critic"

    def __init__(
        self,
        options: JudgeOptions,
        budget: MediaBudget,
        critic: Any = None,
        judges_itself: bool = False,
    ):
        self.options, self.budget, self.critic = options, budget, critic
        # the policy being trained is the critic: the trainer binds it, frozen, for each step
        self.judges_itself = judges_itself
        self.total_calls = 0

    def bind(self, critic: Any) -> None:
        """The critic to judge with from now on (None: none until the next bind)."""
        self.critic = critic

    def __call__(
        self,
        completions: list,
        id: list,
        question: list,
        image_paths: list,
        video_paths: list,
        video_options: list | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        if self.critic is None:
            raise RuntimeError("the critic reward has no critic: bind one before rewarding")
        started = time.perf_counter()
        # shown to the critic in plain words: a rollout cannot write the judge's verdict
        texts = [as_judged(completion_text(completion)) for completion in completions]
        options = video_options or ["{}"] * len(texts)
        media = [self._media(*row) for row in zip(image_paths, video_paths, options, strict=True)]
        groups = _groups(id)
        step = _Step()
        if self.options.mode == "pointwise":
            rewards = self._pointwise(media, question, texts, step)
        else:
            rewards = self._pairwise(groups, media, question, texts, step)
        self.total_calls += step.calls
        if log_metric is not None:
            log_metric("critic/calls", step.calls)
            log_metric("critic/unreadable", step.unreadable / max(step.judgements, 1))
            if step.both_readable:
                log_metric("critic/order_agreement", step.agreements / step.both_readable)
            log_metric("critic/one_order", step.one_order / max(step.judgements, 1))
            log_metric("critic/failed", step.failed)
            log_metric("critic/latency_s", step.waited_s)
            log_metric("critic/seconds", time.perf_counter() - started)
        return rewards

    def _media(self, images: Sequence[str], videos: Sequence[str], options: str) -> list[Any]:
        return row_media(self.budget, images, videos, options)

    def _pointwise(
        self, media: list[Any], questions: list[str], texts: list[str], step: _Step
    ) -> list[float | None]:
        items = list(zip(media, questions, texts, strict=True))
        waiting = time.perf_counter()
        scores: list[Score] = self.critic.score_many(items)
        step.waited_s += time.perf_counter() - waiting
        step.calls += len(items)
        step.failed += sum(score.failure is not None for score in scores)
        step.judgements += len(items)
        step.unreadable += sum(score.score is None and not score.failure for score in scores)
        span = self.options.scale - 1
        return [
            None if score.score is None else min(max((score.score - 1) / span, 0.0), 1.0)
            for score in scores
        ]

    def _pairwise(
        self,
        groups: list[list[int]],
        media: list[Any],
        questions: list[str],
        texts: list[str],
        step: _Step,
    ) -> list[float | None]:
        points: Counter[int] = Counter()
        played: Counter[int] = Counter()
        entrants = [list(rows) for rows in groups]
        while True:
            matches = self._matches(entrants, groups)
            if not matches:
                break
            items: list[PairItem] = [
                (media[a], questions[a], texts[a], texts[b]) for a, b in matches
            ]
            waiting = time.perf_counter()
            judged = self.critic.compare_many(items, self.options.both_orders)
            step.waited_s += time.perf_counter() - waiting
            step.calls += len(items) * (2 if self.options.both_orders else 1)
            winners = {}
            for (a, b), comparison in zip(matches, judged, strict=True):
                winners[(a, b)] = _score_match(a, b, comparison, points, played, step)
            if self.options.tournament == "round_robin":
                break
            entrants = [_advance(rows, winners) for rows in entrants]
        return [points[row] / played[row] if played[row] else None for row in range(len(texts))]

    def _matches(self, entrants: list[list[int]], groups: list[list[int]]) -> list[tuple[int, int]]:
        if self.options.tournament == "round_robin":
            return [pair for rows in groups for pair in combinations(rows, 2)]
        return [
            (rows[index], rows[index + 1])
            for rows in entrants
            if len(rows) > 1
            for index in range(0, len(rows) - 1, 2)
        ]


def row_media(
    budget: MediaBudget, images: Sequence[str], videos: Sequence[str], options: str
) -> list[Any]:
    """A training row's images and videos (its `image_paths`, `video_paths` and
    `video_options` columns) as a model outside the training pass is shown them."""
    from mmcritic.inference.media import Media

    image = budget.image
    video = budget.video.with_overrides(json.loads(options or "{}"))
    return [
        *(Media.image(path, image.min_pixels, image.max_pixels) for path in images),
        *(Media.video_in(path, video) for path in videos),
    ]


def _score_match(
    a: int,
    b: int,
    comparison: Comparison,
    points: Counter[int],
    played: Counter[int],
    step: _Step,
) -> int:
    """Books one comparison; returns who goes through (the first shown when undecided). A
    comparison the engine lost books nothing: a rollout with no other match gets no reward."""
    if comparison.failure is not None:
        step.failed += 1
        return a
    played[a] += 1
    played[b] += 1
    step.judgements += 1
    if comparison.verdict is None and comparison.swapped_verdict is None:
        step.unreadable += 1
    if comparison.agreement is not None:
        step.both_readable += 1
        step.agreements += comparison.agreement
    decision = comparison.decision
    one_order = (comparison.verdict is None) != (comparison.swapped_verdict is None)
    if comparison.both_orders and one_order:
        step.one_order += 1  # its verdict alone would let the critic's position bias choose
        decision = None
    if decision == "1":
        points[a] += 1
        return a
    if decision == "2":
        points[b] += 1
        return b
    points[a] += UNDECIDED_POINTS
    points[b] += UNDECIDED_POINTS
    return a


def _advance(rows: list[int], winners: dict[tuple[int, int], int]) -> list[int]:
    """The next round of a knockout bracket: each match's winner, and a bye for an odd one out
    (it opens the next round)."""
    if len(rows) < 2:
        return rows
    advanced = [winners[(rows[i], rows[i + 1])] for i in range(0, len(rows) - 1, 2)]
    return [rows[-1], *advanced] if len(rows) % 2 else advanced


def _groups(ids: Sequence[Any]) -> list[list[int]]:
    """Rows of one prompt: runs of the same id, in order."""
    groups: list[list[int]] = []
    previous = object()
    for row, key in enumerate(ids):
        if key != previous:
            groups.append([])
            previous = key
        groups[-1].append(row)
    return groups


class CriticProcess:
    """A critic checkpoint served by a separate process: the training process sends the items
    and gets the judgements back, so the critic's weights and generation live elsewhere (another
    GPU, or the CPU) and the policy's memory stays its own."""

    def __init__(self, path: str, device: str, dtype: str, max_new_tokens: int, batch_size: int):
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        settings = (path, device, dtype, max_new_tokens, batch_size)
        self._process = context.Process(target=_serve, args=(child, settings), daemon=True)
        self._process.start()
        ready = self._pipe.recv()
        if isinstance(ready, BaseException):
            raise RuntimeError(f"the critic process could not load {path}") from ready

    def compare_many(
        self, items: Sequence[PairItem], both_orders: bool = False
    ) -> list[Comparison]:
        return self._ask("compare_many", list(items), both_orders)

    def score_many(self, items: Sequence[PointItem]) -> list[Score]:
        return self._ask("score_many", list(items))

    def _ask(self, method: str, *args: Any) -> Any:
        self._pipe.send((method, args))
        answer = self._pipe.recv()
        if isinstance(answer, BaseException):
            raise RuntimeError(f"the critic process failed in {method}") from answer
        return answer

    def close(self) -> None:
        if self._process.is_alive():
            self._pipe.send(None)
            self._process.join(timeout=30)


def _serve(pipe: Any, settings: tuple[str, str, str, int, int]) -> None:
    """The critic process: loads the critic, then answers requests until told to stop."""
    from mmcritic.inference import Critic, load_model_for_inference

    path, device, dtype, max_new_tokens, batch_size = settings
    try:
        model, processor = load_model_for_inference(path, device, dtype)
        critic = Critic(model, processor, max_new_tokens, batch_size=batch_size)
    except Exception as error:
        pipe.send(error)
        return
    pipe.send("ready")
    while (request := pipe.recv()) is not None:
        method, args = request
        try:
            pipe.send(getattr(critic, method)(*args))
        except Exception as error:
            pipe.send(error)
