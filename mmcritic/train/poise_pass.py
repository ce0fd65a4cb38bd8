"""Where the POISE probe meets the trainer: reading its features from a policy pass.

The probe (`mmcritic.train.poise`) reads the policy's last hidden states and token entropies
over each rollout. Where TRL already runs the policy over a rollout batch without gradients
(the old log-probs it keeps when a rollout batch feeds several optimizer steps, when
`num_iterations` > 1, or for vLLM's importance sampling: the GPU recipes), the states are read
from that pass at no extra cost; otherwise one more no-grad pass runs, in the loss pass's
layout (shared prefix and media included). `poise/extra_pass` logs which of the two it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from accelerate.utils import broadcast
from trl.models.utils import disable_gradient_checkpointing

from mmcritic.train.poise import PoiseBaseline, rollout_features
from mmcritic.train.rollout_states import RolloutStates

# what TRL's rollout holds besides the ids that a forward over it takes (`_compute_loss`)
FORWARD_INPUTS = (
    "pixel_values",
    "image_grid_thw",
    "num_images",
    "pixel_attention_mask",
    "spatial_shapes",
    "num_tiles",
    "image_sizes",
    "token_type_ids",
    "mm_token_type_ids",
    "image_position_ids",
)


class PoiseMixin:
    """Mixed into `CriticGRPOTrainer`: the POISE advantages of a rollout batch."""

    poise: PoiseBaseline | None = None
    _states_pass_armed: bool = False
    _trl_pass_features: torch.Tensor | None = None

    def _poise_advantages(self, rollout: dict) -> torch.Tensor:
        """This process's advantages under the POISE baseline: every process's rollout
        features and rewards gathered, so each rank's probe predicts and learns the same and
        groups are taken as TRL takes them; what the probe got right is logged."""
        features = self._trl_pass_features
        self._trl_pass_features = None
        self._metrics["train"]["poise/extra_pass"].append(float(features is None))
        if features is None:
            features = self._rollout_features(rollout)
        advantages, logged = self.poise.advantages(
            self.accelerator.gather(features),
            self._gathered_totals(),
            self.num_generations,
            self.scale_rewards,
        )
        self._same_probe_everywhere()
        for name, value in logged.items():
            self._metrics["train"][name].append(value)
        rows = len(rollout["prompt_ids"])
        start = self.accelerator.process_index * rows
        return advantages[start : start + rows]

    def _same_probe_everywhere(self) -> None:
        """Every rank trains its probe on the same gathered batch; rank 0's weights are then
        handed to all, so no rank's baselines drift from the others' by a kernel's rounding."""
        if self.accelerator.num_processes == 1:
            return
        for parameter in self.poise.probe.parameters():
            parameter.data.copy_(broadcast(parameter.data.clone(), from_process=0))

    @contextmanager
    def _states_from_trl_pass(self) -> Iterator[None]:
        """Around TRL's rollout: its first pass of the policy reads the probe's features when
        TRL computes old log-probs, which it does before the reference pass (under LoRA the
        policy with its adapter off) and never otherwise."""
        self._states_pass_armed = (
            self.poise is not None and self.model.training and self._trl_keeps_old_logps()
        )
        try:
            yield
        finally:
            self._states_pass_armed = False

    def _trl_keeps_old_logps(self) -> bool:
        """TRL 1.16's condition for computing old log-probs in a rollout
        (`GRPOTrainer._generate_and_score_completions`)."""
        generate_every = self.args.steps_per_generation * self.num_iterations
        return self.args.gradient_accumulation_steps % generate_every != 0 or (
            self.use_vllm and self.vllm_importance_sampling_correction
        )

    def _reads_states(self, model: Any) -> bool:
        """Whether this log-prob pass is the armed one: TRL's old log-probs of the policy."""
        if not self._states_pass_armed or model is not self.model:
            return False
        self._states_pass_armed = False
        return True

    def _pass_reading_states(
        self, model, input_ids, attention_mask, logits_to_keep, batch_size=None, **kwargs
    ):
        """TRL's old-log-prob pass, with the probe's features read on the way."""
        wants_entropy = bool(kwargs.pop("compute_entropy", False))
        (logps, entropies, aux), self._trl_pass_features = self._pass_with_states(
            model, input_ids, attention_mask, logits_to_keep, batch_size, **kwargs
        )
        return logps, entropies if wants_entropy else None, aux

    def _rollout_features(self, rollout: dict) -> torch.Tensor:
        """The probe's inputs for this process's rollouts from a pass of our own, without
        gradients, in the layout of the loss pass."""
        completion_ids = rollout["completion_ids"]
        input_ids = torch.cat([rollout["prompt_ids"], completion_ids], dim=1)
        attention_mask = torch.cat([rollout["prompt_mask"], rollout["completion_mask"]], dim=1)
        media = {key: rollout[key] for key in FORWARD_INPUTS if key in rollout}
        self._media_rows = rollout.get("media_rows")
        self._prompt_groups = rollout["prompt_group"]
        try:
            with (
                torch.no_grad(),
                disable_gradient_checkpointing(self.model, self.args.gradient_checkpointing_kwargs),
            ):
                _, features = self._pass_with_states(
                    self.model,
                    input_ids,
                    attention_mask,
                    completion_ids.size(1),
                    self.args.per_device_train_batch_size,
                    **media,
                )
        finally:
            self._media_rows, self._prompt_groups = None, None
        return features

    def _pass_with_states(
        self, model, input_ids, attention_mask, logits_to_keep, batch_size=None, **kwargs
    ) -> tuple[tuple, torch.Tensor]:
        """A log-prob pass (with entropies) that reads the decoder's last hidden states
        (`mmcritic.train.rollout_states`); returns the pass's outputs and the features."""
        completion_mask = attention_mask[:, -logits_to_keep:]
        decoder = self.accelerator.unwrap_model(model).get_decoder()
        with RolloutStates(decoder, completion_mask) as states:
            self._rollout_states = states
            states.expect_consecutive(logits_to_keep)
            try:
                outputs = self._get_per_token_logps_and_entropies(
                    model,
                    input_ids,
                    attention_mask,
                    logits_to_keep,
                    batch_size,
                    compute_entropy=True,
                    **kwargs,
                )
            finally:
                self._rollout_states = None
        prompt, trajectory = states.pooled()
        features = rollout_features(
            prompt, trajectory, outputs[1], completion_mask, self.max_completion_length
        )
        return outputs, features
