"""Critique-GRPO (Zhang et al., arXiv 2506.03106): the policy learns in GRPO from its sampled
answers and from a critique-guided refinement of them, in the same group.

What a step does, as the official code does it (github.com/zhangxy-2019/critique-GRPO,
`verl/critique_grpo/critique_vllm_rollout_spmd.py` and `critique_core_algos.py`, run with
`off_policy_reshape: p_div_p_0.1`):

1. Each prompt's n rollouts are sampled as usual.
2. Every rollout is critiqued: by rule from the row's reference answer (`critic: reference`,
   the run's "simple_gt" critique: "The generated solution is correct/incorrect, the ground
   truth is X."), or by the policy itself with the critique prompt (`critic: self`, the
   paper's self-critiquing), and revised by the policy given its critique.
3. One refinement per group is kept: the first that is right, else the first. It takes the
   group's last slot as a completion of the original prompt (the critique is not in its
   context), so the reward functions score it and the group's advantage is taken over the
   n - 1 answers and the refinement together.
4. The answers' tokens train with TRL's clipped objective. The refinement's tokens train with
   -A x f(pi_theta(token)), f(p) = p / (p + gamma): no ratio to an old policy (the refinement
   was not sampled from the policy on this prompt), no clipping; f's gradient p gamma /
   (p + gamma)^2 is largest on tokens the policy finds unlikely, so a right but unfamiliar
   refinement teaches most, and a wrong one is pushed down.

Where the paper is silent, this package chose: the n-th sampled answer is critiqued and revised
like the others before its slot is given to the refinement (so it still offers a refinement);
the refinement's tokens get no KL term (the official run has none) and no entropy bonus; its
term is normalised by the batch's token count, as TRL's `dapo` loss is (the recipe requires
`loss_type: dapo`); revisions and self-critiques are greedy unless `temperature` > 0. The
advantage is TRL's (set `grpo.scale_rewards: none` for the paper's A = R - mean). Logged:
`critique_grpo/refinement_right` (share of groups whose kept refinement is right),
`critique_grpo/answers_right` (share of sampled answers that are), `critique_grpo/refinement_prob`
(the policy's mean probability of the refinement's tokens).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from mmcritic.data.media import MediaBudget
from mmcritic.rewards.answers import as_judged
from mmcritic.rewards.critic import answer_matches
from mmcritic.train.config import CritiqueGRPOSettings
from mmcritic.train.critic_reward import row_media


def reference_critique(answer: str, reference: str) -> str:
    """The official run's rule-based critique ("simple_gt"): right or wrong, and the truth."""
    verdict = "correct" if answer_matches(answer, reference) else "incorrect"
    return f"The generated solution is {verdict}, the ground truth is {reference}."


def chosen_refinement(revisions: Sequence[str], reference: str) -> int:
    """Which of a group's refinements takes its last slot: the first right one, else the
    first (the official `process_refinement_groups`)."""
    return next((i for i, text in enumerate(revisions) if answer_matches(text, reference)), 0)


def shaped_loss(
    logps: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, gamma: float
) -> torch.Tensor:
    """Summed -A x p / (p + gamma) over the masked tokens (a refinement's); `logps` are the
    current policy's per-token log-probs, `advantages` one per row."""
    probs = logps.exp()
    per_token = -advantages.unsqueeze(1) * probs / (probs + gamma)
    return (per_token * mask).sum()


