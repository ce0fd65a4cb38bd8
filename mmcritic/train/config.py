"""Training recipes: typed, nested, validated; YAML first, then dotted `key=value` overrides.

A recipe is the whole run on one page. Every field is declared here with the reason for its
default; a misspelt key is an error naming the nearest valid key, and every problem in a recipe is
reported at once, so a 7B run does not die at minute twenty over a typo.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml

from mmcritic.data.convert import BuildOptions
from mmcritic.data.media import MediaBudget, PixelBudget
from mmcritic.data.video import VideoBudget


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
    num_iterations: int = 1
    scale_rewards: Literal["group", "batch", "none"] = "group"
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
    # keep their rationale and answer.
    target: Literal["rationale", "format"] = "rationale"
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
        """Cross-field checks, each saying what to set instead."""
        found = []
        if not self.output_dir:
            found.append("output_dir is required")
        if self.max_steps <= 0:
            found.append(f"max_steps must be positive, got {self.max_steps}")
        if not self.model.name_or_path:
            found.append("model.name_or_path is required")
        if not self.data.train:
            found.append("data.train is required (a dataset folder from preprocess or synth)")
        if not 0.0 <= self.rewards.format_weight <= 1.0:
            found.append(
                f"rewards.format_weight must be in [0, 1], got {self.rewards.format_weight}"
            )
        if self.rewards.consistency_weight < 0:
            found.append("rewards.consistency_weight must be >= 0")
        found += self._critic_problems()
        if self.rewards.consistency_weight and not self.grpo.both_orders:
            found.append(
                "rewards.consistency_weight needs grpo.both_orders: true (the consistency reward "
                "compares each prompt with its swapped copy in the same batch)"
            )
        rollout_rows = self.optim.per_device_train_batch_size * (
            self.grpo.steps_per_generation or self.optim.gradient_accumulation_steps
        )
        if self.grpo.both_orders and rollout_rows % (2 * self.grpo.num_generations):
            found.append(
                f"with grpo.both_orders, optim.per_device_train_batch_size x steps per generation "
                f"({rollout_rows}) must be a multiple of 2 x grpo.num_generations "
                f"({2 * self.grpo.num_generations}), so both orders of a pair share a batch"
            )
        if self.grpo.num_generations < 2:
            found.append("grpo.num_generations must be at least 2: advantages compare a group")
        if self.grpo.delta is not None and self.grpo.delta <= 1 + self.grpo.epsilon_high:
            found.append(
                f"grpo.delta ({self.grpo.delta}) must exceed 1 + grpo.epsilon_high "
                f"({1 + self.grpo.epsilon_high}); set it higher or null"
            )
        if not 0.0 <= self.optim.warmup_ratio < 1.0:
            found.append(f"optim.warmup_ratio must be in [0, 1), got {self.optim.warmup_ratio}")
        if self.data.eval_every < 0:
            found.append("data.eval_every must be >= 0")
        if self.data.min_pixels > self.data.max_pixels:
            found.append("data.min_pixels must not exceed data.max_pixels")
        if self.grpo.use_vllm and self.device == "cpu":
            found.append("grpo.use_vllm needs a GPU; set device: cuda or grpo.use_vllm: false")
        found += self._importance_sampling_problems()
        if self.grpo.vllm_tensor_parallel_size < 1:
            found.append("grpo.vllm_tensor_parallel_size must be at least 1")
        if self.data.dataloader_num_workers < 0:
            found.append("data.dataloader_num_workers must be >= 0")
        return found + self._resume_problems()

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
            f"vLLM's, which are taken after top-p truncation: with grpo.top_p ({grpo.top_p}) "
            "below 1 every ratio is biased below 1; set grpo.top_p: 1.0, or "
            "grpo.vllm_importance_sampling_correction: false"
        ]

    def _critic_problems(self) -> list[str]:
        rewards, found = self.rewards, []
        if rewards.critic_weight < 0 or (rewards.correctness_weight or 0) < 0:
            found.append("rewards.critic_weight and rewards.correctness_weight must be >= 0")
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
        if self.save_steps <= 0 or self.logging_steps <= 0:
            return ["save_steps and logging_steps must be positive"]
        if self.save_steps % self.logging_steps:
            found.append(
                f"save_steps ({self.save_steps}) must be a multiple of logging_steps "
                f"({self.logging_steps}), so a resumed run logs the same averages"
            )
        accumulation = self.optim.gradient_accumulation_steps
        per_rollout = (self.grpo.steps_per_generation or accumulation) * self.grpo.num_iterations
        if self.stage == "grpo" and (self.save_steps * accumulation) % per_rollout:
            found.append(
                f"save_steps ({self.save_steps}) x optim.gradient_accumulation_steps "
                f"({accumulation}) must be a multiple of grpo.steps_per_generation x "
                f"grpo.num_iterations ({per_rollout}): a checkpoint must fall where a new "
                "rollout batch begins"
            )
        return found


def load_recipe(path: str | Path | None, overrides: list[str] | None = None) -> Recipe:
    """Reads a recipe YAML (and the recipe its `base:` names, relative to it), applies
    `a.b=value` overrides, and validates the result."""
    raw = _read_recipe(Path(path), ()) if path is not None else {}
    for override in overrides or []:
        _apply_override(raw, override)
    errors: list[str] = []
    recipe = _build(Recipe, raw, "", errors)
    if not errors:  # cross-field checks need well-typed fields
        errors += recipe.problems()
    if errors:
        source = f" in {path}" if path else ""
        raise RecipeError(f"invalid recipe{source}:\n  - " + "\n  - ".join(errors))
    return recipe


def _read_recipe(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    """A recipe's keys over those of its `base:` recipe, section by section, so a variant states
    only what it changes (`base: llava_critic_r1_qwen2_5_vl_7b.yaml` + a new model and rate)."""
    if path.resolve() in seen:
        chain = " -> ".join(str(p) for p in (*seen, path.resolve()))
        raise RecipeError(f"recipes include each other in a circle: {chain}")
    if not path.is_file():
        raise RecipeError(f"recipe not found: {path}")
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    if loaded is not None and not isinstance(loaded, dict):
        raise RecipeError(f"{path}: a recipe is a mapping of keys, got {type(loaded).__name__}")
    raw = dict(loaded or {})
    base = raw.pop("base", None)
    if base is None:
        return raw
    if not isinstance(base, str):
        raise RecipeError(f"{path}: base names a recipe file, got {base!r}")
    return _merged(_read_recipe(path.parent / base, (*seen, path.resolve())), raw)


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
            f"an override is key=value, e.g. optim.learning_rate=5e-7; got {override!r}"
        )
    node = raw
    parts = key.strip().split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise RecipeError(f"override {override!r}: {part} is not a section")
    node[parts[-1]] = yaml.safe_load(value) if value.strip() else ""


def _build(cls: type, raw: Any, prefix: str, errors: list[str]) -> Any:
    if not isinstance(raw, dict):
        errors.append(f"{prefix or 'recipe'} must be a mapping, got {raw!r}")
        return cls()
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in raw:
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1, cutoff=0.5)
            hint = f"; did you mean {prefix}{close[0]}?" if close else ""
            errors.append(f"unknown key {prefix}{key}{hint} (valid: {', '.join(fields)})")
    values = {}
    for name in fields:
        if name not in raw:
            continue
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            values[name] = _build(hint, raw[name], f"{prefix}{name}.", errors)
        else:
            values[name] = _check_value(raw[name], hint, f"{prefix}{name}", errors)
    return cls(**values)


def _check_value(value: Any, hint: Any, key: str, errors: list[str]) -> Any:
    value = _yaml_float(value) if _wants_float(hint) else value
    if _matches(value, hint):
        return float(value) if _wants_float(hint) and isinstance(value, int) else value
    errors.append(f"{key} = {value!r} is not {_describe(hint)}")
    return value


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


def _yaml_float(value: Any) -> Any:
    """YAML 1.1 reads `1e-6` (no dot) as a string; a float field takes it as the number meant."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


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
    return "null" if hint is type(None) else f"a {getattr(hint, '__name__', hint)}"


def recipe_to_dict(recipe: Recipe) -> dict[str, Any]:
    """The resolved recipe, as written into the run folder."""
    return dataclasses.asdict(recipe)
