"""`trl.GRPOTrainer`, extended for critic training.

What TRL lacks and this adds, each behind the smallest override that does it:
- dynamic sampling: extra generation rounds refill the batch with informative groups
  (`_generate_and_score_completions`);
- position-balanced batches: as many prompts whose answer is response 1 as response 2 in each
  rollout batch (`_get_train_sampler`, `mmcritic.train.balanced_sampling`);
- a backstop for vision placeholder tokens the policy might still sample despite
  `suppress_tokens` (`_generate`): the completion is cut before the token, and counted;
- a rollout log (`rollouts.jsonl`: step, record ids, rewards) that makes resume and data order
  auditable;
- exact resume (`mmcritic.train.resume`): strict weight loading, and a data order that depends
  only on the seed, the epoch and how far the refills have read (`_get_train_sampler`);
- videos: batches that hold one are encoded here with all their media, and the media follow
  each row into every forward pass (`mmcritic.train.media_rollout`);
- the POISE baseline (`grpo.baseline: poise`, `mmcritic.train.poise`): a probe on the policy's
  hidden states over each rollout batch (`mmcritic.train.poise_pass`);
- the generated tokens, counted over the run (`tokens/generated`), for budgets by compute.
The overridden private methods are covered by tests and TRL is pinned to the 1.16 series.
"""

from __future__ import annotations

import json
import logging
import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from accelerate import skip_first_batches
from transformers import TrainerCallback
from trl import GRPOTrainer
from trl.trainer.utils import (
    split_pixel_values_by_grid,
    split_tensor_dict,
    unsplit_pixel_values_by_grid,
)

from mmcritic.data.media import MediaBudget
from mmcritic.models.families import family_of
from mmcritic.models.vllm_media import vllm_video_refusal
from mmcritic.rewards import weighted_total
from mmcritic.train.balanced_sampling import (
    EpochSeededRepeatSampler,
    PairedSampler,
    PositionBalancedSampler,
)
from mmcritic.train.config import CritiqueGRPOSettings, PoiseSettings
from mmcritic.train.critique_grpo import CritiqueGRPOMixin
from mmcritic.train.dynamic_sampling import concat_rollouts, informative_groups, select_rows
from mmcritic.train.media_rollout import (
    RowMedia,
    collate,
    encode_prompts,
    forward_with_media,
    has_video,
    token_types,
)
from mmcritic.train.model_card import ModelCardMixin
from mmcritic.train.pair_baseline import informative_pairs, pair_advantages
from mmcritic.train.poise import PoiseBaseline
from mmcritic.train.poise_pass import PoiseMixin
from mmcritic.train.prefix_sharing import shuffle_groups
from mmcritic.train.resume import ExactResumeMixin
from mmcritic.train.shared_prefix import SharedPrefixMixin
from mmcritic.train.shared_rollout import group_sizes, shared_prefill, unique_image_processing
from mmcritic.train.vllm_inputs import MediaPromptLLM, MediaTokens, SameSizeServerImages

logger = logging.getLogger(__name__)
# TRL 1.16 reads transformers' deprecated `is_gradient_checkpointing` each time it unwraps the model
# for generation; the warning is about TRL's code, not about the run.
warnings.filterwarnings(
    "ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning
)

ROLLOUT_LOG = "rollouts.jsonl"
MEDIA_COLUMNS = ("images", "videos")
# Refill rounds read the data in an order of their own, seeded apart from the main loop's.
REFILL_SEED_OFFSET = 1
# a rollout batch in which this share of groups has no reward spread teaches (almost) nothing
STALL_FRACTION = 0.95


