"""Where responses come from: a model (through `mmcritic.inference`) or a replay file.

The runner only sees `Backend.answer` and `Backend.judge`, so re-scoring saved predictions and
running a checkpoint take the same path through prompt building, scoring and aggregation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mmcritic.eval.data import model_media
from mmcritic.eval.tasks import CriticTask, Pair, PolicyTask, Problem
from mmcritic.inference.self_critique import Strategy
from mmcritic.rewards.parsing import parse_judgement

if TYPE_CHECKING:
    from mmcritic.inference import Media

SWAP = {"1": "2", "2": "1", "tie": "tie", None: None}


@dataclass(frozen=True)
class Sample:
    """One row ready for the model: its id, what the task built from it, and where its
    relative media paths resolve."""

    doc_id: int
    item: Problem | Pair
    base_dir: Path


@dataclass(frozen=True)
class PolicyOutput:
    """The response that is scored, and with self-critique the candidates and the selection."""

    response: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CriticOutput:
    """A verdict in the published order ("1", "2", "tie" or None); with both orders, the
    verdict on the swapped pair mapped back so "1" still means response 1. `source` says how
    the verdict was read: "box", "phrase" (stated in words, no box) or None (unreadable)."""

    verdict: str | None
    raw: str
    reason: str
    swapped_verdict: str | None = None
    swapped_raw: str | None = None
    both_orders: bool = False
    source: str | None = None
    swapped_source: str | None = None


def critic_output(raw: str, swapped_raw: str | None = None) -> CriticOutput:
    """Reads a critic's text (and its text for the swapped pair) the way evaluation reads
    verdicts: `parse_judgement`, a box or else a verdict stated in words."""
    first = parse_judgement(raw)
    if swapped_raw is None:
        return CriticOutput(first.choice, raw, first.reason, source=first.source)
    swapped = parse_judgement(swapped_raw)
    return CriticOutput(
        first.choice,
        raw,
        first.reason,
        SWAP[swapped.choice],
        swapped_raw,
        both_orders=True,
        source=first.source,
        swapped_source=swapped.source,
    )


class Backend(Protocol):
    def answer(self, task: PolicyTask, samples: Sequence[Sample]) -> list[PolicyOutput]:
        """One output per sample, in order."""
        ...

    def judge(
        self, task: CriticTask, samples: Sequence[Sample], both_orders: bool
    ) -> list[CriticOutput]:
        """One verdict per sample, in order."""
        ...


@dataclass(frozen=True)
class Generation:
    """How the model answers. Greedy with `bon_n` 1; otherwise `bon_n` samples at
    `temperature` and a self-critique pick by `bon_strategy`. `think_suffix` appends the
    think/boxed instruction to policy prompts (`Policy(think_suffix=...)`)."""

    max_new_tokens: int = 2048
    batch_size: int = 8
    think_suffix: bool = True
    bon_n: int = 1
    bon_strategy: Strategy = "knockout"
    temperature: float = 1.0
    both_orders: bool = False
    seed: int = 0


class ModelBackend:
    """A checkpoint behind `Policy`, `Critic` and `best_of_n`; one model serves all three."""

    def __init__(self, model_path: str, generation: Generation, device: str, dtype: str):
        from mmcritic.inference import Critic, Policy, load_model_for_inference

        model, processor = load_model_for_inference(model_path, device=device, dtype=dtype)
        tokens, batch = generation.max_new_tokens, generation.batch_size
        self.policy = Policy(
            model,
            processor,
            max_new_tokens=tokens,
            batch_size=batch,
            think_suffix=generation.think_suffix,
        )
        self.critic = Critic(model, processor, max_new_tokens=tokens, batch_size=batch)
        self.generation = generation

    def answer(self, task: PolicyTask, samples: Sequence[Sample]) -> list[PolicyOutput]:
        items = [(sample_media(sample, task.max_frames), sample.item.text) for sample in samples]
        gen = self.generation
        if gen.bon_n == 1:
            texts = [outputs[0] for outputs in self.complete(items, 1, 0.0)]
            return [PolicyOutput(text) for text in texts]
        candidates = self.complete(items, gen.bon_n, gen.temperature)
        return [
            self._select(media, question, texts)
            for (media, question), texts in zip(items, candidates, strict=True)
        ]

    def complete(
        self, items: Sequence[tuple[Any, str]], n: int, temperature: float
    ) -> list[list[str]]:
        """`n` completion texts per (media, question)."""
        seed = self.generation.seed
        answers = self.policy.answer_many(items, n=n, temperature=temperature, seed=seed)
        return [[answer.text for answer in samples] for samples in answers]

    def _select(self, media: Any, question: str, texts: list[str]) -> PolicyOutput:
        from mmcritic.inference import best_of_n

        gen = self.generation
        picked = best_of_n(
            self.critic, media, question, texts, gen.bon_strategy, gen.both_orders, gen.seed
        )
        return PolicyOutput(texts[picked.chosen], {"self_critique": picked.to_dict()})

    def judge(
        self, task: CriticTask, samples: Sequence[Sample], both_orders: bool
    ) -> list[CriticOutput]:
        pairs = [(sample_media(sample, task.max_frames), sample.item) for sample in samples]
        items = [(media, p.question, p.response_1, p.response_2) for media, p in pairs]
        judged = self.critic.compare_many(items, both_orders=both_orders)
        return [critic_output(c.raw, c.swapped_raw if c.both_orders else None) for c in judged]


def sample_media(sample: Sample, max_frames: int | None) -> list[Media]:
    """Everything a sample shows the model, in prompt order."""
    item = sample.item
    return model_media(item.images, item.videos, sample.base_dir, max_frames)


class ReplayBackend:
    """Saved responses, one JSON line each: `{"task", "doc_id", "response"}`, `doc_id` being the
    0-based row index in the task's split. A critic line may add `swapped_response`, the critic's
    output for the swapped pair, which `--both-orders` needs."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.lines = _read_replay(self.path)

    def _line(self, task: str, doc_id: int) -> dict[str, Any]:
        line = self.lines.get((task, doc_id))
        if line is None:
            have = sorted(doc for name, doc in self.lines if name == task)
            raise ValueError(
                f"{self.path} has no response for task {task} doc_id {doc_id} (it has "
                f"{len(have)} for this task{f', the first {have[:5]}' if have else ''}); "
                "use --limit or a file covering every row"
            )
        return line

    def answer(self, task: PolicyTask, samples: Sequence[Sample]) -> list[PolicyOutput]:
        return [PolicyOutput(str(self._line(task.name, s.doc_id)["response"])) for s in samples]

    def judge(
        self, task: CriticTask, samples: Sequence[Sample], both_orders: bool
    ) -> list[CriticOutput]:
        return [self._verdict(task.name, sample.doc_id, both_orders) for sample in samples]

    def _verdict(self, task: str, doc_id: int, both_orders: bool) -> CriticOutput:
        line = self._line(task, doc_id)
        if not both_orders:
            return critic_output(str(line["response"]))
        if "swapped_response" not in line:
            raise ValueError(
                f"{self.path}: task {task} doc_id {doc_id} has no swapped_response, which "
                "--both-orders needs"
            )
        return critic_output(str(line["response"]), str(line["swapped_response"]))


def _read_replay(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    if not path.is_file():
        raise FileNotFoundError(f"replay file not found: {path}")
    lines: dict[tuple[str, int], dict[str, Any]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
                key = (str(line["task"]), int(line["doc_id"]))
                if "response" not in line:
                    raise KeyError("response")
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
                raise ValueError(
                    f'{path} line {number}: expected {{"task", "doc_id", "response"}} ({err})'
                ) from err
            if key in lines:
                raise ValueError(f"{path} line {number}: a second response for {key}")
            lines[key] = line
    return lines
