"""Training recipes: typed, nested, validated; YAML first, then dotted `key=value` overrides.

A recipe is the whole run on one page. Every field is declared here with the reason for its
default; a misspelt key is an error naming the nearest valid key, and every problem in a recipe is
reported at once, so a 7B run does not die at minute twenty over a typo. Recipes come from
outside (shared files, command lines), so loading one is bounded: no YAML anchors or aliases, a
short `base:` chain, every number within its field's range (`FIELD_RANGES`), and only an excerpt
of any value quoted in an error.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import reprlib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml

from mmcritic.data.convert import BuildOptions
from mmcritic.data.media import MediaBudget, PixelBudget
from mmcritic.data.video import FRAME_FACTOR, VideoBudget


class RecipeError(ValueError):
    """A recipe that cannot run; the message lists every problem found."""


@dataclass
class LoraSettings:
    enabled: bool = False
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    # Attention and MLP projections of the language model; the vision tower is matched by name
    # only if listed here.
    target_modules: list[str] = field(
        default_factory=lambda: [
            "q_proj",
            "k_proj",
            "v_proj",
            "o_proj",
            "gate_proj",
            "up_proj",
            "down_proj",
        ]
    )


@dataclass
class ModelSettings:
    name_or_path: str = ""
    # auto: bfloat16 on a GPU that supports it, float32 on CPU (CPU bf16 matmuls are slow).
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    # "auto": flash_attention_2 on a GPU where the flash-attn package is installed, except
    # under GRPO's shared-prefix passes, which need an attention that takes a 4-D mask (sdpa);
    # sdpa otherwise. Any transformers name ("sdpa", "eager", "flash_attention_2") is used as is.
    attn_implementation: str | None = "auto"
    # R1 trains the vision tower too; freezing it saves memory on small GPUs.
    freeze_vision_tower: bool = False
    gradient_checkpointing: bool = True
    # Passed to torch.utils.checkpoint; use_reentrant: false lets frozen inputs and LoRA
    # adapters get gradients through checkpointed blocks.
    gradient_checkpointing_reentrant: bool = False
    # torch.compile the model for the training passes (GPU; the first steps pay to compile).
    torch_compile: bool = False
    # Run the output head in float32 when the model is in bfloat16: steadier log-probs, so the
    # importance ratios GRPO clips are closer to exact.
    cast_lm_head_to_fp32: bool = False
    lora: LoraSettings = field(default_factory=LoraSettings)


@dataclass
class DataSettings:
    train: str = ""
    # Held-out set judged in both orders before and after training (`mmcritic.train.heldout`):
    # accuracy per answer position, position-consistent accuracy, format, with intervals.
    eval: str | None = None
    # Also every this many optimizer steps during training (0: before and after only; no
    # effect without data.eval).
    eval_every: int = 0
    # R1's image budget (`PixelBudget`) and prompt-length limit (`BuildOptions`).
    min_pixels: int = PixelBudget.min_pixels
    max_pixels: int = PixelBudget.max_pixels
    # Frames sampled per video and their pixel budget; a record's `meta.video` overrides them.
    video: VideoBudget = field(default_factory=VideoBudget)
    # Longer prompts would be truncated through media tokens, so they are dropped.
    max_prompt_tokens: int = BuildOptions.max_prompt_tokens
    # Processes that open and resize media while the model trains (0: in the training process).
    dataloader_num_workers: int = 0

    @property
    def media_budget(self) -> MediaBudget:
        return MediaBudget(PixelBudget(self.min_pixels, self.max_pixels), self.video)


@dataclass
class RewardSettings:
    # total = (1 - w) * correctness + w * format (LLaVA-Critic-R1: w = 0.1); correctness is the
    # verdict on pairwise rows and the reference answer on verifiable (policy) questions
    format_weight: float = 0.1
    # the correctness weight when it is not 1 - format_weight (0: the critic alone rewards)
    correctness_weight: float | None = None
    # + c * consistency: agreeing with the swapped prompt's majority verdict (J1, arXiv
    # 2505.10320; `mmcritic.rewards.ConsistencyReward`); needs grpo.both_orders. 0: off.
    consistency_weight: float = 0.0
    # + k * critic: a critic judging each group's rollouts (`mmcritic.train.critic_reward`), for
    # policy GRPO. critic_model: a checkpoint, or "self" for the policy judging itself (its
    # weights frozen for the step). pointwise: a 1-10 score mapped to [0, 1]; pairwise: the win
    # rate in the group, from a round robin or a knockout, each pair judged in both orders by
    # default.
    critic_model: str | None = None
    critic_weight: float = 0.0
    critic_mode: Literal["pointwise", "pairwise"] = "pairwise"
    critic_tournament: Literal["round_robin", "knockout"] = "round_robin"
    critic_both_orders: bool = True
    # serve a checkpoint critic from a separate process (its memory and generation apart)
    critic_process: bool = False
    # or from OpenAI-compatible servers elsewhere (`vllm serve` on other GPUs): critic_engine
    # openai, critic_model the served model name, one URL per server
    critic_engine: Literal["hf", "openai"] = "hf"
    critic_base_urls: list[str] = field(default_factory=list)
    critic_concurrency: int = 16
    critic_timeout_s: float = 600.0
    critic_device: Literal["auto", "cpu", "cuda"] = "auto"
    critic_max_new_tokens: int = 512
    critic_batch_size: int = 16
    # Critique rows (`kind: critique`, made by `mmcritic critique-data`) are rewarded in the
    # correctness slot for discriminability (the verdict right about the answer), and + r *
    # refinement for helpfulness: the current policy, frozen for the step, revises each answer
    # its critique rejects, and the reward is whether the revision is right (an accepted answer
    # stands: its own truth; an unreadable verdict: 0). Critique-RL's two stages: helpfulness
    # counts from step `refinement_from_step` on (stage II), discriminability alone before it
    # (stage I); 0 counts both from the start, as RefCritic's dual reward does.
    refinement_weight: float = 0.0
    refinement_from_step: int = 0
    refinement_max_new_tokens: int = 512
    refinement_temperature: float = 0.0
    refinement_batch_size: int = 16
    # the policy that revises: the model being trained (no URLs), or one served elsewhere
    # (its served model name and one URL per OpenAI-compatible server)
    refinement_model: str | None = None
    refinement_base_urls: list[str] = field(default_factory=list)
    refinement_concurrency: int = 16
    refinement_timeout_s: float = 600.0


@dataclass
class PoiseSettings:
    """The POISE probe (`mmcritic.train.poise`): its size and how it is trained online."""

    # width of the probe's one hidden layer (its input: twice the model's width plus 4)
    hidden_size: int = 256
    learning_rate: float = 1e-3
    # full-batch Adam steps on the squared error after each rollout batch
    updates: int = 4
    # the rollout batches it trains on: the current one and the ones just before it
    buffer_batches: int = 4


@dataclass
class CritiqueGRPOSettings:
    """Critique-GRPO (`mmcritic.train.critique_grpo`): each prompt's group holds its sampled
    answers and one critique-guided refinement of them, learnt from together."""

    enabled: bool = False
    # who critiques each sampled answer: "reference", the official run's rule-based critique
    # from the row's reference answer ("simple_gt"); "self", the policy with the critique
    # prompt, frozen for the step (the paper's self-critiquing)
    critic: Literal["reference", "self"] = "reference"
    # the shaping f(p) = p / (p + gamma) on the refinement's tokens (the paper's 0.1)
    shaping_gamma: float = 0.1
    max_new_tokens: int = 512
    # revisions (and self critiques) greedy at 0
    temperature: float = 0.0
    batch_size: int = 16


@dataclass
class GRPOSettings:
    # R1: n = 8 rollouts per prompt, temperature 1.0, top_p 0.99, responses up to 2,048 tokens.
    num_generations: int = 8
    temperature: float = 1.0
    top_p: float = 0.99
    max_completion_length: int = 2048
    # KL loss with the low-variance k3 estimator (TRL's), coefficient 1e-2.
    beta: float = 0.01
    # Clip-higher: ratio clipped to [1 - 0.2, 1 + 0.3]; dual clip at 3.0 for negative advantages.
    epsilon: float = 0.2
    epsilon_high: float = 0.3
    delta: float | None = 3.0
    # Token-level mean over the accumulated batch ("dapo"), one PPO epoch.
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"] = "dapo"
    # An entropy bonus (TRL's entropy_coef: the loss minus coef x the mean per-token entropy),
    # which keeps a critic from growing so sure of a verdict that its rollouts all agree and
    # a wrong verdict can no longer be unlearnt; 0 (R1) adds none.
    entropy_coef: float = 0.0
    # The policy loss and the bonus only on the highest-entropy share of completion tokens
    # (TRL's top_entropy_quantile, "Beyond the 80/20 Rule"): for a critic, the verdict and the
    # few tokens it hangs on rather than the words it copies; 1.0 (R1) keeps every token.
    top_entropy_quantile: float = 1.0
    num_iterations: int = 1
    scale_rewards: Literal["group", "batch", "none"] = "group"
    # What each rollout's reward is compared with: "group", GRPO's mean over the prompt's
    # rollouts; "poise", a probe's prediction of the prompt's expected reward from the policy's
    # own hidden states and token entropies over the prompt's other rollouts (POISE,
    # `mmcritic.train.poise`). POISE gives every rollout an advantage, also where a prompt's
    # rollouts all score alike, and works from two rollouts a prompt; it takes scale_rewards
    # batch or none.
    baseline: Literal["group", "poise"] = "group"
    poise: PoiseSettings = field(default_factory=PoiseSettings)
    # Critique-GRPO: the last rollout of each group replaced by a critique-guided refinement of
    # the group's answers, its tokens trained with a shaped objective (`critique_grpo`)
    critique_grpo: CritiqueGRPOSettings = field(default_factory=CritiqueGRPOSettings)
    # Rollout steps per generation: R1 makes 2 optimizer steps per rollout batch.
    steps_per_generation: int | None = None
    # Drop prompt groups whose rewards are all equal (no learning signal) and refill the batch.
    dynamic_sampling: bool = False
    dynamic_sampling_max_rounds: int = 4
    # Equal numbers of "response 1 is right" and "response 2 is right" prompts in every rollout
    # batch, so early steps do not push the policy toward one index (it can collapse there).
    balance_positions: bool = True
    # Run each prompt once per group in the log-prob and loss passes, its completions attending
    # to it through a block mask (Prefix Grouper, `mmcritic.train.shared_prefix`): the same
    # log-probs and gradients for a fraction of the work when prompts are long beside the
    # completions. Used only where it pays and the attention takes a 4-D mask (sdpa, eager).
    shared_prefix: bool = True
    # Each pair and its swapped copy in the same rollout batch (the copies are made from the
    # records' prompts, `mmcritic.data.pairs`), so every step shows both orders of every pair.
    both_orders: bool = False
    # The baseline of a pair's rollouts over both its orders (`mmcritic.train.pair_baseline`):
    # a critic that leans to one position then still has a gradient (its orders disagree)
    # where each order alone scores the same in every rollout. Needs both_orders.
    pair_baseline: bool = False
    # A logged warning when at least 95% of prompt groups have no reward spread (no gradient)
    # for this many steps in a row; the fraction is logged every step as frac_reward_zero_std.
    stall_steps: int = 10
    # Rollouts per generation call (default: the whole rollout batch, per device x steps per
    # generation); smaller bounds generation memory.
    generation_batch_size: int | None = None
    # Gather ZeRO-3 shards for HF generation (fast, needs the whole model on each GPU); false
    # generates layer by layer from shards (slow, for models that do not fit).
    ds3_gather_for_generation: bool = True
    # transformers' continuous batching (paged attention) instead of generate() for HF
    # rollouts (TRL's use_transformers_paged, under its current name).
    use_transformers_continuous_batching: bool = False
    # vLLM rollouts through TRL (GPU only; `pip install mmcritic[vllm]`): "colocate" runs vLLM
    # inside the training processes, sharing their GPUs; "server" uses a `trl vllm-serve`
    # process on other GPUs. Media placeholders are kept out of samples by vLLM's logit bias.
    use_vllm: bool = False
    vllm_mode: Literal["colocate", "server"] = "colocate"
    # Share of each GPU vLLM takes for weights and KV cache in colocate mode.
    vllm_gpu_memory_utilization: float = 0.4
    # GPUs one vLLM engine spans in colocate mode (must divide the processes per node).
    vllm_tensor_parallel_size: int = 1
    # vLLM's context (prompt + completion); default the model's, which reserves KV cache for
    # 128k tokens on Qwen2.5-VL: set it to max_prompt_tokens + max_completion_length.
    vllm_max_model_length: int | None = None
    # Free vLLM's weights and KV cache while the model trains, and reload them to generate.
    vllm_enable_sleep_mode: bool = False
    # Reweight the loss by pi_train / pi_vllm (importance sampling), correcting for the gap
    # between the two engines' log-probs; ratios outside [clip_min, clip_max] are masked
    # ("*_mask") or clipped ("*_truncate"), per sequence or per token, as TRL names them.
    vllm_importance_sampling_correction: bool = True
    vllm_importance_sampling_mode: Literal[
        "sequence_mask", "sequence_truncate", "token_mask", "token_truncate"
    ] = "sequence_mask"
    vllm_importance_sampling_clip_min: float | None = None
    vllm_importance_sampling_clip_max: float | None = 3.0
    vllm_server_host: str = "127.0.0.1"
    vllm_server_port: int = 8000


@dataclass
class SFTSettings:
    # Rationale plus boxed verdict, the LLaVA-Critic way; the loss covers the answer only.
    max_length: int | None = 8192
    # "rationale": imitate the rationale and the true verdict. "format": for pairwise records an
    # empty think block and each verdict once, which teaches the output format and nothing of the
    # answers (a warm start for a model that cannot yet produce the format at all); other records
    # keep their rationale and answer. "answer_first": as "format", with the think block holding
    # the model's own answer to the pair's question (`meta.own_answer`, written by
    # `mmcritic.inference.questions.with_own_answers` before the warm start): the critic learns
    # to answer the question itself before it judges, from no label. "answer_match": as
    # "answer_first", the think block adding which response states that answer, read from the
    # response texts ("Response 2 says red."), still no label. "own_verdict": as
    # "answer_match", with the one verdict that think names (both verdicts where it names none):
    # the model's own judgement by its own answer, still no label. Critique records under
    # "format": the critiqued answer restated in the think block and each verdict ("correct",
    # "incorrect") once.
    target: Literal["rationale", "format", "answer_first", "answer_match", "own_verdict"] = (
        "rationale"
    )
    # Pack several examples into one sequence of max_length (fewer pad tokens per step);
    # padding_free concatenates a batch without padding (needs flash-attention).
    packing: bool = False
    padding_free: bool = False


@dataclass
class OptimSettings:
    # R1: AdamW, lr 1e-6, weight decay 1e-2, constant schedule, no warm-up, grad-norm clip 1.0.
    learning_rate: float = 1e-6
    weight_decay: float = 0.01
    lr_scheduler_type: Literal["constant", "linear", "cosine"] = "constant"
    warmup_ratio: float = 0.0
    max_grad_norm: float = 1.0
    # Completions per device per micro-step; with GRPO it must be a multiple of num_generations
    # across the whole generation batch.
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 1


@dataclass
class Recipe:
    output_dir: str = ""
    max_steps: int = 0
    stage: Literal["grpo", "sft"] = "grpo"
    seed: int = 42
    # auto: continue from the newest checkpoint in output_dir if there is one; never: start
    # fresh; anything else is a checkpoint path.
    resume: str = "auto"
    # a fresh start into an output_dir that holds an earlier run's checkpoints or logs is refused
    # (a later resume: auto would take up the old run); true deletes them first
    overwrite: bool = False
    # R1 checkpoints every 10 steps: late checkpoints can be worse policies, so keep them.
    save_steps: int = 10
    save_total_limit: int | None = None
    logging_steps: int = 1
    report_to: list[str] = field(default_factory=lambda: ["tensorboard"])
    device: Literal["auto", "cpu", "cuda"] = "auto"
    # CPU threads torch uses (default: OMP_NUM_THREADS, else the cores this process may run
    # on); on a machine shared with other jobs, the cores that are actually free.
    cpu_threads: int | None = None
    model: ModelSettings = field(default_factory=ModelSettings)
    data: DataSettings = field(default_factory=DataSettings)
    rewards: RewardSettings = field(default_factory=RewardSettings)
    grpo: GRPOSettings = field(default_factory=GRPOSettings)
    sft: SFTSettings = field(default_factory=SFTSettings)
    optim: OptimSettings = field(default_factory=OptimSettings)

    def problems(self) -> list[str]:
        """Required fields and cross-field checks, each saying what to set instead. Each field on
        its own is already typed and within its `FIELD_RANGES` bound (`load_recipe`), so these
        checks may divide by counts and compare numbers without meeting zero or NaN."""
        found = self.missing()
        if self.overwrite and self.resume != "never":
            found.append(
                "overwrite: true deletes an earlier run to start afresh: set resume: never"
            )
        found += self._critic_problems()
        if self.rewards.consistency_weight and not self.grpo.both_orders:
            found.append(
                "rewards.consistency_weight needs grpo.both_orders: true (the consistency reward "
                "compares each prompt with its swapped copy in the same batch)"
            )
        if self.grpo.pair_baseline and not self.grpo.both_orders:
            found.append(
                "grpo.pair_baseline needs grpo.both_orders: true (the baseline is taken over a "
                "pair's rollouts in both orders, in the same batch)"
            )
        if self.grpo.pair_baseline and self.grpo.dynamic_sampling:
            found.append(
                "grpo.pair_baseline and grpo.dynamic_sampling cannot be combined: dynamic "
                "sampling keeps or drops each order's group alone and would split pairs"
            )
        found += self._baseline_problems()
        found += self._critique_grpo_problems()
        found += self._self_generation_problems()
        rollout_rows = self.optim.per_device_train_batch_size * (
            self.grpo.steps_per_generation or self.optim.gradient_accumulation_steps
        )
        if self.grpo.both_orders and rollout_rows % (2 * self.grpo.num_generations):
            found.append(
                f"with grpo.both_orders, optim.per_device_train_batch_size x steps per generation "
                f"({_excerpt(rollout_rows)}) must be a multiple of 2 x grpo.num_generations "
                f"({_excerpt(2 * self.grpo.num_generations)}), so both orders of a pair share a "
                "batch"
            )
        if self.grpo.delta is not None and self.grpo.delta <= 1 + self.grpo.epsilon_high:
            found.append(
                f"grpo.delta ({_excerpt(self.grpo.delta)}) must exceed 1 + grpo.epsilon_high "
                f"({_excerpt(1 + self.grpo.epsilon_high)}); set it higher or null"
            )
        if self.data.min_pixels > self.data.max_pixels:
            found.append("data.min_pixels must not exceed data.max_pixels")
        if self.grpo.use_vllm and self.device == "cpu":
            found.append("grpo.use_vllm needs a GPU; set device: cuda or grpo.use_vllm: false")
        found += self._importance_sampling_problems()
        return found + self._resume_problems()

    def _baseline_problems(self) -> list[str]:
        """POISE replaces the group baseline: settings that shape or filter groups by their
        spread do not combine with it."""
        if self.grpo.baseline != "poise":
            return []
        found = []
        if self.grpo.scale_rewards == "group":
            found.append(
                "grpo.baseline: poise needs grpo.scale_rewards: batch or none (a group's spread "
                "over a few rollouts is often 0, and POISE gives those groups an advantage)"
            )
        for name in ("pair_baseline", "dynamic_sampling"):
            if getattr(self.grpo, name):
                found.append(
                    f"grpo.baseline: poise and grpo.{name} cannot be combined: POISE gives "
                    "every rollout its baseline from the probe, not from its group's rewards"
                )
        return found

    def _critique_grpo_problems(self) -> list[str]:
        """Critique-GRPO puts a refinement in each group's last slot and trains its tokens
        with its own term: what that needs of the rest of the recipe."""
        grpo = self.grpo
        if not grpo.critique_grpo.enabled:
            return []
        found = []
        if grpo.loss_type != "dapo":
            found.append(
                "grpo.critique_grpo needs grpo.loss_type: dapo (the refinement's term is "
                "normalised as the token-level loss of the rest of the batch)"
            )
        if grpo.use_vllm:
            found.append(
                "grpo.critique_grpo refines with the trainer's own generation; vLLM rollouts "
                "would score the refinement with vLLM log-probs of another answer: set "
                "grpo.use_vllm: false"
            )
        if grpo.num_generations < 3:
            found.append(
                "grpo.critique_grpo needs grpo.num_generations >= 3: two sampled answers and "
                "the refinement in each group"
            )
        rows = self.optim.per_device_train_batch_size * (
            grpo.steps_per_generation or self.optim.gradient_accumulation_steps
        )
        if rows % grpo.num_generations:
            found.append(
                f"grpo.critique_grpo refines within each process's groups: optim."
                f"per_device_train_batch_size x steps per generation ({_excerpt(rows)}) must be "
                f"a multiple of grpo.num_generations ({_excerpt(grpo.num_generations)})"
            )
        if grpo.dynamic_sampling or grpo.both_orders or grpo.baseline != "group":
            found.append(
                "grpo.critique_grpo takes the group baseline over answers and refinement: "
                "without grpo.dynamic_sampling, grpo.both_orders or grpo.baseline: poise"
            )
        return found

    def _self_generation_problems(self) -> list[str]:
        """Critiques, revisions and self-judgements are generated by each rank on its own,
        with the whole model gathered (`frozen_model`): from ZeRO-3 shards, generation would run
        layer by layer in step with the other ranks, which these uneven calls never are."""
        rewards = self.rewards
        users = [
            name
            for name, used in (
                ("grpo.critique_grpo", self.grpo.critique_grpo.enabled),
                ("rewards.critic_model: self", rewards.critic_model == "self"),
                (
                    "the refinement reward with the policy itself",
                    rewards.refinement_weight > 0 and not rewards.refinement_base_urls,
                ),
            )
            if used
        ]
        if users and not self.grpo.ds3_gather_for_generation:
            return [
                f"{', '.join(users)} generate with the model being trained on each process "
                "alone, which needs the whole model: set grpo.ds3_gather_for_generation: true"
            ]
        return []

    def missing(self) -> list[str]:
        """Required fields left empty: named even when other values are rejected, since they do
        not depend on them."""
        found = []
        if not self.output_dir:
            found.append("output_dir is required")
        if not self.model.name_or_path:
            found.append("model.name_or_path is required")
        if not self.data.train:
            found.append("data.train is required (a dataset folder from preprocess or synth)")
        return found

    def _importance_sampling_problems(self) -> list[str]:
        """vLLM reports each sampled token's log-prob after top-p truncation (renormalised over
        the nucleus); the trainer's are over the whole vocabulary. With top_p < 1 every
        importance ratio would fall by the nucleus mass at its token, and a sequence-level ratio
        by their product over up to thousands of tokens: the correction would mask or shrink
        sequences for the truncation, not for any gap between the engines."""
        grpo = self.grpo
        if not (grpo.use_vllm and grpo.vllm_importance_sampling_correction and grpo.top_p < 1):
            return []
        return [
            f"grpo.vllm_importance_sampling_correction compares the trainer's log-probs with "
            f"vLLM's, which are taken after top-p truncation: with grpo.top_p "
            f"({_excerpt(grpo.top_p)}) below 1 every ratio is biased below 1; set grpo.top_p: "
            "1.0, or grpo.vllm_importance_sampling_correction: false"
        ]

    def _critic_problems(self) -> list[str]:
        rewards, found = self.rewards, []
        if bool(rewards.critic_model) != bool(rewards.critic_weight):
            found.append(
                "rewards.critic_model and rewards.critic_weight go together: a critic reward "
                "needs both a critic (a checkpoint or self) and a weight above 0"
            )
        if rewards.critic_process and rewards.critic_model == "self":
            found.append(
                "rewards.critic_process serves a checkpoint; the policy judging itself (self) "
                "runs in the training process"
            )
        if (rewards.critic_engine == "openai") != bool(rewards.critic_base_urls):
            found.append(
                "rewards.critic_engine: openai and rewards.critic_base_urls go together: a "
                "served critic needs the URL of each server"
            )
        if rewards.critic_engine == "openai" and (
            rewards.critic_process or rewards.critic_model == "self"
        ):
            found.append(
                "rewards.critic_engine: openai serves the critic elsewhere; it takes neither "
                "critic_process nor critic_model: self"
            )
        if rewards.critic_model and self.stage != "grpo":
            found.append("a critic reward rewards GRPO rollouts: stage must be grpo")
        return found

    def _resume_problems(self) -> list[str]:
        """Checkpoints must fall where a resumed run can continue exactly: on a logging step
        (logged values are averages since the last log) and, for GRPO, where a new rollout
        batch begins (the rollouts of a half-used batch are not in the checkpoint)."""
        found = []
        save, log = _excerpt(self.save_steps), _excerpt(self.logging_steps)
        if self.save_steps % self.logging_steps:
            found.append(
                f"save_steps ({save}) must be a multiple of logging_steps ({log}), so a resumed "
                "run logs the same averages"
            )
        accumulation = self.optim.gradient_accumulation_steps
        per_rollout = (self.grpo.steps_per_generation or accumulation) * self.grpo.num_iterations
        if self.stage == "grpo" and (self.save_steps * accumulation) % per_rollout:
            found.append(
                f"save_steps ({save}) x optim.gradient_accumulation_steps "
                f"({_excerpt(accumulation)}) must be a multiple of grpo.steps_per_generation x "
                f"grpo.num_iterations ({_excerpt(per_rollout)}): a checkpoint must fall where a "
                "new rollout batch begins"
            )
        return found


@dataclass(frozen=True)
class Bound:
    """The values a numeric field takes: finite, and from `low` to `high`, an end excluded where
    it is open. Finite because NaN passes every `x < 0` test unnoticed (a NaN max_grad_norm turns
    clipping off, a NaN reward weight drops its reward) and infinity passes most. `note` says why
    the bound lies where it does, or what a boundary value means."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    note: str = ""

    def admits(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def describe(self, value: float) -> str:
        """What the field takes, e.g. "a finite number in (0, 1]", "an integer >= 1"."""
        kind = "an integer" if isinstance(value, int) else "a finite number"
        if self.high < math.inf:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            kind += f" in {left}{self.low}, {self.high}{right}"
        elif self.low > -math.inf:
            kind += f" {'>' if self.low_open else '>='} {self.low}"
        return kind + (f" ({self.note})" if self.note else "")


_COUNT = Bound(1)
_POSITIVE = Bound(0, low_open=True)
_WEIGHT = Bound(0, note="0: off")

# Every int and float field of a recipe, by its dotted key; a numeric field missing here fails
# tests/test_recipe_bounds.py. A null, where a field takes one, is not checked against its bound.
FIELD_RANGES: dict[str, Bound] = {
    "max_steps": _COUNT,
    "seed": Bound(0, 2**32 - 1, note="numpy takes seeds below 2**32"),
    "save_steps": _COUNT,
    "save_total_limit": Bound(1, note="null keeps every checkpoint"),
    "logging_steps": _COUNT,
    "cpu_threads": Bound(1, note="null: the free cores"),
    "model.lora.r": _COUNT,
    "model.lora.alpha": _COUNT,
    "model.lora.dropout": Bound(0, 1, high_open=True, note="1 would zero every adapter input"),
    "data.eval_every": Bound(0, note="0: before and after training only"),
    "data.min_pixels": _COUNT,
    "data.max_pixels": _COUNT,
    "data.video.fps": _POSITIVE,
    "data.video.min_frames": Bound(FRAME_FACTOR, note="frames enter the model in pairs"),
    "data.video.max_frames": Bound(FRAME_FACTOR, note="frames enter the model in pairs"),
    "data.video.min_pixels": _COUNT,
    "data.video.max_pixels": _COUNT,
    "data.video.total_pixels": _COUNT,
    "data.max_prompt_tokens": _COUNT,
    "data.dataloader_num_workers": Bound(0, note="0: in the training process"),
    "rewards.format_weight": Bound(0, 1, note="total = (1 - w) x correctness + w x format"),
    "rewards.correctness_weight": Bound(0, note="null: 1 - format_weight"),
    "rewards.consistency_weight": _WEIGHT,
    "rewards.critic_weight": _WEIGHT,
    "rewards.critic_concurrency": _COUNT,
    "rewards.critic_timeout_s": _POSITIVE,
    "rewards.critic_max_new_tokens": _COUNT,
    "rewards.critic_batch_size": _COUNT,
    "rewards.refinement_weight": _WEIGHT,
    "rewards.refinement_from_step": Bound(0, note="0: helpfulness from the first step"),
    "rewards.refinement_max_new_tokens": _COUNT,
    "rewards.refinement_temperature": Bound(0, note="0: greedy revisions"),
    "rewards.refinement_batch_size": _COUNT,
    "rewards.refinement_concurrency": _COUNT,
    "rewards.refinement_timeout_s": _POSITIVE,
    "grpo.num_generations": Bound(2, note="advantages compare the rollouts of a group"),
    "grpo.temperature": Bound(0, low_open=True, note="TRL divides the logits by it"),
    "grpo.top_p": Bound(0, 1, low_open=True),
    "grpo.max_completion_length": _COUNT,
    "grpo.beta": Bound(0, note="0: no KL term"),
    "grpo.epsilon": Bound(0, 1, note="the ratio's lower clip is 1 - epsilon"),
    "grpo.epsilon_high": Bound(0),
    "grpo.delta": Bound(1, low_open=True, note="a ratio bound above 1 + epsilon_high; null: off"),
    "grpo.entropy_coef": Bound(0, note="0: no entropy bonus"),
    "grpo.top_entropy_quantile": Bound(0, 1, note="1: every completion token"),
    "grpo.num_iterations": _COUNT,
    "grpo.steps_per_generation": Bound(1, note="null: optim.gradient_accumulation_steps"),
    "grpo.dynamic_sampling_max_rounds": _COUNT,
    "grpo.critique_grpo.shaping_gamma": Bound(0, low_open=True, note="f(p) = p / (p + gamma)"),
    "grpo.critique_grpo.max_new_tokens": _COUNT,
    "grpo.critique_grpo.temperature": Bound(0, note="0: greedy"),
    "grpo.critique_grpo.batch_size": _COUNT,
    "grpo.poise.hidden_size": _COUNT,
    "grpo.poise.learning_rate": Bound(0, low_open=True),
    "grpo.poise.updates": _COUNT,
    "grpo.poise.buffer_batches": _COUNT,
    "grpo.stall_steps": _COUNT,
    "grpo.generation_batch_size": Bound(1, note="null: the whole rollout batch"),
    "grpo.vllm_gpu_memory_utilization": Bound(0, 1, low_open=True),
    "grpo.vllm_tensor_parallel_size": _COUNT,
    "grpo.vllm_max_model_length": Bound(1, note="null: the model's"),
    "grpo.vllm_importance_sampling_clip_min": Bound(0, note="null: no lower bound"),
    "grpo.vllm_importance_sampling_clip_max": Bound(0, low_open=True, note="null: no upper bound"),
    "grpo.vllm_server_port": Bound(1, 65535),
    "sft.max_length": Bound(1, note="null: no limit"),
    "optim.learning_rate": Bound(0, note="0: the weights stay, a run that checks the rest"),
    "optim.weight_decay": Bound(0),
    # passed as transformers' warmup_steps, which reads a value of 1 or more as a step count
    "optim.warmup_ratio": Bound(0, 1, high_open=True, note="a share of max_steps"),
    "optim.max_grad_norm": Bound(0, note="0: no clipping, as in transformers"),
    "optim.per_device_train_batch_size": _COUNT,
    "optim.gradient_accumulation_steps": _COUNT,
}

# Recipes may build on recipes that build on others, this many levels deep.
MAX_BASE_DEPTH = 16
# Recipes nest three levels; far deeper YAML would exhaust PyYAML's recursive composer.
_MAX_NESTING = 32
_EXCERPT_CHARS = 200


def load_recipe(path: str | Path | None, overrides: list[str] | None = None) -> Recipe:
    """Reads a recipe YAML (and the recipe its `base:` names, relative to it), applies
    `a.b=value` overrides, and validates the result."""
    raw = _read_recipe(Path(path), ()) if path is not None else {}
    for override in overrides or []:
        _apply_override(raw, override)
    errors: list[str] = []
    recipe = _build(Recipe, raw, "", errors)
    # A rejected value leaves its field at the default: required fields can still be named, but
    # cross-field checks would judge defaults the recipe never chose.
    errors += recipe.problems() if not errors else recipe.missing()
    if errors:
        source = f" {_clip(str(path))}" if path else ""
        blamed = [_blamed(error, overrides or []) for error in errors]
        raise RecipeError(f"invalid recipe{source}:\n  - " + "\n  - ".join(blamed))
    return recipe


def _blamed(error: str, overrides: list[str]) -> str:
    """An error about a key an override set, marked as such, so a mistyped command-line value
    is not looked for in the recipe file."""
    for override in reversed(overrides):
        key = override.partition("=")[0].strip()
        if key and re.match(rf"(?:unknown key )?{re.escape(key)}\b(?![.\w])", error):
            return f"{error} (set by an override, not in the recipe file)"
    return error


def _read_recipe(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    """A recipe's keys over those of its `base:` recipe, section by section, so a variant states
    only what it changes (`base: llava_critic_r1_qwen2_5_vl_7b.yaml` + a new model and rate)."""
    here = path.resolve()
    if here in seen:
        raise RecipeError(f"recipes include each other in a circle: {_chain(*seen, here)}")
    if len(seen) > MAX_BASE_DEPTH:
        raise RecipeError(
            f"a recipe builds on at most {MAX_BASE_DEPTH} base: recipes in a chain; this chain "
            f"goes on: {_chain(*seen, here)}"
        )
    raw = _read_mapping(path)
    base = raw.pop("base", None)
    if base is None:
        return raw
    if not isinstance(base, str) or not base or "\0" in base:
        raise RecipeError(f"{_clip(str(path))}: base names a recipe file, got {_excerpt(base)}")
    return _merged(_read_recipe(path.parent / base, (*seen, here)), raw)


def _chain(*paths: Path) -> str:
    return " -> ".join(_clip(str(p)) for p in paths)


def _read_mapping(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecipeError(f"recipe not found: {_clip(str(path))}") from None
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) else "not UTF-8 text"
        raise RecipeError(f"cannot read recipe {_clip(str(path))}: {reason}") from err
    loaded = _parse_yaml(text, _clip(str(path)))
    if loaded is not None and not isinstance(loaded, dict):
        raise RecipeError(
            f"{_clip(str(path))}: a recipe is a mapping of keys, got {type(loaded).__name__}"
        )
    return dict(loaded or {})


class _RecipeLoader(yaml.SafeLoader):
    """PyYAML's safe loader without anchors and aliases, and at most `_MAX_NESTING` levels deep.

    An alias repeats a value without copying it, so ten lines of aliases of aliases stand for a
    billion items, which any walk over the value (a type check, an error message) would visit. A
    recipe states each value where it is used, so refusing them costs nothing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if event.anchor is not None:
            raise yaml.MarkedYAMLError(
                problem="recipes do not take YAML anchors or aliases (&name, *name); write "
                "the value out where it is used",
                problem_mark=event.start_mark,
            )
        if self._depth >= _MAX_NESTING:
            raise yaml.MarkedYAMLError(
                problem=f"values nest more than {_MAX_NESTING} levels deep",
                problem_mark=event.start_mark,
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _parse_yaml(text: str, source: str) -> Any:
    """`text` as plain data, or a RecipeError naming `source` and the line at fault."""
    loader = _RecipeLoader(text)
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = f", line {mark.line + 1}" if mark else ""
        raise RecipeError(f"{source}{line}: {_clip(err.problem or str(err))}") from err
    except (yaml.YAMLError, ValueError) as err:
        # ValueError: a value Python cannot make (an int over 4,300 digits, a 30th of February)
        raise RecipeError(f"{source}: {_clip(str(err))}") from err
    finally:
        loader.dispose()


def _merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        both = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _merged(merged[key], value) if both else value
    return merged


def _apply_override(raw: dict[str, Any], override: str) -> None:
    key, sep, value = override.partition("=")
    if not sep or not key:
        raise RecipeError(
            f"an override is key=value, e.g. optim.learning_rate=5e-7; got {_excerpt(override)}"
        )
    node = raw
    parts = key.strip().split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise RecipeError(f"override {_excerpt(override)}: {_clip(part)} is not a section")
    source = f"override {_excerpt(override)}"
    node[parts[-1]] = _parse_yaml(value, source) if value.strip() else ""


def _build(cls: type, raw: Any, prefix: str, errors: list[str]) -> Any:
    """A `cls` settings object from its mapping in the recipe. A rejected value is named in
    `errors` and its field left at the default, so the object is still well-typed."""
    section = prefix.rstrip(".") or "recipe"
    if not isinstance(raw, dict):
        errors.append(f"{section} must be a mapping, got {_excerpt(raw)}")
        return cls()
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    errors += _unknown_keys(raw, names, prefix)
    values = {}
    for name in names:
        if name not in raw:
            continue
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            values[name] = _build(hint, raw[name], f"{prefix}{name}.", errors)
            continue
        value = _coerced(raw[name], hint)
        problem = _value_problem(value, hint, prefix + name)
        if problem:
            errors.append(problem)
        else:
            values[name] = value
    try:
        return cls(**values)
    except ValueError as err:  # a settings class's own cross-field check (VideoBudget's frames)
        errors.append(f"{section}: {err}")
        return cls()


def _unknown_keys(raw: dict[Any, Any], names: list[str], prefix: str) -> list[str]:
    found = []
    for key in raw:
        if key in names:
            continue
        # a key over three times a name's length cannot reach the 0.5 cutoff: match its start
        close = difflib.get_close_matches(str(key)[:_EXCERPT_CHARS], names, n=1, cutoff=0.5)
        hint = f"; did you mean {prefix}{close[0]}?" if close else ""
        found.append(f"unknown key {_clip(f'{prefix}{key}')}{hint} (valid: {', '.join(names)})")
    return found


def _coerced(value: Any, hint: Any) -> Any:
    """A float field takes the number meant: YAML 1.1 reads `1e-6` (no dot) and `nan` as
    strings, and `1` as an int (one too large for a float becomes infinity, then refused)."""
    if not _wants_float(hint) or isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return value


def _value_problem(value: Any, hint: Any, key: str) -> str | None:
    if not _matches(value, hint):
        return f"{key} = {_excerpt(value)} is not {_describe(hint)}"
    bound = FIELD_RANGES.get(key)
    if value is None or bound is None or bound.admits(value):
        return None
    return f"{key} = {_excerpt(value)} must be {bound.describe(value)}"


def _short_repr() -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxlevel = 3
    short.maxdict = short.maxlist = short.maxtuple = short.maxset = 8
    short.maxstring = short.maxother = _EXCERPT_CHARS
    return short


_SHORT_REPR = _short_repr()


def _excerpt(value: Any) -> str:
    """`repr(value)` cut short: a megabyte string or a billion-item list costs an error message
    at most `_EXCERPT_CHARS` characters and a few dozen items' work."""
    return _clip(_SHORT_REPR.repr(value))


def _clip(text: str) -> str:
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 3] + "..."


def _matches(value: Any, hint: Any) -> bool:
    origin = get_origin(hint)
    if origin is Literal:
        return value in get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, option) for option in get_args(hint))
    if origin is list:
        (item,) = get_args(hint)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _wants_float(hint: Any) -> bool:
    return hint is float or float in get_args(hint)


def _describe(hint: Any) -> str:
    origin = get_origin(hint)
    if origin is Literal:
        return "one of " + ", ".join(repr(v) for v in get_args(hint))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(option) for option in get_args(hint))
    if origin is list:
        return f"a list of {_describe(get_args(hint)[0])}"
    return "null" if hint is type(None) else _TYPE_NAMES.get(hint, f"a {hint}")


_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def recipe_to_dict(recipe: Recipe) -> dict[str, Any]:
    """The resolved recipe, as written into the run folder."""
    return dataclasses.asdict(recipe)
