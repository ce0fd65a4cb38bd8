"""The model as a policy: answers to a question about images or videos, in the think/boxed
format it was trained with, so the final answer can be read from the box."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mmcritic.data.prompts import load_template, render, think_boxed_suffix
from mmcritic.inference.engines.base import Engine, Request, RequestFailed, Sampling
from mmcritic.inference.engines.options import FromPretrained, engine_for
from mmcritic.inference.media import MediaInput
from mmcritic.rewards.answers import as_judged, final_boxed

QuestionItem = tuple[MediaInput, str]
# (media, question, the earlier answer as written, the critique of it as the policy is shown it)
RevisionItem = tuple[MediaInput, str, str, str]


@dataclass(frozen=True)
class Answer:
    """One sampled answer; `final_answer` is the last box after the think block, or None."""

    text: str
    final_answer: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Policy(FromPretrained):
    """Answers questions; `top_p` applies when sampling (temperature > 0); `engine` replaces the
    generation backend built from model and processor. `think_suffix=False` asks without the
    think/boxed instruction, to measure what the instruction itself adds; `refine_template` is
    the prompt that asks for a revision given a critique (`refine` by default). `media`
    arguments take one `Media`, a sequence shown in order, or None for text only."""

    def __init__(
        self,
        model: Any,
        processor: Any,
        max_new_tokens: int = 512,
        *,
        batch_size: int = 8,
        top_p: float = 1.0,
        template: str | None = None,
        think_suffix: bool = True,
        engine: Engine | None = None,
        refine_template: str | None = None,
    ):
        self.engine = engine or engine_for(model, processor, batch_size)
        self.max_new_tokens, self.top_p = max_new_tokens, top_p
        self.template = load_template(template, "verifiable")
        self.think_suffix = think_suffix
        self.refine_template = load_template(refine_template, "refine")

    def answer(
        self,
        media: MediaInput,
        question: str,
        n: int = 1,
        temperature: float = 0.0,
        seed: int | None = 0,
    ) -> list[Answer]:
        """`n` answers to one question."""
        return self.answer_many([(media, question)], n, temperature, seed)[0]

    def answer_many(
        self,
        items: Sequence[QuestionItem],
        n: int = 1,
        temperature: float = 0.0,
        seed: int | None = 0,
    ) -> list[list[Answer]]:
        """`n` answers to each question, generated in batches."""
        _check_sampling(n, temperature)
        sampling = Sampling(self.max_new_tokens, n, temperature, self.top_p, seed)
        requests = [Request(self._prompt(question), media) for media, question in items]
        outputs = self.engine.generate(requests, sampling)
        return [[Answer(text, final_boxed(text)) for text in samples] for samples in outputs]

    def revise_many(
        self,
        items: Sequence[RevisionItem],
        temperature: float = 0.0,
        seed: int | None = 0,
    ) -> list[Answer]:
        """One revised answer per (media, question, earlier answer, critique): the question
        again with the earlier answer in plain words (`as_judged`) and the critique."""
        outputs = self.engine.generate(
            self._revision_requests(items), _one(temperature, self, seed)
        )
        return [Answer(samples[0], final_boxed(samples[0])) for samples in outputs]

    def try_revise_many(
        self,
        items: Sequence[RevisionItem],
        temperature: float = 0.0,
        seed: int | None = 0,
    ) -> list[Answer | RequestFailed]:
        """`revise_many`, with a revision the engine lost (a served policy's dead request) left
        in its place as the failure, for callers that must not stop on one."""
        sampling = _one(temperature, self, seed)
        outcomes = self.engine.try_generate(self._revision_requests(items), sampling)
        return [
            out if isinstance(out, RequestFailed) else Answer(out[0], final_boxed(out[0]))
            for out in outcomes
        ]

    def _revision_requests(self, items: Sequence[RevisionItem]) -> list[Request]:
        return [
            Request(
                render(
                    self.refine_template,
                    think_suffix=self.think_suffix,
                    question=question,
                    answer=as_judged(answer),
                    critique=critique,
                ),
                media,
            )
            for media, question, answer, critique in items
        ]

    def _prompt(self, question: str) -> str:
        """The question with the think/boxed instruction when asked for and not already there."""
        suffix = self.think_suffix and think_boxed_suffix() not in question
        return render(self.template, think_suffix=suffix, question=question)


def _one(temperature: float, policy: Policy, seed: int | None) -> Sampling:
    """One completion a request at `temperature`, with the policy's limits."""
    _check_sampling(1, temperature)
    return Sampling(policy.max_new_tokens, 1, temperature, policy.top_p, seed)


def _check_sampling(n: int, temperature: float) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if n > 1 and temperature == 0:
        raise ValueError(
            f"n={n} answers at temperature 0 would be {n} copies of the greedy answer; "
            "set temperature > 0 (e.g. 1.0) to sample different answers"
        )
