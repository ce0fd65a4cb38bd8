"""Helpfulness of a critique as a GRPO reward: does the policy's revision, guided by the
critique, come out right? (Critique-RL's indirect reward, RefCritic's refinement reward.)

On critique rows (`kind: critique`: a policy's answer to a verifiable question, its reference
and whether it is right) each rollout is a critique with a boxed verdict. What the policy does
with it is what it does at test time (`mmcritic.inference.refine`):

- the critique accepts the answer: the answer stands, and the reward is whether it is right;
- the critique rejects it: the policy revises the answer given the critique (one batched,
  greedy by default, generation per step over every rejecting rollout), and the reward is
  whether the revision's boxed answer is the reference;
- the verdict cannot be read: 0, a critique that says nothing usable helps no one.

The policy is the model being trained, bound frozen for the step by the trainer
(`CriticGRPOTrainer._judging_itself`), so the critic learns to help the policy it is; or a
policy served elsewhere (`rewards.refinement_base_urls`), whose lost requests leave their
rollouts out (None) rather than scoring them 0, counted in `refinement/lost`. Before
step `from_step` (Critique-RL's stage I) the reward is None on every row, which TRL leaves out
of the weighted sum: discriminability alone trains the critic. Logged per step:
`refinement/revised` (share of rollouts whose critique asked for a revision),
`refinement/wrong_to_right` and `refinement/right_to_wrong` (shares of the revisions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mmcritic.data.media import MediaBudget
from mmcritic.inference.engines.base import RequestFailed
from mmcritic.rewards.correctness import parse_correctness, shown_critique
from mmcritic.rewards.critic import answer_matches, completion_text
from mmcritic.train.critic_reward import row_media


@dataclass(frozen=True)
class RefinementOptions:
    """When helpfulness starts counting and how the frozen policy revises."""

    from_step: int = 0
    max_new_tokens: int = 512
    temperature: float = 0.0
    batch_size: int = 16


class RefinementReward:
    """The critique's helpfulness in [0, 1] (see the module docstring); `policy` is a `Policy`
    bound by the trainer each step (None between steps)."""

    __name__ = "refinement"

    def __init__(self, options: RefinementOptions, budget: MediaBudget, policy: Any = None):
        self.options, self.budget = options, budget
        # a served policy is given here and kept; the trainer binds the model being trained
        # each step otherwise
        self.policy: Any = policy
        self.revises_with_policy = policy is None
        self.lost = 0

    def bind(self, policy: Any) -> None:
        self.policy = policy

    def __call__(
        self,
        completions: list,
        kind: list,
        answer: list,
        question: list,
        image_paths: list,
        video_paths: list,
        video_options: list,
        reference: list,
        answer_text: list,
        trainer_state: Any = None,
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        rewards: list[float | None] = [None] * len(completions)
        step = trainer_state.global_step if trainer_state is not None else 0
        rows = [i for i, row_kind in enumerate(kind) if row_kind == "critique"]
        if step < self.options.from_step or not rows:
            return rewards
        texts = {i: completion_text(completions[i]) for i in rows}
        verdicts = {i: parse_correctness(texts[i]).accepts for i in rows}
        for i in rows:
            rewards[i] = 0.0 if verdicts[i] is None else float(answer[i] == "correct")
        rejected = [i for i in rows if verdicts[i] is False]
        items = [
            (
                row_media(self.budget, image_paths[i], video_paths[i], video_options[i]),
                question[i],
                answer_text[i],
                shown_critique(texts[i]),
            )
            for i in rejected
        ]
        for i, revision in zip(rejected, self._revise(items), strict=True):
            rewards[i] = (
                None if revision is None else float(answer_matches(revision, str(reference[i])))
            )
        if log_metric is not None:
            _log(log_metric, rows, rejected, answer, rewards)
        return rewards

    def _revise(self, items: list[tuple[Any, str, str, str]]) -> list[str | None]:
        """The policy's revision of each (media, question, answer, critique); None where a
        served policy lost the request (the rollout is left out, never scored 0)."""
        if not items:
            return []
        if self.policy is None:
            raise RuntimeError("the refinement reward has no policy: the trainer binds one")
        revisions = self.policy.try_revise_many(items, self.options.temperature, seed=0)
        self.lost += sum(isinstance(revision, RequestFailed) for revision in revisions)
        return [None if isinstance(r, RequestFailed) else r.text for r in revisions]


def _log(
    log_metric: Callable[[str, float], None],
    rows: list[int],
    rejected: list[int],
    answer: Sequence[str],
    rewards: list[float | None],
) -> None:
    log_metric("refinement/revised", len(rejected) / len(rows))
    log_metric("refinement/lost", sum(rewards[i] is None for i in rejected))
    if rejected:
        fixed = sum(answer[i] != "correct" and rewards[i] == 1.0 for i in rejected)
        broken = sum(answer[i] == "correct" and rewards[i] == 0.0 for i in rejected)
        log_metric("refinement/wrong_to_right", fixed / len(rejected))
        log_metric("refinement/right_to_wrong", broken / len(rejected))