class CritiqueGRPOMixin:
    """Critique-GRPO on a `GRPOTrainer`: `_refining_rows` around a rollout makes its
    generation refine each group's answers; the loss pass trains the refinements' tokens with
    the shaped term. Needs `frozen_model()` (the model for generation, without gradients)."""

    critique_grpo: CritiqueGRPOSettings | None = None
    critique_budget: MediaBudget | None = None
    _rows_to_refine: list[dict] | None = None
    _refined_rows: list[bool] | None = None
    _keep_logps: bool = False
    _kept_logps: torch.Tensor | None = None

    @contextmanager
    def _refining_rows(self, rows: list[dict]) -> Iterator[None]:
        """During a training rollout of `rows`, generation puts a refinement in each group's
        last slot; the rows it replaced are then in `_refined_rows`."""
        on = self.critique_grpo is not None and self.model.training
        self._rows_to_refine, self._refined_rows = (rows if on else None), None
        try:
            yield
        finally:
            self._rows_to_refine = None

    def _mark_refined(self, rollout: dict) -> None:
        """Adds the `refined` row flags to a rollout, for the loss pass."""
        if self._refined_rows is not None:
            flags = torch.tensor(self._refined_rows, dtype=torch.bool)
            rollout["refined"] = flags.to(rollout["completion_mask"].device)
            self._refined_rows = None

    def _generate_single_turn(self, *args: Any, **kwargs: Any):
        completion_ids, logprobs = super()._generate_single_turn(*args, **kwargs)
        if self._rows_to_refine is not None:
            completion_ids = self._with_refinements(completion_ids)
        return completion_ids, logprobs

    def _with_refinements(self, completion_ids: list[list[int]]) -> list[list[int]]:
        rows, n = self._rows_to_refine, self.num_generations
        assert rows is not None and len(rows) == len(completion_ids)
        tokenizer = self.processing_class.tokenizer
        answers = tokenizer.batch_decode(completion_ids, skip_special_tokens=True)
        revisions = self._revisions(rows, answers)
        refined, flags, kept_right = [list(ids) for ids in completion_ids], [False] * len(rows), []
        for start in range(0, len(rows), n):
            reference = str(rows[start]["answer"])
            chosen = start + chosen_refinement(revisions[start : start + n], reference)
            kept_right.append(answer_matches(revisions[chosen], reference))
            refined[start + n - 1] = self._completion_ids(revisions[chosen])
            flags[start + n - 1] = True
        self._refined_rows = flags
        metrics = self._metrics["train"]
        metrics["critique_grpo/refinement_right"].append(sum(kept_right) / len(kept_right))
        right = [
            answer_matches(a, str(row["answer"])) for a, row in zip(answers, rows, strict=True)
        ]
        metrics["critique_grpo/answers_right"].append(sum(right) / len(right))
        return refined

    def _revisions(self, rows: list[dict], answers: list[str]) -> list[str]:
        """Each answer's critique, then the policy's revision given it, the model frozen."""
        from mmcritic.inference import Critic, Policy

        settings = self.critique_grpo
        assert settings is not None and self.critique_budget is not None
        media = [
            row_media(self.critique_budget, r["image_paths"], r["video_paths"], r["video_options"])
            for r in rows
        ]
        questions = [str(row["question"]) for row in rows]
        with self.frozen_model() as model:
            tokens, batch = settings.max_new_tokens, settings.batch_size
            if settings.critic == "self":
                critic = Critic(model, self.processing_class, tokens, batch_size=batch)
                shown = [as_judged(text) for text in answers]
                judged = critic.critique_many(list(zip(media, questions, shown, strict=True)))
                critiques = [critique.text for critique in judged]
            else:
                references = [str(row["answer"]) for row in rows]
                critiques = list(map(reference_critique, answers, references))
            policy = Policy(model, self.processing_class, tokens, batch_size=batch)
            items = list(zip(media, questions, answers, critiques, strict=True))
            return [a.text for a in policy.revise_many(items, settings.temperature, seed=0)]

    def _completion_ids(self, text: str) -> list[int]:
        """A refinement as a completion of the original prompt: its tokens, cut to the
        completion length, ended by the end-of-turn token as a sampled completion is."""
        tokenizer = self.processing_class.tokenizer
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        limit = self.max_completion_length
        if len(ids) >= limit:
            return ids[:limit]
        return [*ids, self.eos_token_ids[0]]

    def _compute_loss(self, model, inputs):
        refined = inputs.get("refined")
        if refined is None or not bool(refined.any()):
            return super()._compute_loss(model, inputs)
        # out of the clipped loss through TRL's loss-only mask (`tool_mask`): the completion
        # mask is also the attention mask, and zeroing it would hide the refinement's tokens
        # from each other in the forward pass whose log-probs the shaped term uses
        answers_only = dict(inputs)
        kept = (~refined).unsqueeze(1).to(inputs["completion_mask"].dtype)
        answers_only["tool_mask"] = inputs.get("tool_mask", 1) * kept
        self._keep_logps = True
        try:
            loss = super()._compute_loss(model, answers_only)
        finally:
            self._keep_logps = False
        logps, self._kept_logps = self._kept_logps, None
        mask = inputs["completion_mask"] * refined.unsqueeze(1)
        settings = self.critique_grpo
        assert logps is not None and settings is not None
        term = shaped_loss(logps, inputs["advantages"], mask, settings.shaping_gamma)
        mode = "train" if self.model.training else "eval"
        prob = (logps.detach().exp() * mask).sum() / mask.sum().clamp(min=1)
        self._metrics[mode]["critique_grpo/refinement_prob"].append(prob.item())
        return loss + term / self._dapo_normalizer(inputs, mode)

    def _dapo_normalizer(self, inputs: dict, mode: str) -> torch.Tensor:
        """TRL 1.16's `dapo` normaliser (`GRPOTrainer._compute_loss`): the generation batch's
        completion tokens per process, over the micro-batches of one optimizer step."""
        normalizer = inputs["num_items_in_batch"].clamp(min=1.0) / self.accelerator.num_processes
        if mode == "train":
            steps = self.current_gradient_accumulation_steps / self.args.steps_per_generation
            normalizer = normalizer * steps
        return normalizer
