"""Critique-guided refinement at test time: the policy answers, a critic critiques the answer
and says whether it is correct, and the policy revises its answer given the critique, for up to
k rounds, stopping as soon as the critic accepts (the test-time loop of Critic-V, arXiv
2411.18203, and of Critique-RL and RefCritic).

The critic is any `Critic`: the policy's own model (self-refinement) or another one behind its
own engine. Each round is one batched critic call over the answers not yet settled and one
batched policy call over those it rejected. An answer leaves the loop when

- the critic accepts it (`accepted`);
- the critic's verdict cannot be read (`unreadable_critique`): a critique without a verdict is
  no evidence the answer is wrong, so the answer is kept rather than revised on noise;
- the rounds run out (`rounds`): the last revision stands, unjudged.

With Best-of-N, `refine_chosen` refines the answer self-critique picked, and `refine_each`
refines every candidate and then picks among the refined answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from mmcritic.inference.critic import Critic, Critique
from mmcritic.inference.media import MediaInput
from mmcritic.inference.policy import Policy
from mmcritic.inference.self_critique import BestOfN, Strategy, best_of_n
from mmcritic.rewards.answers import as_judged, final_boxed

StopReason = Literal["accepted", "unreadable_critique", "rounds"]
# (media, question, the first answer)
RefineItem = tuple[MediaInput, str, str]


@dataclass(frozen=True)
class Step:
    """One answer of the loop and the critique of it (None for the last answer when the rounds
    ran out: it was never judged)."""

    answer: str
    final_answer: str | None
    critique: Critique | None = None

    def to_dict(self) -> dict[str, Any]:
        critique = self.critique.to_dict() if self.critique is not None else None
        return {"answer": self.answer, "final_answer": self.final_answer, "critique": critique}


@dataclass
class Refinement:
    """Every answer from the first to the last, with the critiques between, and why it
    stopped; `answer` is the last one."""

    steps: list[Step]
    stopped: StopReason | None = None

    @property
    def answer(self) -> str:
        return self.steps[-1].answer

    @property
    def revisions(self) -> int:
        return len(self.steps) - 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "final_answer": self.steps[-1].final_answer,
            "revisions": self.revisions,
            "stopped": self.stopped,
            "steps": [step.to_dict() for step in self.steps],
        }


@dataclass
class _Open:
    """An item still in the loop: its media, question and refinement so far."""

    media: MediaInput
    question: str
    refinement: Refinement = field(default_factory=lambda: Refinement([]))


def refine_many(
    policy: Policy,
    critic: Critic,
    items: Sequence[RefineItem],
    rounds: int,
    *,
    temperature: float = 0.0,
    seed: int | None = 0,
) -> list[Refinement]:
    """Up to `rounds` critique-and-revise rounds for each (media, question, answer); revisions
    are greedy unless `temperature` > 0."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    states = [
        _Open(media, question, Refinement([Step(answer, final_boxed(answer))]))
        for media, question, answer in items
    ]
    for _ in range(rounds):
        rejected = _critique_round(critic, [s for s in states if s.refinement.stopped is None])
        if not rejected:
            break
        _revise_round(policy, rejected, temperature, seed)
    for state in states:
        state.refinement.stopped = state.refinement.stopped or "rounds"
    return [state.refinement for state in states]


def _critique_round(critic: Critic, states: list[_Open]) -> list[tuple[_Open, Critique]]:
    """Critiques each open item's last answer; returns those the critic rejected, each with
    its critique."""
    if not states:
        return []
    items = [(s.media, s.question, as_judged(s.refinement.answer)) for s in states]
    critiques = critic.critique_many(items)
    if len(critiques) != len(items):
        raise ValueError(f"the critic returned {len(critiques)} critiques for {len(items)} items")
    rejected = []
    for state, critique in zip(states, critiques, strict=True):
        steps = state.refinement.steps
        steps[-1] = replace(steps[-1], critique=critique)
        if critique.accepts is None:
            state.refinement.stopped = "unreadable_critique"
        elif critique.accepts:
            state.refinement.stopped = "accepted"
        else:
            rejected.append((state, critique))
    return rejected


def _revise_round(
    policy: Policy,
    rejected: list[tuple[_Open, Critique]],
    temperature: float,
    seed: int | None,
) -> None:
    items = [(s.media, s.question, s.refinement.answer, c.text) for s, c in rejected]
    states = [state for state, _ in rejected]
    for state, revised in zip(states, policy.revise_many(items, temperature, seed), strict=True):
        state.refinement.steps.append(Step(revised.text, revised.final_answer))


def refine(
    policy: Policy,
    critic: Critic,
    media: MediaInput,
    question: str,
    answer: str,
    rounds: int,
    **sampling: Any,
) -> Refinement:
    """`refine_many` for one answer."""
    return refine_many(policy, critic, [(media, question, answer)], rounds, **sampling)[0]


@dataclass
class RefinedChoice:
    """Best-of-N with refinement: the selection, the refinements it made, and the answer."""

    mode: Literal["refine_chosen", "refine_each"]
    selection: BestOfN
    refinements: list[Refinement]
    answer: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "answer": self.answer,
            "final_answer": final_boxed(self.answer),
            "selection": self.selection.to_dict(),
            "refinements": [r.to_dict() for r in self.refinements],
        }


def select_and_refine(
    policy: Policy,
    critic: Critic,
    media: MediaInput,
    question: str,
    candidates: Sequence[str],
    rounds: int,
    *,
    strategy: Strategy = "knockout",
    refine_each: bool = False,
    both_orders: bool = False,
    seed: int = 0,
    temperature: float = 0.0,
) -> RefinedChoice:
    """Best-of-N and refinement together: pick one of `candidates` by self-critique and refine
    it, or (`refine_each`) refine every candidate and pick among the refined answers."""
    pick = {"strategy": strategy, "both_orders": both_orders, "seed": seed}
    if refine_each:
        items = [(media, question, text) for text in candidates]
        refined = refine_many(policy, critic, items, rounds, temperature=temperature, seed=seed)
        selection = best_of_n(critic, media, question, [r.answer for r in refined], **pick)
        return RefinedChoice("refine_each", selection, refined, refined[selection.chosen].answer)
    selection = best_of_n(critic, media, question, candidates, **pick)
    chosen = candidates[selection.chosen]
    refined = refine_many(
        policy, critic, [(media, question, chosen)], rounds, temperature=temperature, seed=seed
    )
    return RefinedChoice("refine_chosen", selection, refined, refined[0].answer)
