"""One critique, one Best-of-N run or one refinement from a model path or a server: open the
engine, judge, sample and select, or critique and revise, return a JSON-able dict. `mmcritic
critique`, `mmcritic best-of-n` and `mmcritic refine` call these, and so can a script; the
command line only parses flags."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmcritic.inference.critic import Critic
from mmcritic.inference.engines import Engine, EngineOptions, open_engine
from mmcritic.inference.media import Media
from mmcritic.inference.policy import Policy
from mmcritic.inference.refine import refine, select_and_refine
from mmcritic.inference.self_critique import Strategy, best_of_n


@dataclass(frozen=True)
class ModelOptions:
    """Which engine serves the model and how it decodes."""

    engine: EngineOptions
    max_new_tokens: int = 512

    def open(self) -> Engine:
        return open_engine(self.engine)


def media_from_flags(
    image: str | None,
    video: str | None,
    fps: float | None = None,
    max_frames: int | None = None,
    min_pixels: int | None = None,
    max_pixels: int | None = None,
) -> Media:
    """The one image or video a command is about; pixel bounds default per kind."""
    bounds = {"min_pixels": min_pixels, "max_pixels": max_pixels}
    budget = {key: value for key, value in bounds.items() if value is not None}
    if video is not None and image is None:
        return _readable(Media.video(Path(video), fps=fps, max_frames=max_frames, **budget))
    if image is not None and video is None:
        if fps is not None or max_frames is not None:
            raise ValueError("--fps and --max-frames apply to --video only")
        return _readable(Media.image(Path(image), **budget))
    raise ValueError("give exactly one of --image or --video")


def _readable(media: Media) -> Media:
    """`media`, loaded (it keeps what it loaded); an empty, damaged or oversized file is a
    one-line error naming it rather than a decoder's traceback."""
    try:
        media.load()
    except Exception as err:  # image and video decoders raise many unrelated types
        name = media.describe()["source"]
        raise ValueError(f"cannot read {media.kind} {name}: {type(err).__name__}: {err}") from err
    return media


def critique(
    options: ModelOptions,
    media: Media,
    question: str,
    response_a: str | None = None,
    response_b: str | None = None,
    response: str | None = None,
    both_orders: bool = False,
    allow_ties: bool = False,
    votes: int = 1,
    vote_temperature: float = 1.0,
) -> dict[str, Any]:
    """A pairwise verdict on responses a and b (the majority of `votes` sampled critiques when
    it is above 1), or a pointwise score for one response."""
    summary = {"media": media.describe(), "question": question}
    if response_a is not None and response_b is not None and response is None:
        critic = _critic(options, allow_ties, vote_temperature)
        judged = critic.compare(media, question, response_a, response_b, both_orders, votes)
        return {"mode": "pairwise", **summary, **judged.to_dict()}
    if votes != 1:
        raise ValueError("--votes applies to pairwise judgements (--response-a, --response-b)")
    if response is not None and response_a is None and response_b is None:
        critic = _critic(options, allow_ties)
        scored = critic.score(media, question, response)
        return {"mode": "pointwise", "scale": critic.scale, **summary, **scored.to_dict()}
    raise ValueError("give --response-a and --response-b (pairwise), or --response alone")


def _critic(
    options: ModelOptions, allow_ties: bool = False, vote_temperature: float = 1.0
) -> Critic:
    return Critic.on(
        options.open(),
        max_new_tokens=options.max_new_tokens,
        allow_ties=allow_ties,
        vote_temperature=vote_temperature,
    )


def sample_and_select(
    options: ModelOptions,
    media: Media,
    question: str,
    n: int,
    strategy: Strategy = "knockout",
    both_orders: bool = False,
    temperature: float = 1.0,
    seed: int = 0,
    raw: bool = False,
) -> dict[str, Any]:
    """Samples `n` answers with the model as policy and selects one with it as critic."""
    engine = options.open()
    policy = Policy.on(engine, max_new_tokens=options.max_new_tokens)
    critic = Critic.on(engine, max_new_tokens=options.max_new_tokens)
    started = time.perf_counter()
    answers = policy.answer(media, question, n=n, temperature=temperature, seed=seed)
    sampled = time.perf_counter()
    candidates = [answer.text for answer in answers]
    result = best_of_n(
        critic, media, question, candidates, strategy, both_orders=both_orders, seed=seed
    )
    selected = time.perf_counter()
    return {
        "media": media.describe(),
        "question": question,
        "n": n,
        "temperature": temperature,
        **result.to_dict(raw),
        "seconds": {"sampling": sampled - started, "selection": selected - sampled},
    }


@dataclass(frozen=True)
class RefineOptions:
    """How `refine_answer` refines: `rounds` of critique and revision; with `n` > 1 answers
    sampled at `temperature` and picked by `strategy` (the pick refined, or every answer
    before the pick with `refine_each`); `critic` is another model's engine (None: the model
    critiques itself)."""

    rounds: int = 2
    n: int = 1
    strategy: Strategy = "knockout"
    refine_each: bool = False
    both_orders: bool = False
    temperature: float = 1.0
    seed: int = 0
    critic: EngineOptions | None = field(default=None)

    def __post_init__(self) -> None:
        if self.refine_each and self.n == 1:
            raise ValueError("--refine-each refines every one of --n answers: give --n > 1")


def refine_answer(
    options: ModelOptions,
    media: Media,
    question: str,
    refining: RefineOptions,
    answer: str | None = None,
) -> dict[str, Any]:
    """The model answers (or `answer` is given), a critic critiques, the model revises, for up
    to `refining.rounds` rounds; with `refining.n` > 1, Best-of-N and refinement together."""
    engine = options.open()
    policy = Policy.on(engine, max_new_tokens=options.max_new_tokens)
    critic_engine = open_engine(refining.critic) if refining.critic is not None else engine
    critic = Critic.on(critic_engine, max_new_tokens=options.max_new_tokens)
    summary = {"media": media.describe(), "question": question, "rounds": refining.rounds}
    started = time.perf_counter()
    if refining.n == 1:
        first = answer if answer is not None else policy.answer(media, question)[0].text
        refined = refine(policy, critic, media, question, first, refining.rounds)
        result = refined.to_dict()
    else:
        if answer is not None:
            raise ValueError("--answer is one answer to refine; --n samples the model's own")
        sampled = policy.answer(
            media, question, n=refining.n, temperature=refining.temperature, seed=refining.seed
        )
        result = select_and_refine(
            policy,
            critic,
            media,
            question,
            [a.text for a in sampled],
            refining.rounds,
            strategy=refining.strategy,
            refine_each=refining.refine_each,
            both_orders=refining.both_orders,
            seed=refining.seed,
        ).to_dict()
    critic_name = refining.critic.describe() if refining.critic else "the model itself"
    return {
        **summary,
        "critic": critic_name,
        **result,
        "seconds": time.perf_counter() - started,
    }
