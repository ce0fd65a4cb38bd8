"""Where responses come from: a model (through `mmcritic.inference`) or a replay file.

The runner only sees `Backend.answer` and `Backend.judge`, so re-scoring saved predictions and
running a checkpoint take the same path through prompt building, scoring and aggregation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mmcritic.data.media import MediaBudget
from mmcritic.eval.protocols.prompt import Decoding, Prompt
from mmcritic.eval.rows import model_media
from mmcritic.eval.tasks import CriticTask, Pair, PolicyTask, Problem
from mmcritic.inference.engines.base import Completions, EngineError, RequestFailed
from mmcritic.inference.self_critique import Strategy
from mmcritic.inference.votes import majority_vote
from mmcritic.rewards.parsing import Judgement, parse_judgement

if TYPE_CHECKING:
    from mmcritic.inference import Media
    from mmcritic.inference.engines import Engine, Request

SWAP = {"1": "2", "2": "1", "tie": "tie", None: None}

# what a backend gives for each sample: a policy answer or a critic's texts
Output = TypeVar("Output")


@dataclass(frozen=True)
class Sample:
    """One row ready for the model: its id, what the task built from it (scored against), the
    prompt the protocol asks (and the swapped pair's, for critic tasks judged both ways), and
    where its relative media paths resolve."""

    doc_id: int
    item: Problem | Pair
    base_dir: Path
    prompt: Prompt
    swapped_prompt: Prompt | None = None


@dataclass(frozen=True)
class PolicyOutput:
    """The response that is scored, and with self-critique the candidates and the selection;
    `failure` when the engine gave no response (a server lost the request): the sample is
    recorded as failed, not scored; `rejection` when its media cannot be shown (the row is
    rejected with that reason)."""

    response: str
    extra: dict[str, Any] = field(default_factory=dict)
    failure: RequestFailed | None = None
    rejection: str | None = None


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
    # Voting@k: each sampled critique's verdict and the vote's margin (`mmcritic.inference.votes`)
    votes: tuple[str | None, ...] = ()
    vote_margin: float | None = None
    swapped_votes: tuple[str | None, ...] = ()
    swapped_vote_margin: float | None = None


@dataclass(frozen=True)
class CriticTexts:
    """What a critic wrote about a pair, and about the swapped pair when judged both ways; with
    Voting@k, every sampled critique (`raw` is then the first of them); `failure` when the
    engine lost a request of the pair, `rejection` when its media cannot be shown."""

    raw: str
    swapped_raw: str | None = None
    votes: tuple[str, ...] = ()
    swapped_votes: tuple[str, ...] = ()
    failure: RequestFailed | None = None
    rejection: str | None = None


@dataclass(frozen=True)
class _Read:
    choice: str | None
    raw: str
    reason: str
    source: str | None
    votes: tuple[str | None, ...] = ()
    margin: float | None = None


def critic_output(
    texts: CriticTexts, read: Callable[[str], Judgement] = parse_judgement
) -> CriticOutput:
    """Reads a critic's texts with the protocol's verdict reader (`parse_judgement` by
    default: a box, else a verdict stated in words); sampled critiques are put to a vote."""
    first = _read_order(texts.raw, texts.votes, read)
    if texts.swapped_raw is None:
        return CriticOutput(
            first.choice,
            first.raw,
            first.reason,
            source=first.source,
            votes=first.votes,
            vote_margin=first.margin,
        )
    swapped = _read_order(texts.swapped_raw, texts.swapped_votes, read)
    return CriticOutput(
        first.choice,
        first.raw,
        first.reason,
        SWAP[swapped.choice],
        swapped.raw,
        both_orders=True,
        source=first.source,
        swapped_source=swapped.source,
        votes=first.votes,
        vote_margin=first.margin,
        swapped_votes=tuple(SWAP[vote] for vote in swapped.votes),
        swapped_vote_margin=swapped.margin,
    )


def _read_order(raw: str, votes: tuple[str, ...], read: Callable[[str], Judgement]) -> _Read:
    if not votes:
        judged = read(raw)
        return _Read(judged.choice, raw, judged.reason, judged.source)
    judged_votes = [read(text) for text in votes]
    vote = majority_vote([judged.choice for judged in judged_votes])
    shown = next(
        (
            (text, judged)
            for text, judged in zip(votes, judged_votes, strict=True)
            if judged.choice == vote.verdict
        ),
        (votes[0], judged_votes[0]),
    )
    choices = tuple(judged.choice for judged in judged_votes)
    return _Read(vote.verdict, shown[0], vote.reason, shown[1].source, choices, vote.margin)


class Backend(Protocol):
    def answer(self, task: PolicyTask, samples: Sequence[Sample]) -> list[PolicyOutput]:
        """One output per sample, in order."""
        ...

    def judge(
        self, task: CriticTask, samples: Sequence[Sample], both_orders: bool
    ) -> list[CriticTexts]:
        """What the critic wrote for each sample, in order (and for its swapped pair)."""
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
    critic_votes: int = 1
    seed: int = 0
    # critique-and-revise rounds after the answer (`mmcritic.inference.refine`), the model
    # critiquing itself; with `bon_n` > 1 the chosen answer is refined, or with `refine_each`
    # every candidate before the pick
    refine_rounds: int = 0
    refine_each: bool = False


class ModelBackend:
    """A model behind one generation engine (in process or served): protocol prompts go to it
    directly, and `Policy`, `Critic` and `best_of_n` share it for self-critique. `media` sizes
    every image and video (the protocol's budget)."""

    def __init__(self, engine: Engine, generation: Generation, media: MediaBudget | None = None):
        from mmcritic.inference import Critic, Policy

        tokens = generation.max_new_tokens
        self.engine = engine
        self.policy = Policy.on(engine, max_new_tokens=tokens, think_suffix=generation.think_suffix)
        self.critic = Critic.on(engine, max_new_tokens=tokens)
        self.generation = generation
        self.media = media

    def describe(self) -> dict[str, Any]:
        """The engine as results files record it."""
        return self.engine.describe()

    def answer(self, task: PolicyTask, samples: Sequence[Sample]) -> list[PolicyOutput]:
        shown = [self._shown(sample, task) for sample in samples]
        return _around_rejections(
            samples, shown, lambda why: PolicyOutput("", rejection=why), self._answer
        )

    def _answer(self, samples: Sequence[Sample], media: Sequence[Any]) -> list[PolicyOutput]:
        if not samples:
            return []
        requests = [_request(s.prompt, m) for s, m in zip(samples, media, strict=True)]
        decoding, gen = _decoding([s.prompt for s in samples]), self.generation
        if gen.bon_n == 1:
            outcomes = self.engine.try_generate(requests, _sampling(decoding, 1, None, gen.seed))
            answers = [_policy_output(outcome) for outcome in outcomes]
            return self._refined(samples, media, answers) if gen.refine_rounds else answers
        sampling = _sampling(decoding, gen.bon_n, gen.temperature, gen.seed)
        candidates = self.engine.try_generate(requests, sampling)
        return [
            self._select(shown, sample.item.text, texts)
            for sample, shown, texts in zip(samples, media, candidates, strict=True)
        ]

    def _refined(
        self, samples: Sequence[Sample], media: Sequence[Any], answers: list[PolicyOutput]
    ) -> list[PolicyOutput]:
        """The answers after critique-and-revise rounds, all samples of the batch together; a
        lost critique or revision fails its batch's answered samples, for `--resume`."""
        from mmcritic.inference.refine import refine_many

        ready = [i for i, answer in enumerate(answers) if answer.failure is None]
        items = [(media[i], samples[i].item.text, answers[i].response) for i in ready]
        gen = self.generation
        try:
            refined = refine_many(self.policy, self.critic, items, gen.refine_rounds, seed=gen.seed)
        except EngineError as err:
            lost = next(iter(err.failures.values()))
            return [
                PolicyOutput("", failure=lost) if i in ready else a for i, a in enumerate(answers)
            ]
        for i, refinement in zip(ready, refined, strict=True):
            answers[i] = PolicyOutput(refinement.answer, {"refinement": refinement.to_dict()})
        return answers

    def _shown(self, sample: Sample, task: PolicyTask | CriticTask) -> list[Media] | str:
        """The sample's media, loaded once here (each `Media` keeps what it loaded), or why
        they cannot be shown: a missing, empty, damaged or oversized file rejects its row
        rather than stopping the batch."""
        try:
            media = self._media(sample, sample.prompt, task)
            for item in media:
                item.load(self.engine.patch_size)
        except Exception as err:  # image and video decoders raise many unrelated types
            return f"media: {type(err).__name__}: {str(err)[:300]}"
        return media

    def complete(
        self, items: Sequence[tuple[Any, str]], n: int, temperature: float
    ) -> list[list[str]]:
        """`n` completion texts per (media, question), asked the r1 way (`Policy`)."""
        seed = self.generation.seed
        answers = self.policy.answer_many(items, n=n, temperature=temperature, seed=seed)
        return [[answer.text for answer in samples] for samples in answers]

    def _select(self, media: Any, question: str, texts: Completions) -> PolicyOutput:
        from mmcritic.inference import best_of_n

        if isinstance(texts, RequestFailed):
            return PolicyOutput("", failure=texts)
        gen = self.generation
        try:
            if gen.refine_rounds:
                return self._select_and_refine(media, question, texts)
            picked = best_of_n(
                self.critic,
                media,
                question,
                texts,
                gen.bon_strategy,
                both_orders=gen.both_orders,
                seed=gen.seed,
            )
        except EngineError as err:
            return PolicyOutput("", failure=next(iter(err.failures.values())))
        return PolicyOutput(texts[picked.chosen], {"self_critique": picked.to_dict()})

    def _select_and_refine(self, media: Any, question: str, texts: list[str]) -> PolicyOutput:
        """Best-of-N and refinement; the record's `refinement` follows the answer scored (the
        chosen candidate's, with `refine_each`)."""
        from mmcritic.inference.refine import select_and_refine

        gen = self.generation
        picked = select_and_refine(
            self.policy,
            self.critic,
            media,
            question,
            texts,
            gen.refine_rounds,
            strategy=gen.bon_strategy,
            refine_each=gen.refine_each,
            both_orders=gen.both_orders,
            seed=gen.seed,
        )
        chosen = picked.refinements[picked.selection.chosen if gen.refine_each else 0]
        extra = {
            "self_critique": picked.selection.to_dict(),
            "refine_mode": picked.mode,
            "refinement": chosen.to_dict(),
        }
        return PolicyOutput(picked.answer, extra)

    def judge(
        self, task: CriticTask, samples: Sequence[Sample], both_orders: bool
    ) -> list[CriticTexts]:
        shown = [self._shown(sample, task) for sample in samples]
        return _around_rejections(
            samples,
            shown,
            lambda why: CriticTexts("", rejection=why),
            lambda ready, media: self._judge(ready, media, both_orders),
        )

    def _judge(
        self, samples: Sequence[Sample], media: Sequence[Any], both_orders: bool
    ) -> list[CriticTexts]:
        if not samples:
            return []
        prompts = [sample.prompt for sample in samples]
        if both_orders:
            prompts += [_swapped(sample) for sample in samples]
        shown = [*media, *media] if both_orders else list(media)
        requests = [_request(prompt, m) for prompt, m in zip(prompts, shown, strict=True)]
        gen = self.generation
        votes = gen.critic_votes
        heat = gen.temperature if votes > 1 else None
        sampling = _sampling(_decoding(prompts), votes, heat, gen.seed)
        outcomes = self.engine.try_generate(requests, sampling)
        half = len(samples)
        second = outcomes[half:] if both_orders else [None] * half
        return [
            _critic_texts(first, swapped, votes > 1)
            for first, swapped in zip(outcomes[:half], second, strict=True)
        ]

    def _media(self, sample: Sample, prompt: Prompt, task: PolicyTask | CriticTask) -> list[Media]:
        return model_media(
            prompt.images, prompt.videos, sample.base_dir, task.max_frames, self.media
        )


def _around_rejections(
    samples: Sequence[Sample],
    shown: Sequence[list[Media] | str],
    rejected: Callable[[str], Output],
    run: Callable[[Sequence[Sample], Sequence[list[Media]]], list[Output]],
) -> list[Output]:
    """Each sample's output, in order: `rejected(why)` where its media could not be shown
    (`shown` holds the reason), else what `run` gives for the samples that can be, which it
    gets together in one batch."""
    ready = [i for i, media in enumerate(shown) if not isinstance(media, str)]
    produced = run([samples[i] for i in ready], [shown[i] for i in ready])
    outputs = dict(zip(ready, produced, strict=True))
    return [outputs[i] if i in outputs else rejected(str(why)) for i, why in enumerate(shown)]


def _policy_output(outcome: Completions) -> PolicyOutput:
    if isinstance(outcome, RequestFailed):
        return PolicyOutput("", failure=outcome)
    return PolicyOutput(outcome[0])


def _critic_texts(first: Completions, swapped: Completions | None, voted: bool) -> CriticTexts:
    """A pair's critic texts; a pair with a lost order is a failure, never half a verdict."""
    for outcome in (first, swapped):
        if isinstance(outcome, RequestFailed):
            return CriticTexts("", failure=outcome)
    assert not isinstance(first, RequestFailed) and not isinstance(swapped, RequestFailed)
    if swapped is None:
        return CriticTexts(first[0], votes=tuple(first) if voted else ())
    return CriticTexts(
        first[0],
        swapped[0],
        votes=tuple(first) if voted else (),
        swapped_votes=tuple(swapped) if voted else (),
    )


def _request(prompt: Prompt, media: list[Media]) -> Request:
    from mmcritic.inference.engines import Request

    return Request(prompt.text, media, prompt.layout)


def _swapped(sample: Sample) -> Prompt:
    if sample.swapped_prompt is None:
        raise ValueError(f"doc_id {sample.doc_id} has no swapped prompt for --both-orders")
    return sample.swapped_prompt


def _decoding(prompts: Sequence[Prompt]) -> Decoding:
    """The decoding a batch shares; a task's prompts under one protocol always agree."""
    decodings = {prompt.decoding for prompt in prompts}
    if len(decodings) != 1:
        raise ValueError(f"a batch mixes decodings {sorted(map(str, decodings))}")
    return decodings.pop()


def _sampling(decoding: Decoding, n: int, temperature: float | None, seed: int) -> Any:
    """Engine sampling for a protocol's decoding; `temperature` replaces its own (Best-of-N
    samples at the run's temperature)."""
    from mmcritic.inference.engines import Sampling

    heat = decoding.temperature if temperature is None else temperature
    return Sampling(decoding.max_new_tokens, n, heat, decoding.top_p, seed)


def sample_media(sample: Sample, max_frames: int | None) -> list[Media]:
    """Everything a sample's prompt shows the model, images then videos, at the r1 budget."""
    prompt = sample.prompt
    return model_media(prompt.images, prompt.videos, sample.base_dir, max_frames)


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
    ) -> list[CriticTexts]:
        return [self._texts(task.name, sample.doc_id, both_orders) for sample in samples]

    def _texts(self, task: str, doc_id: int, both_orders: bool) -> CriticTexts:
        line = self._line(task, doc_id)
        if not both_orders:
            return CriticTexts(str(line["response"]))
        if "swapped_response" not in line:
            raise ValueError(
                f"{self.path}: task {task} doc_id {doc_id} has no swapped_response, which "
                "--both-orders needs"
            )
        return CriticTexts(str(line["response"]), str(line["swapped_response"]))


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