class CriticGRPOTrainer(
    ExactResumeMixin,
    ModelCardMixin,
    PoiseMixin,
    CritiqueGRPOMixin,
    SharedPrefixMixin,
    GRPOTrainer,
):
    """GRPO with dynamic sampling, a vision-token guard, a rollout log and exact resume."""

    _sampler_seed: int | None = None  # set while the refill loader is built

    def __init__(
        self,
        *args: Any,
        vision_token_ids: list[int] | None = None,
        dynamic_sampling: bool = False,
        dynamic_sampling_max_rounds: int = 4,
        balance_positions: bool = False,
        both_orders: bool = False,
        pair_baseline: bool = False,
        poise: PoiseSettings | None = None,
        critique_grpo: CritiqueGRPOSettings | None = None,
        critique_budget: MediaBudget | None = None,
        stall_steps: int = 10,
        shared_prefix: bool = False,
        **kwargs: Any,
    ):
        self.critique_grpo, self.critique_budget = critique_grpo, critique_budget
        self.balance_positions = balance_positions
        self.shared_prefix = shared_prefix
        self._groups_drawn = 0
        self.both_orders = both_orders
        self.pair_baseline = pair_baseline
        self.stall_steps = stall_steps
        self._stalled_steps = 0
        super().__init__(*args, **kwargs)
        self.vision_token_ids = set(vision_token_ids or [])
        self.dynamic_sampling = dynamic_sampling
        self.dynamic_sampling_max_rounds = dynamic_sampling_max_rounds
        self._last_rewards: torch.Tensor | None = None
        self._refill_batches = None
        self._refill_batches_drawn = 0
        self._main_sampler: EpochSeededRepeatSampler | None = None
        self.add_callback(_EpochToSampler(self))
        self._pending_media: tuple[list, list] | None = None
        self._media_rows: list[RowMedia] | None = None
        self._send_media_to_vllm()
        self._generated_tokens = 0
        self.poise = None
        if poise is not None:
            width = self.accelerator.unwrap_model(self.model).config.get_text_config().hidden_size
            self.poise = PoiseBaseline(width, poise, self.args.seed, self.accelerator.device)

    # -- vision-token guard ---------------------------------------------------------------
    def _generate(self, prompts: list):
        prompt_ids, completion_ids, tool_mask, completions, logprobs, *rest = super()._generate(
            prompts
        )
        cuts = 0
        for index, ids in enumerate(completion_ids):
            position = next((i for i, t in enumerate(ids) if t in self.vision_token_ids), None)
            if position is None:
                continue
            cuts += 1
            completion_ids[index] = [*ids[:position], self.eos_token_ids[0]]
            text = self._tokenizer.decode(ids[:position], skip_special_tokens=True)
            was_chat = isinstance(completions[index], list)
            completions[index] = [{"role": "assistant", "content": text}] if was_chat else text
            for per_token in (tool_mask, logprobs):
                if per_token is not None:
                    per_token[index] = per_token[index][: position + 1]
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["guard/vision_token_cuts"].append(float(cuts))
        return (prompt_ids, completion_ids, tool_mask, completions, logprobs, *rest)

    # -- rewards bookkeeping --------------------------------------------------------------
    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        with self._judging_itself():
            rewards_per_func = super()._calculate_rewards(
                inputs, prompts, completions, completion_ids_list
            )
        self._last_rewards = rewards_per_func
        return rewards_per_func

    @contextmanager
    def frozen_model(self) -> Iterator[Any]:
        """The model being trained, gathered as for generation and without gradients, for
        rewards and refinements that ask it within a step."""
        from trl.models import unwrap_model_for_generation

        with (
            unwrap_model_for_generation(
                self.model_wrapped,
                self.accelerator,
                gather_deepspeed3_params=self.args.ds3_gather_for_generation,
            ) as model,
            torch.no_grad(),
        ):
            yield model

    @contextmanager
    def _judging_itself(self) -> Iterator[None]:
        """For rewards that ask the model being trained: a critic reward that is the policy
        itself (`rewards.critic_model: self`) and the refinement reward (the policy revises
        its answers given each critique). The frozen model judges or revises this step's
        rollouts."""
        judges = [f for f in self.reward_funcs if getattr(f, "judges_itself", False)]
        revisers = [f for f in self.reward_funcs if getattr(f, "revises_with_policy", False)]
        if not judges and not revisers:
            yield
            return
        from mmcritic.inference import Critic, Policy

        with self.frozen_model() as model:
            for function, role in [
                *((j, Critic) for j in judges),
                *((r, Policy) for r in revisers),
            ]:
                options = function.options
                function.bind(
                    role(
                        model,
                        self.processing_class,
                        options.max_new_tokens,
                        batch_size=options.batch_size,
                    )
                )
            try:
                yield
            finally:
                for function in (*judges, *revisers):
                    function.bind(None)

    def _log_rollouts(self, inputs: list[dict], advantages: torch.Tensor) -> None:
        """One line per rollout batch of the main process: its prompts, and each rollout's
        total reward and the advantage it was trained with."""
        if not self.accelerator.is_main_process:
            return
        total = weighted_total(self._last_rewards, self.reward_weights).tolist()
        line = {
            "step": self.state.global_step,
            "ids": [example.get("id") for example in inputs[:: self.num_generations]],
            "reward": [round(value, 4) for value in total[: len(inputs)]],
            "advantage": [round(value, 4) for value in advantages.tolist()],
        }
        path = Path(self.args.output_dir) / ROLLOUT_LOG
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")

    # -- dynamic sampling -----------------------------------------------------------------
    # -- videos -----------------------------------------------------------------------------
    @property
    def _media_token_ids(self) -> tuple[int | None, int | None]:
        """The image and video placeholder ids, as TRL resolved them from the tokenizer."""
        return self._image_pad_token_id, self._video_pad_token_id

    def _rollout(self, inputs: list[dict]) -> dict:
        """TRL's rollout, with each row's prompt group recorded (`prompt_group`: rows of one
        prompt share an id, unique across rounds) so the log-prob and loss passes can run each
        prompt once (`mmcritic.train.shared_prefix`); a batch holding a video keeps its media
        out of TRL's image path."""
        groups = torch.arange(len(inputs)) // self.num_generations + self._groups_drawn
        self._groups_drawn += len(inputs) // self.num_generations
        self._prompt_groups = groups
        try:
            with (
                self._prompt_work_once(),
                self._states_from_trl_pass(),
                self._refining_rows(inputs),
            ):
                rollout = self._rollout_media(inputs)
        finally:
            self._prompt_groups = None
        self._mark_refined(rollout)
        rollout["prompt_group"] = groups.to(rollout["prompt_ids"].device)
        if self.model.training:
            self._count_generated(rollout["completion_mask"])
            if self.pair_baseline:
                advantages = self._pair_advantages(inputs)
                rollout["advantages"] = advantages.to(rollout["advantages"].device)
            elif self.poise is not None:
                advantages = self._poise_advantages(rollout)
                rollout["advantages"] = advantages.to(rollout["advantages"].device)
            self._log_rollouts(inputs, rollout["advantages"])
        return rollout

    def _count_generated(self, completion_mask: torch.Tensor) -> None:
        """Adds the batch's completion tokens on every process to the run's count, logged as
        `tokens/generated` (the latest count, as TRL logs `num_tokens`)."""
        self._generated_tokens += int(self.accelerator.gather(completion_mask.sum()).sum().item())
        self._metrics["train"]["tokens/generated"] = [float(self._generated_tokens)]

    def _gathered_totals(self) -> torch.Tensor:
        """Every process's rollouts' total rewards, NaN where unscorable (every reward None:
        out of the baseline and no advantage, as in TRL)."""
        gathered = self._last_rewards.cpu()
        everyone = weighted_total(gathered, self.reward_weights)
        everyone[gathered.isnan().all(dim=1)] = torch.nan
        return everyone

    def _pair_advantages(self, inputs: list[dict]) -> torch.Tensor:
        """This process's advantages with each pair's baseline over both its orders
        (`mmcritic.train.pair_baseline`); the paired sampler keeps a pair's orders in one
        process's batch. The share of pairs with a reward spread is logged."""
        everyone = self._gathered_totals()
        start = self.accelerator.process_index * len(inputs)
        rewards = everyone[start : start + len(inputs)]
        pairs = [example["pair"] for example in inputs]
        self._metrics["train"]["pair_baseline/informative_pairs"].append(
            informative_pairs(rewards, pairs, self.num_generations)
        )
        return pair_advantages(
            rewards, pairs, self.num_generations, self.scale_rewards, batch=everyone
        )

    def _rollout_media(self, inputs: list[dict]) -> dict:
        if not has_video(inputs):
            return super()._generate_and_score_completions(inputs)
        self._pending_media = ([row["images"] for row in inputs], [row["videos"] for row in inputs])
        text_only = [{k: v for k, v in row.items() if k not in MEDIA_COLUMNS} for row in inputs]
        try:
            rollout = super()._generate_and_score_completions(text_only)
            rollout["media_rows"] = self._media_rows
        finally:
            self._pending_media, self._media_rows = None, None
        return rollout

    @contextmanager
    def _prompt_work_once(self) -> Iterator[None]:
        """Image processing and generation prefill once per prompt group, not once per copy
        (`mmcritic.train.shared_rollout`); vLLM shares prompt work by itself."""
        sizes = group_sizes(self._prompt_groups)
        if not self.shared_prefix or self.use_vllm or sizes is None:
            yield
            return
        model = self.accelerator.unwrap_model(self.model_wrapped)
        with (
            unique_image_processing(self.processing_class),
            shared_prefill(model, sizes, *self._media_token_ids),
        ):
            yield

    def _tokenize_prompts(self, prompts: list):
        if self._pending_media is None:
            return super()._tokenize_prompts(prompts)
        images, videos = self._pending_media
        sizes = group_sizes(self._prompt_groups) if self.shared_prefix else None
        if sizes is None or sum(sizes) != len(prompts):
            sizes = [1] * len(prompts)
        firsts = [sum(sizes[:group]) for group in range(len(sizes))]
        if any(
            prompts[row] != prompts[first]
            for first, size in zip(firsts, sizes, strict=True)
            for row in range(first, first + size)
        ):
            sizes, firsts = [1] * len(prompts), list(range(len(prompts)))
        encoded = encode_prompts(
            self.processing_class,
            [prompts[row] for row in firsts],
            [images[row] for row in firsts],
            [videos[row] for row in firsts],
        ).repeated(sizes)
        self._media_rows = encoded.rows
        return encoded.prompt_ids, None, encoded.generation_fields

    def _compute_loss(self, model, inputs):
        self._media_rows = inputs.get("media_rows")
        self._prompt_groups = inputs.get("prompt_group")
        try:
            return super()._compute_loss(model, inputs)
        finally:
            self._media_rows, self._prompt_groups = None, None

    def _get_per_token_logps_and_entropies(
        self, model, input_ids, attention_mask, logits_to_keep, batch_size=None, **kwargs
    ):
        result = self._logps_and_entropies(
            model, input_ids, attention_mask, logits_to_keep, batch_size, **kwargs
        )
        if self._keep_logps:
            self._kept_logps = result[0]
        return result

    def _logps_and_entropies(
        self, model, input_ids, attention_mask, logits_to_keep, batch_size=None, **kwargs
    ):
        if self._reads_states(model):
            return self._pass_reading_states(
                model, input_ids, attention_mask, logits_to_keep, batch_size, **kwargs
            )
        if self._can_share_prefix(attention_mask, logits_to_keep, kwargs):
            return self._shared_prefix_logps(
                model, input_ids, attention_mask, logits_to_keep, batch_size, **kwargs
            )
        if kwargs.get("mm_token_type_ids") is not None:
            # TRL left-pads the ids but takes the token types from a processor call that pads
            # on the tokenizer's side; the ids themselves say where the media tokens are
            kwargs["mm_token_type_ids"] = token_types(input_ids, *self._media_token_ids)
        if self._media_rows is None:
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size, **kwargs
            )
        media = collate(self._media_rows, input_ids.device)
        with forward_with_media(model, media, *self._media_token_ids):
            # one chunk: the media rows are collated for the whole batch
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, input_ids.size(0), **kwargs
            )

    # -- vLLM prompts -----------------------------------------------------------------------
    def _send_media_to_vllm(self) -> None:
        """Colocated vLLM gets each prompt in the form it expands, with the row's images and
        videos and the run's processor settings (`mmcritic.train.vllm_inputs`), through an
        adapter around the engine TRL calls. A server is fed by TRL's client, which carries
        images (as features placed on the trainer's own ids, which must be as many as the
        server made) and no video."""
        if not self.use_vllm:
            return
        if self.vllm_mode == "server" and _holds_video(self.train_dataset):
            raise ValueError(
                "the training data holds videos, which TRL's vLLM client cannot send to a vLLM "
                "server; set grpo.vllm_mode: colocate (or grpo.use_vllm: false)"
            )
        generation = self.vllm_generation
        budget = self.processing_class.image_processor.size
        if self.vllm_mode == "server":
            generation._place_features = SameSizeServerImages(generation._place_features, budget)
            return
        family = family_of(self.accelerator.unwrap_model(self.model).config)
        if not family.vllm_video and _holds_video(self.train_dataset):
            raise ValueError(vllm_video_refusal(family))
        if generation.tensor_parallel_size > 1 and _holds_video(self.train_dataset):
            raise ValueError(
                "videos reach a colocated vLLM engine one process at a time; set "
                "grpo.vllm_tensor_parallel_size: 1 for training data that holds videos"
            )
        generation.llm = MediaPromptLLM(
            generation.llm,
            MediaTokens.of(self.processing_class),
            budget,
            family,
        )

    def _generate_single_turn(self, *args, **kwargs):
        """TRL's generation; a batch holding a video hands each row's media to vLLM."""
        llm = getattr(getattr(self, "vllm_generation", None), "llm", None)
        if self._pending_media is None or not isinstance(llm, MediaPromptLLM):
            return super()._generate_single_turn(*args, **kwargs)
        with llm.media(*self._pending_media):
            return super()._generate_single_turn(*args, **kwargs)

    # -- micro-batches ----------------------------------------------------------------------
    def _prepare_inputs(self, generation_batch: dict[str, Any]) -> dict[str, Any]:
        """TRL's rollout buffering, with whole prompt groups shuffled into micro-batches
        (`mmcritic.train.prefix_sharing.shuffle_groups`) when the shared-prefix pass runs and a
        rollout batch feeds several micro-batches; TRL's own row shuffle otherwise (with one
        micro-batch per rollout, every group is whole in it anyway)."""
        steps = self.args.steps_per_generation
        if not (self.shared_prefix and self.model.training and steps > 1):
            return super()._prepare_inputs(generation_batch)
        if self._step % (steps * self.num_iterations) == 0 or self._buffered_inputs is None:
            batch = self._generate_and_score_completions(generation_batch)
            batch = shuffle_groups(split_pixel_values_by_grid(batch), batch["prompt_group"])
            parts = split_tensor_dict(batch, steps)
            self._buffered_inputs = [unsplit_pixel_values_by_grid(part) for part in parts]
        return self._buffered_inputs[self._step % steps]

    # -- dynamic sampling -------------------------------------------------------------------
    def _generate_and_score_completions(self, inputs):
        rollout = self._rollout(inputs)
        if self.model.training:
            self._watch_for_stall()
        if not (self.dynamic_sampling and self.model.training):
            return rollout
        target = len(inputs)
        kept, spare = self._split_informative(rollout, len(inputs))
        rounds, dropped = 1, target - len(kept["rows"])
        while self._global_count(len(kept["rows"])) < target * self.accelerator.num_processes:
            if rounds >= self.dynamic_sampling_max_rounds:
                break
            more_inputs = self._next_refill_batch()
            more = self._rollout(more_inputs)
            more_kept, more_spare = self._split_informative(more, len(more_inputs))
            kept = _merge_parts(kept, more_kept, self._tokenizer.pad_token_id)
            spare = _merge_parts(spare, more_spare, self._tokenizer.pad_token_id)
            rounds += 1
        self._metrics["train"]["dynamic_sampling/dropped_fraction"].append(dropped / target)
        self._metrics["train"]["dynamic_sampling/rounds"].append(float(rounds))
        return self._assemble(kept, spare, target)

    def _watch_for_stall(self) -> None:
        """Counts rollout batches in which at least 95% of groups have no reward spread (they
        teach nothing) and warns once a run has had `stall_steps` of them in a row: training has
        stalled, and dynamic sampling, more generations or a higher temperature are the fixes.
        The streak is logged as `groups/stalled_steps`."""
        rewards = weighted_total(self._last_rewards, self.reward_weights)
        informative = informative_groups(rewards, self.num_generations)
        flat = informative.view(-1, self.num_generations)[:, 0].float().mean().item()
        self._stalled_steps = self._stalled_steps + 1 if 1 - flat >= STALL_FRACTION else 0
        self._metrics["train"]["groups/stalled_steps"].append(float(self._stalled_steps))
        if self._stalled_steps == self.stall_steps:
            logger.warning(
                "training has stalled: at least %d%% of prompt groups have had identical rewards "
                "(no gradient) for %d rollout batches in a row at step %d; set "
                "grpo.dynamic_sampling: true, raise grpo.num_generations or grpo.temperature",
                round(100 * STALL_FRACTION),
                self.stall_steps,
                self.state.global_step,
            )

    def _split_informative(self, rollout: dict, local_size: int) -> tuple[dict, dict]:
        rewards = weighted_total(self._last_rewards, self.reward_weights)
        mask = informative_groups(rewards, self.num_generations)
        start = self.accelerator.process_index * local_size
        local = mask[start : start + local_size].tolist()
        informative = [i for i, keep in enumerate(local) if keep]
        uninformative = [i for i, keep in enumerate(local) if not keep]
        return _part(rollout, informative), _part(rollout, uninformative)

    def _global_count(self, local_count: int) -> int:
        count = torch.tensor([local_count], device=self.accelerator.device)
        return int(self.accelerator.gather(count).sum().item())

    def _next_refill_batch(self) -> list[dict]:
        """Prompts for an extra round, from further passes over the data in their own order,
        so refills do not replay the prompts the main loop is about to see."""
        if self._refill_batches is None:
            self._refill_batches = self._refill_stream(self._refill_batches_drawn)
        # the refill loader must not draw from the global RNG that rollouts sample with: a
        # resumed run opens it at another moment than the uninterrupted run did
        with torch.random.fork_rng(devices=[]):
            batch = next(self._refill_batches)
        self._refill_batches_drawn += 1
        return batch

    def _refill_stream(self, already_drawn: int):
        """Refill batches pass after pass, starting after the first `already_drawn`."""
        self._sampler_seed = self.args.seed + REFILL_SEED_OFFSET
        try:
            loader = self.get_train_dataloader()
        finally:
            self._sampler_seed = None
        passes, skip = divmod(already_drawn, len(loader))
        while True:
            loader.set_epoch(passes)
            yield from skip_first_batches(loader, skip) if skip else loader
            passes, skip = passes + 1, 0

    def extra_state(self) -> dict:
        return {
            "refill_batches_drawn": self._refill_batches_drawn,
            "generated_tokens": self._generated_tokens,
        }

    def restore_extra_state(self, state: dict) -> None:
        self._refill_batches_drawn = int(state["refill_batches_drawn"])
        self._generated_tokens = int(state["generated_tokens"])
        self._refill_batches = None

    def extra_tensors(self) -> dict:
        return {"poise": self.poise.state_dict()} if self.poise is not None else {}

    def restore_extra_tensors(self, tensors: dict) -> None:
        self.poise.load_state_dict(tensors["poise"])

    def _get_train_sampler(self, dataset=None):
        """TRL's sampler, same arguments, with an order that depends only on the seed and the
        epoch, and with answer positions balanced in every batch when asked."""
        sampler = super()._get_train_sampler(dataset)
        arguments = {
            "data_source": sampler.data_source,
            "mini_repeat_count": sampler.mini_repeat_count,
            "batch_size": sampler.batch_size,
            "repeat_count": sampler.repeat_count,
            "shuffle": sampler.shuffle,
            "seed": self._sampler_seed if self._sampler_seed is not None else sampler.seed,
        }
        columns = (dataset or self.train_dataset).with_format(None)
        if self.both_orders and sampler.shuffle:
            ours = PairedSampler(pairs=list(columns["pair"]), **arguments)
        elif self.balance_positions and sampler.shuffle:
            ours = PositionBalancedSampler(positions=list(columns["answer_position"]), **arguments)
        else:
            ours = EpochSeededRepeatSampler(**arguments)
        if self._sampler_seed is None:
            self._main_sampler = ours
        return ours

    def _assemble(self, kept: dict, spare: dict, target: int) -> dict:
        """Exactly `target` local rows: informative first, then zero-advantage fill."""
        parts = [kept["rollout"]] if kept["rows"] else []
        shortfall = target - len(kept["rows"])
        if shortfall > 0:
            parts.append(select_rows(spare["rollout"], list(range(shortfall))))
        rollout = (
            concat_rollouts(parts, self._tokenizer.pad_token_id) if len(parts) > 1 else parts[0]
        )
        rollout = select_rows(rollout, list(range(target)))
        tokens = rollout["completion_mask"].sum()
        rollout["num_items_in_batch"] = self.accelerator.gather(tokens).sum()
        return rollout


