"""The model as a critic: which of two responses is better (pairwise), how good one is
(pointwise), or what is wrong with one answer and whether it is correct (critique, which
test-time refinement feeds back to the policy), for a question about images or videos (one
`Media` or a sequence of them).

Prompts are the package's own templates with the think/boxed instruction, the prompts the critic
was trained on; verdicts are read by the training reward's parser. An answer that cannot be read
is an outcome (`verdict=None` with the reason), never an exception: a critic that fails the format
on one item out of a thousand must not stop the other 999.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from mmcritic.data.prompts import TIE_CLAUSE, load_template, media_word, render
from mmcritic.inference.engines.base import (
    Completions,
    Engine,
    Request,
    RequestFailed,
    Sampling,
)
from mmcritic.inference.engines.options import FromPretrained, engine_for
from mmcritic.inference.media import MediaInput, media_counts
from mmcritic.inference.votes import majority_vote
from mmcritic.rewards.answers import parse_score, rationale
from mmcritic.rewards.correctness import parse_correctness, shown_critique
from mmcritic.rewards.parsing import parse_verdict

PairItem = tuple[MediaInput, str, str, str]
PointItem = tuple[MediaInput, str, str]
SWAP = {"1": "2", "2": "1", "tie": "tie", None: None}


@dataclass(frozen=True)
class Comparison:
    """A pairwise judgement of (response_a, response_b); "1" means response_a is better.

    With both orders the critic also judged (response_b, response_a); `swapped_verdict` is that
    judgement mapped back, so "1" still means response_a, and `agreement` says whether the two
    orders agree (None when either could not be read). `reason` is `parse_verdict`'s: "ok" or why
    there is no verdict.
    """

    verdict: str | None
    rationale: str
    raw: str
    reason: str
    both_orders: bool = False
    swapped_verdict: str | None = None
    swapped_rationale: str | None = None
    swapped_raw: str | None = None
    swapped_reason: str | None = None
    agreement: bool | None = None
    # Voting@k (`votes` > 1): each sampled critique's verdict, and how settled the vote was
    votes: tuple[str | None, ...] = ()
    vote_margin: float | None = None
    swapped_votes: tuple[str | None, ...] = ()
    swapped_vote_margin: float | None = None
    # why the engine gave no critique (a critic built with keep_failures=True); no verdict then
    failure: str | None = None

    @property
    def decision(self) -> str | None:
        """The outcome Best-of-N acts on. One order: the verdict. Both orders: the verdict they
        agree on; a disagreement is a tie (the preference follows position, not content); when
        only one order could be read, that one; None when neither could."""
        if not self.both_orders or self.swapped_verdict is None:
            return self.verdict
        if self.verdict is None or self.agreement:
            return self.swapped_verdict
        return "tie"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"decision": self.decision}


@dataclass(frozen=True)
class Score:
    """A pointwise judgement on a 1..scale scale; `score` is None when the box holds no number,
    or when the engine gave no critique (`failure` says why)."""

    score: float | None
    rationale: str
    raw: str
    reason: str
    failure: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Critique:
    """A critique of one answer: `accepts` is the boxed verdict (True: correct, False:
    incorrect, None: unreadable, `reason` says why, or the engine gave none, `failure` says
    why); `text` is the critique the policy is shown (`shown_critique`)."""

    accepts: bool | None
    text: str
    raw: str
    reason: str
    failure: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Critic(FromPretrained):
    """Judges responses with a vision-language model; greedy decoding, so judgements repeat.

    `allow_ties` adds the template's tie clause (use it for critics trained with ties kept);
    `template` / `pointwise_template` take a built-in template name or a file; `scale` is the
    pointwise scale the prompt asks for; `critique_template` is the one-answer critique prompt
    (`critique` by default); `engine` replaces the engine built from model and
    processor (a server's, or one shared with a policy). `keep_failures` returns a judgement
    the engine lost as one without a verdict and with its `failure`, instead of raising (the
    critic reward leaves such rollouts out). Every `media` argument takes one `Media`, a
    sequence shown in order (a multi-image question), or None for text only.
    """

    def __init__(
        self,
        model: Any,
        processor: Any,
        max_new_tokens: int = 512,
        *,
        batch_size: int = 8,
        allow_ties: bool = False,
        template: str | None = None,
        pointwise_template: str | None = None,
        critique_template: str | None = None,
        scale: int = 10,
        engine: Engine | None = None,
        vote_temperature: float = 1.0,
        keep_failures: bool = False,
    ):
        self.engine = engine or engine_for(model, processor, batch_size)
        self.sampling = Sampling(max_new_tokens=max_new_tokens)
        self.vote_temperature = vote_temperature
        self.allow_ties = allow_ties
        self.pairwise_template = load_template(template, "pairwise")
        self.pointwise_template = load_template(pointwise_template, "pointwise")
        self.critique_template = load_template(critique_template, "critique")
        self.scale = scale
        self.keep_failures = keep_failures

    def compare(
        self,
        media: MediaInput,
        question: str,
        response_a: str,
        response_b: str,
        both_orders: bool = False,
        votes: int = 1,
    ) -> Comparison:
        """Which of two responses answers the question better."""
        item = (media, question, response_a, response_b)
        return self.compare_many([item], both_orders, votes)[0]

    def compare_many(
        self, items: Sequence[PairItem], both_orders: bool = False, votes: int = 1
    ) -> list[Comparison]:
        """Pairwise judgements of many items in one batched generation; with both orders each
        item is judged twice, as (a, b) and (b, a), in the same batch. With `votes` k > 1, k
        critiques are sampled per order at `vote_temperature` and their majority verdict is the
        verdict (Voting@k, `mmcritic.inference.votes`); one greedy critique otherwise."""
        if votes < 1:
            raise ValueError(f"votes must be at least 1, got {votes}")
        requests = [self._pairwise_request(m, q, a, b) for m, q, a, b in items]
        if both_orders:
            requests += [self._pairwise_request(m, q, b, a) for m, q, a, b in items]
        sampling = self.sampling
        if votes > 1:
            sampling = replace(sampling, n=votes, temperature=self.vote_temperature)
        judged = [_read_order(samples) for samples in self._generate(requests, sampling)]
        if not both_orders:
            return [_comparison(order) for order in judged]
        return [
            _both_orders(a, b)
            for a, b in zip(judged[: len(items)], judged[len(items) :], strict=True)
        ]

    def _generate(self, requests: Sequence[Request], sampling: Sampling) -> list[Completions]:
        """The engine's texts; with `keep_failures`, a lost request stays in its place."""
        if self.keep_failures:
            return self.engine.try_generate(requests, sampling)
        return list(self.engine.generate(requests, sampling))

    def score(self, media: MediaInput, question: str, response: str) -> Score:
        """How good one response is, on the 1..scale scale."""
        return self.score_many([(media, question, response)])[0]

    def score_many(self, items: Sequence[PointItem]) -> list[Score]:
        """Pointwise judgements of many items in one batched generation."""
        requests = self._one_answer_requests(self.pointwise_template, items, scale=self.scale)
        return [
            Score(None, "", "", "failed", outcome.describe())
            if isinstance(outcome, RequestFailed)
            else Score(*_scored(outcome[0], self.scale))
            for outcome in self._generate(requests, self.sampling)
        ]

    def critique_many(self, items: Sequence[PointItem]) -> list[Critique]:
        """A critique and a correct/incorrect verdict for each (media, question, answer), in
        one batched generation. The answer is shown as written; callers that pass a policy's
        think/boxed text show it in plain words first (`as_judged`)."""
        requests = self._one_answer_requests(self.critique_template, items)
        return [
            Critique(None, "", "", "failed", outcome.describe())
            if isinstance(outcome, RequestFailed)
            else _critique(outcome[0])
            for outcome in self._generate(requests, self.sampling)
        ]

    def _one_answer_requests(
        self, template: str, items: Sequence[PointItem], **fields: Any
    ) -> list[Request]:
        return [
            Request(
                render(
                    template,
                    question=question,
                    response=response,
                    media=_media_word(media),
                    **fields,
                ),
                media,
            )
            for media, question, response in items
        ]

    def _pairwise_request(
        self, media: MediaInput, question: str, first: str, second: str
    ) -> Request:
        text = pairwise_text(
            self.pairwise_template, question, first, second, _media_word(media), self.allow_ties
        )
        return Request(text, media)


def pairwise_text(
    template: str, question: str, first: str, second: str, media: str, allow_ties: bool = False
) -> str:
    """A pairwise prompt: the template filled with the pair in the order shown, `media` naming
    what the critic sees ("image", "video", ...), and the think/boxed instruction."""
    return render(
        template,
        question=question,
        response_1=first,
        response_2=second,
        media=media,
        tie_clause=TIE_CLAUSE if allow_ties else "",
    )


def _media_word(media: MediaInput) -> str:
    return media_word(*media_counts(media))


@dataclass(frozen=True)
class _Order:
    """One order's judgement: a greedy critique, or the vote of several sampled ones (`text` is
    a critique that gave the winning verdict, the first one when none did)."""

    choice: str | None
    text: str
    reason: str
    votes: tuple[str | None, ...] = ()
    margin: float | None = None
    failure: str | None = None


def _read_order(texts: Completions) -> _Order:
    if isinstance(texts, RequestFailed):
        return _Order(None, "", "failed", failure=texts.describe())
    verdicts = [parse_verdict(text) for text in texts]
    if len(texts) == 1:
        return _Order(verdicts[0].choice, texts[0], verdicts[0].reason)
    vote = majority_vote([verdict.choice for verdict in verdicts])
    shown = next(
        (t for t, v in zip(texts, verdicts, strict=True) if v.choice == vote.verdict), texts[0]
    )
    choices = tuple(verdict.choice for verdict in verdicts)
    return _Order(vote.verdict, shown, vote.reason, choices, vote.margin)


def _comparison(order: _Order) -> Comparison:
    return Comparison(
        order.choice,
        rationale(order.text),
        order.text,
        order.reason,
        votes=order.votes,
        vote_margin=order.margin,
        failure=order.failure,
    )


def _both_orders(first: _Order, swapped: _Order) -> Comparison:
    back = SWAP[swapped.choice]
    readable = first.choice is not None and back is not None
    return Comparison(
        verdict=first.choice,
        rationale=rationale(first.text),
        raw=first.text,
        reason=first.reason,
        both_orders=True,
        swapped_verdict=back,
        swapped_rationale=rationale(swapped.text),
        swapped_raw=swapped.text,
        swapped_reason=swapped.reason,
        agreement=first.choice == back if readable else None,
        votes=first.votes,
        vote_margin=first.margin,
        swapped_votes=tuple(SWAP[vote] for vote in swapped.votes),
        swapped_vote_margin=swapped.margin,
        failure=first.failure or swapped.failure,
    )


def _critique(text: str) -> Critique:
    verdict = parse_correctness(text)
    return Critique(verdict.accepts, shown_critique(text), text, verdict.reason)


def _scored(text: str, scale: int) -> tuple[float | None, str, str, str]:
    """A score outside 0..scale is unreadable rather than clipped: 70 on a 10-point scale is a
    model answering on the wrong scale, not a very good response."""
    value, reason = parse_score(text)
    if value is not None and not 0 <= value <= scale:
        value, reason = None, "out_of_range"
    return value, rationale(text), text, reason
