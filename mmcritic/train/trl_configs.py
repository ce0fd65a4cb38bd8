"""Recipe -> TRL configuration objects, under TRL's own field names.

Everything a recipe decides about optimisation, generation and logging lands in a `GRPOConfig` or
`SFTConfig` here and nowhere else, so `mmcritic train --dry-run` shows exactly what TRL will run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from mmcritic.train.config import Recipe


def _shared_arguments(recipe: Recipe, device: str, dtype: torch.dtype) -> dict[str, Any]:
    """TrainingArguments fields both stages take."""
    optim = recipe.optim
    return {
        "output_dir": recipe.output_dir,
        "max_steps": recipe.max_steps,
        "seed": recipe.seed,
        "data_seed": recipe.seed,
        "learning_rate": optim.learning_rate,
        "weight_decay": optim.weight_decay,
        "lr_scheduler_type": optim.lr_scheduler_type,
        "warmup_steps": optim.warmup_ratio,
        "max_grad_norm": optim.max_grad_norm,
        "per_device_train_batch_size": optim.per_device_train_batch_size,
        "gradient_accumulation_steps": optim.gradient_accumulation_steps,
        "save_strategy": "steps",
        "save_steps": recipe.save_steps,
        "save_total_limit": recipe.save_total_limit,
        "save_only_model": False,
        "logging_steps": recipe.logging_steps,
        "report_to": recipe.report_to,
        "use_cpu": device == "cpu",
        "bf16": dtype == torch.bfloat16,
        "fp16": dtype == torch.float16,
        "activation_checkpointing": recipe.model.gradient_checkpointing,
        "activation_checkpointing_kwargs": {
            "use_reentrant": recipe.model.gradient_checkpointing_reentrant
        },
        "torch_compile": recipe.model.torch_compile,
        "dataloader_num_workers": recipe.data.dataloader_num_workers,
        "disable_tqdm": False,
    }


def grpo_config(
    recipe: Recipe,
    device: str,
    dtype: torch.dtype,
    vision_token_ids: list[int],
    reward_weights: list[float],
):
    """The `trl.GRPOConfig` a recipe describes; `reward_weights` come with the reward functions
    (`mmcritic.rewards.training_rewards`), one per function."""
    from trl import GRPOConfig

    grpo = recipe.grpo
    return GRPOConfig(
        **_shared_arguments(recipe, device, dtype),
        num_generations=grpo.num_generations,
        temperature=grpo.temperature,
        top_p=grpo.top_p,
        max_completion_length=grpo.max_completion_length,
        beta=grpo.beta,
        epsilon=grpo.epsilon,
        epsilon_high=grpo.epsilon_high,
        delta=grpo.delta,
        loss_type=grpo.loss_type,
        entropy_coef=grpo.entropy_coef,
        top_entropy_quantile=grpo.top_entropy_quantile,
        num_iterations=grpo.num_iterations,
        scale_rewards=grpo.scale_rewards,
        steps_per_generation=grpo.steps_per_generation,
        # each reward is its own function so TRL logs each one
        reward_weights=reward_weights,
        generation_kwargs=_vision_token_ban(vision_token_ids, grpo.use_vllm),
        generation_batch_size=grpo.generation_batch_size,
        ds3_gather_for_generation=grpo.ds3_gather_for_generation,
        use_transformers_continuous_batching=grpo.use_transformers_continuous_batching,
        cast_lm_head_to_fp32=recipe.model.cast_lm_head_to_fp32,
        use_vllm=grpo.use_vllm,
        vllm_mode=grpo.vllm_mode,
        vllm_gpu_memory_utilization=grpo.vllm_gpu_memory_utilization,
        vllm_tensor_parallel_size=grpo.vllm_tensor_parallel_size,
        vllm_max_model_length=grpo.vllm_max_model_length,
        vllm_enable_sleep_mode=grpo.vllm_enable_sleep_mode,
        vllm_importance_sampling_correction=grpo.vllm_importance_sampling_correction,
        vllm_importance_sampling_mode=grpo.vllm_importance_sampling_mode,
        vllm_importance_sampling_clip_min=grpo.vllm_importance_sampling_clip_min,
        vllm_importance_sampling_clip_max=grpo.vllm_importance_sampling_clip_max,
        vllm_server_host=grpo.vllm_server_host,
        vllm_server_port=grpo.vllm_server_port,
        remove_unused_columns=False,
        log_completions=False,
    )


def _vision_token_ban(token_ids: list[int], use_vllm: bool) -> dict[str, Any]:
    """Generation settings that stop the policy from sampling media placeholders: transformers
    takes token ids to suppress, vLLM a logit bias."""
    if not token_ids:
        return {}
    if use_vllm:
        return {"logit_bias": {token_id: -100.0 for token_id in token_ids}}
    return {"suppress_tokens": list(token_ids)}


def sft_config(recipe: Recipe, device: str, dtype: torch.dtype):
    """The `trl.SFTConfig` for the warm start: loss on the assistant answer only."""
    from trl import SFTConfig

    return SFTConfig(
        **_shared_arguments(recipe, device, dtype),
        max_length=recipe.sft.max_length,
        packing=recipe.sft.packing,
        padding_free=recipe.sft.padding_free,
        completion_only_loss=True,
        remove_unused_columns=False,
        dataset_kwargs={"skip_prepare_dataset": True},
    )


def config_as_json(config: Any) -> dict[str, Any]:
    """A TRL config as plain JSON under its own field names."""
    data = config.to_dict()
    return {key: (str(value) if isinstance(value, Path) else value) for key, value in data.items()}