class _EpochToSampler(TrainerCallback):
    """Hands the epoch to the main loop's sampler at the start of every epoch.

    The Trainer's `set_epoch` reaches the sampler through accelerate's data loader, except on a
    resumed multi-process run: there the sampler sits one wrapper deeper (a skipping batch
    sampler around the per-process shard) than accelerate looks, and the resumed epoch would
    replay epoch 0's order. The epoch in progress is the whole part of `state.epoch`."""

    def __init__(self, trainer: CriticGRPOTrainer):
        self.trainer = trainer

    def on_epoch_begin(self, args, state, control, **kwargs):
        if self.trainer._main_sampler is not None:
            self.trainer._main_sampler.set_epoch(math.floor(state.epoch or 0))


def _holds_video(dataset: Any) -> bool:
    """Whether any row of the training data shows a video (read from the paths, unloaded)."""
    if dataset is None or "videos" not in dataset.column_names:
        return False
    return any(dataset.with_format(None)["videos"])


def _part(rollout: dict, rows: list[int]) -> dict:
    """Some rows of a rollout, kept with their indices; no rollout when no rows."""
    return {"rollout": select_rows(rollout, rows) if rows else None, "rows": rows}


def _merge_parts(first: dict, second: dict, pad_token_id: int) -> dict:
    if not first["rows"]:
        return second
    if not second["rows"]:
        return first
    rollout = concat_rollouts([first["rollout"], second["rollout"]], pad_token_id)
    return {"rollout": rollout, "rows": first["rows"] + second["rows"]}
