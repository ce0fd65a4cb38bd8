"""`mmcritic train RECIPE`: one recipe in, one run folder out.

The run folder holds the resolved recipe (`recipe.yaml`), checkpoints every `save_steps`, the
TensorBoard logs, `rejected_train.jsonl` for examples refused before training, the rollout log,
`heldout.json` with preference accuracy before and after, and the final model in `final/`.
`resume: auto` continues from the newest checkpoint exactly as if the run had never stopped
(`mmcritic.train.resume`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from mmcritic.data.dataset import data_kinds, read_records
from mmcritic.data.folder_lock import folder_lock
from mmcritic.data.pairs import with_both_orders
from mmcritic.data.schema import Record
from mmcritic.models.checkpoints import CheckpointMismatchError
from mmcritic.models.devices import set_cpu_threads
from mmcritic.models.families import UnsupportedModelError, family_of_model
from mmcritic.models.loading import (
    check_model,
    freeze_vision_tower,
    load_model,
    load_processor,
    local_tokenizer,
    resolve_attention,
    resolve_device,
    resolve_dtype,
    vision_token_ids,
)
from mmcritic.rewards.critic import RewardWeights, reward_plan, training_rewards
from mmcritic.train.checkpoint_files import checkpoint_problems, disk_full_named
from mmcritic.train.config import Recipe, recipe_to_dict
from mmcritic.train.critic_reward import CriticJudgeReward, CriticProcess, JudgeOptions
from mmcritic.train.examples import (
    TRAIN_REJECTED_FILE,
    filter_by_prompt_length,
    to_dataset,
    write_rejections,
)
from mmcritic.train.grpo_trainer import ROLLOUT_LOG
from mmcritic.train.heldout import HeldoutCallback, heldout_report
from mmcritic.train.model_card import copy_card
from mmcritic.train.progress import use_compact_progress
from mmcritic.train.refinement_reward import RefinementOptions, RefinementReward
from mmcritic.train.resume import trim_rollout_log, use_resumable_tensorboard
from mmcritic.train.trl_configs import config_as_json, grpo_config, sft_config

logger = logging.getLogger(__name__)

CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
HELDOUT_FILE = "heldout.json"
LOG_HISTORY_FILE = "log_history.json"
FINAL_DIR = "final"
# what a run writes besides its checkpoints, cleared when a run starts afresh in the folder
EARLIER_RUN_FILES = (ROLLOUT_LOG, LOG_HISTORY_FILE, FINAL_DIR, "tensorboard")


def newest_checkpoint(output_dir: Path) -> Path | None:
    """The checkpoint with the highest step that is complete (`checkpoint_problems`): newer
    ones that are damaged or half-written are skipped, each named with its reasons. When
    checkpoints exist and none is complete, nothing is taken silently: it is an error."""
    if not output_dir.is_dir():
        return None
    found = sorted(
        (
            (int(match.group(1)), path)
            for path in output_dir.iterdir()
            if (match := CHECKPOINT.match(path.name))
        ),
        reverse=True,
    )
    skipped = []
    for _, path in found:
        problems = checkpoint_problems(path, _processes())
        if not problems:
            for name, reasons in skipped:
                logger.warning("resume: skipped %s: %s", name, "; ".join(reasons))
            return path
        skipped.append((path.name, problems))
    if skipped:
        raise CheckpointMismatchError(
            f"no complete checkpoint in {output_dir} to resume from: "
            + " | ".join(f"{name}: {'; '.join(reasons)}" for name, reasons in skipped)
        )
    return None


def _processes() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def _start_clean(output_dir: Path, recipe: Recipe, resume_from: str | None) -> None:
    """A fresh start never writes after an earlier run's logs, nor leaves its checkpoints for a
    later `resume: auto` to take up. `resume: never` into a used folder is refused unless
    `overwrite: true`; `resume: auto` with logs but no checkpoint (a run stopped before its
    first) clears the logs of the steps it redoes."""
    if resume_from:
        return
    earlier = sorted(
        path
        for path in output_dir.iterdir()
        if CHECKPOINT.match(path.name) or path.name in EARLIER_RUN_FILES
    )
    if not earlier:
        return
    names = ", ".join(path.name for path in earlier[:6]) + (", ..." if len(earlier) > 6 else "")
    if recipe.resume == "never" and not recipe.overwrite:
        raise ValueError(
            f"output_dir {output_dir} holds an earlier run ({names}); resume: auto continues "
            "it, overwrite: true deletes it first, or choose another output_dir"
        )
    logger.warning("starting %s afresh: deleting the earlier run's %s", output_dir, names)
    for path in earlier:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


def finished_run(
    output_dir: Path, recipe: Recipe, resume_from: str | None
) -> dict[str, Any] | None:
    """The summary of the run in `output_dir` when it is finished: its newest checkpoint reached
    the recipe's `max_steps` and the final model and summary (written last) are there. Such a
    run is left as it is, and says so; None when training or the final save is still to do."""
    if resume_from is None:
        return None
    step = _checkpoint_step(Path(resume_from))
    summary_path = output_dir / HELDOUT_FILE
    if step < recipe.max_steps or not (output_dir / FINAL_DIR).is_dir():
        return None
    try:
        summary = json.loads(summary_path.read_text())
    except (OSError, ValueError):  # killed before the summary: the final save is redone
        return None
    if not isinstance(summary, dict) or summary.get("global_step") != step:
        return None
    logger.warning(
        "%s is finished: step %d of max_steps %d, final model in %s; nothing was changed. "
        "Raise max_steps to train further, or set resume: never and overwrite: true to start "
        "over",
        output_dir,
        step,
        recipe.max_steps,
        output_dir / FINAL_DIR,
    )
    return summary | {"already_finished": True}


def _checkpoint_step(checkpoint: Path) -> int:
    state = json.loads((checkpoint / "trainer_state.json").read_text())
    return int(state["global_step"])


def resume_point(recipe: Recipe) -> str | None:
    if recipe.resume == "never":
        return None
    if recipe.resume == "auto":
        found = newest_checkpoint(Path(recipe.output_dir))
        return str(found) if found else None
    if not Path(recipe.resume).is_dir():
        raise FileNotFoundError(f"resume: {recipe.resume} is not a checkpoint folder")
    problems = checkpoint_problems(Path(recipe.resume), _processes())
    if problems:
        raise CheckpointMismatchError(
            f"resume: {recipe.resume} cannot be resumed from: " + "; ".join(problems)
        )
    return recipe.resume


def check_paths(recipe: Recipe) -> list[str]:
    """Problems with the model and data a recipe names, found without loading them."""
    problems = []
    for label, folder in (("data.train", recipe.data.train), ("data.eval", recipe.data.eval)):
        if folder and not (Path(folder) / "data.jsonl").is_file():
            problems.append(f"{label}: {folder} has no data.jsonl")
    problems += _model_problems("model.name_or_path", recipe.model.name_or_path)
    rewards = recipe.rewards
    local_critic = rewards.critic_engine == "hf" and rewards.critic_model not in (None, "self")
    if local_critic:
        problems += _model_problems("rewards.critic_model", rewards.critic_model)
    return problems


def _model_problems(label: str, name_or_path: str) -> list[str]:
    try:
        check_model(name_or_path)
    except (FileNotFoundError, UnsupportedModelError) as err:
        return [f"{label}: {err}"]
    return []


def build_trl_config(recipe: Recipe) -> Any:
    device = resolve_device(recipe.device)
    dtype = resolve_dtype(recipe.model.dtype, device)
    if recipe.stage == "sft":
        return sft_config(recipe, device, dtype)
    # a dry run without the model's files shows the config without the placeholder ban
    tokenizer = local_tokenizer(recipe.model.name_or_path)
    tokens = vision_token_ids(tokenizer) if tokenizer is not None else []
    plan = reward_plan(reward_weights(recipe), data_kinds(recipe.data.train))
    return grpo_config(recipe, device, dtype, tokens, [weight for _, weight in plan])


def reward_weights(recipe: Recipe) -> RewardWeights:
    rewards = recipe.rewards
    return RewardWeights(
        format_weight=rewards.format_weight,
        consistency_weight=rewards.consistency_weight,
        critic_weight=rewards.critic_weight,
        correctness=rewards.correctness_weight,
        refinement_weight=rewards.refinement_weight,
    )


def critic_reward(recipe: Recipe, device: str) -> CriticJudgeReward | None:
    """The critic reward a recipe asks for: its critic loaded here, served by a separate
    process, or (`self`) bound to the policy by the trainer each step."""
    rewards = recipe.rewards
    if not rewards.critic_model:
        return None
    tokens, batch = rewards.critic_max_new_tokens, rewards.critic_batch_size
    options = JudgeOptions(
        rewards.critic_mode,
        rewards.critic_tournament,
        rewards.critic_both_orders,
        max_new_tokens=tokens,
        batch_size=batch,
    )
    itself = rewards.critic_model == "self"
    judge = CriticJudgeReward(options, recipe.data.media_budget, judges_itself=itself)
    if itself:
        return judge
    if rewards.critic_engine == "openai":
        judge.bind(_served_critic(rewards, tokens))
        return judge
    critic_device = device if rewards.critic_device == "auto" else rewards.critic_device
    if rewards.critic_process:
        judge.bind(CriticProcess(rewards.critic_model, critic_device, "auto", tokens, batch))
    else:
        from mmcritic.inference import Critic, load_model_for_inference

        model, processor = load_model_for_inference(rewards.critic_model, critic_device, "auto")
        judge.bind(Critic(model, processor, tokens, batch_size=batch))
    return judge


def refinement_reward(recipe: Recipe) -> RefinementReward | None:
    """The helpfulness reward on critique rows, when the recipe weighs it: revisions by the
    model being trained (bound each step) or by a served policy."""
    rewards = recipe.rewards
    if not rewards.refinement_weight:
        return None
    options = RefinementOptions(
        from_step=rewards.refinement_from_step,
        max_new_tokens=rewards.refinement_max_new_tokens,
        temperature=rewards.refinement_temperature,
        batch_size=rewards.refinement_batch_size,
    )
    policy = None
    if rewards.refinement_base_urls:
        from mmcritic.inference import Policy

        engine = _served_engine(
            rewards.refinement_model,
            rewards.refinement_base_urls,
            rewards.refinement_concurrency,
            rewards.refinement_timeout_s,
        )
        policy = Policy.on(engine, max_new_tokens=rewards.refinement_max_new_tokens)
    return RefinementReward(options, recipe.data.media_budget, policy)


def _served_engine(model: str | None, urls: list[str], concurrency: int, timeout_s: float) -> Any:
    """The engine of a model on OpenAI-compatible servers, for a reward that asks it."""
    from mmcritic.inference.engines import EngineOptions, open_engine

    options = EngineOptions(
        "openai", model, base_urls=tuple(urls), concurrency=concurrency, timeout_s=timeout_s
    )
    return open_engine(options)


def _served_critic(rewards: Any, max_new_tokens: int) -> Any:
    """A critic on OpenAI-compatible servers that keeps lost judgements as failures: the reward
    leaves their rollouts out rather than stopping the run or scoring them 0."""
    from mmcritic.inference import Critic

    engine = _served_engine(
        rewards.critic_model,
        rewards.critic_base_urls,
        rewards.critic_concurrency,
        rewards.critic_timeout_s,
    )
    return Critic.on(engine, max_new_tokens=max_new_tokens, keep_failures=True)


def dry_run(recipe: Recipe) -> dict[str, Any]:
    """The TRL config a recipe resolves to, the model's family (None when the model cannot be
    read here) and any path problems, without training."""
    problems = check_paths(recipe)
    config = build_trl_config(recipe)
    model_readable = not any(problem.startswith("model.") for problem in problems)
    family = family_of_model(recipe.model.name_or_path).name if model_readable else None
    return {
        "stage": recipe.stage,
        "model_family": family,
        "trl_config": config_as_json(config),
        "problems": problems,
    }


def train(recipe: Recipe, callbacks: list[Any] | None = None) -> dict[str, Any]:
    """Runs the recipe's stage and returns held-out accuracy before and after it, holding
    the output folder's lock (`mmcritic.data.folder_lock`): one run writes a folder at a time.

    `callbacks` are `transformers.TrainerCallback`s added to the stage's trainer."""
    with folder_lock(Path(recipe.output_dir)):
        return _train(recipe, callbacks)


def _ready_to_train(recipe: Recipe) -> None:
    """Refuses a recipe whose paths are wrong, allows only DeepSpeed's state classes when a
    ZeRO resume unpickles shards, and sets the CPU threads."""
    if os.environ.get("ACCELERATE_USE_DEEPSPEED", "").lower() == "true":
        from mmcritic.train.safe_deepspeed import install

        install()
    problems = check_paths(recipe)
    if problems:
        raise ValueError("cannot train:\n  - " + "\n  - ".join(problems))
    if resolve_device(recipe.device) == "cpu":
        logger.info("torch uses %d CPU threads", set_cpu_threads(recipe.cpu_threads))


def _training_records(
    recipe: Recipe, processor: Any, budget: Any, main_process: bool
) -> tuple[list[Record], int]:
    """The training records (with their swapped copies under `grpo.both_orders`) whose prompts
    fit, and how many did not: those are written, with the reason, to the rejected file."""
    train_records = read_records(recipe.data.train)
    if recipe.stage == "grpo" and recipe.grpo.both_orders:
        train_records = with_both_orders(train_records)
    records, rejections = filter_by_prompt_length(
        train_records, processor, budget, recipe.data.max_prompt_tokens
    )
    if main_process:
        write_rejections(rejections, Path(recipe.output_dir) / TRAIN_REJECTED_FILE)
    if not records:
        raise ValueError(f"no training examples left in {recipe.data.train} after filtering")
    return records, len(rejections)


def _train(recipe: Recipe, callbacks: list[Any] | None) -> dict[str, Any]:
    _ready_to_train(recipe)
    from accelerate import PartialState

    main_process = PartialState().is_main_process  # under `accelerate launch`, one writer
    output_dir = Path(recipe.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    resume_from = resume_point(recipe)
    finished = finished_run(output_dir, recipe, resume_from)
    if finished is not None:
        return finished
    resolved = yaml.safe_dump(recipe_to_dict(recipe), sort_keys=False)
    if main_process:
        _start_clean(output_dir, recipe, resume_from)
        (output_dir / "recipe.yaml").write_text(resolved)
        logger.info(
            "%s %s: writing to %s (resolved recipe.yaml, checkpoint-*/, tensorboard/, the final "
            "model in %s/, the summary in %s)",
            "resuming" if resume_from else "starting",
            recipe.stage,
            output_dir,
            FINAL_DIR,
            HELDOUT_FILE,
        )

    budget = family_of_model(recipe.model.name_or_path).media_budget(recipe.data.media_budget)
    processor = load_processor(recipe.model.name_or_path, budget)
    records, rejected = _training_records(recipe, processor, budget, main_process)
    heldout = read_records(recipe.data.eval) if recipe.data.eval else []

    dataset = to_dataset(records, budget, recipe.sft.target if recipe.stage == "sft" else None)
    trainer = make_trainer(recipe, processor, dataset, callbacks)
    use_resumable_tensorboard(trainer)
    use_compact_progress(trainer)
    if recipe.data.eval_every and heldout:
        trainer.add_callback(
            HeldoutCallback(
                trainer, heldout, budget, recipe.data.eval_every, _verdict_tokens(recipe)
            )
        )
    before = _heldout(recipe, trainer.model, processor, heldout, budget)
    if resume_from:
        logger.info("resuming from %s", resume_from)
        if main_process:
            step = _checkpoint_step(Path(resume_from))
            dropped = trim_rollout_log(output_dir / ROLLOUT_LOG, step)
            logger.info("rollout log: %d lines from step %d on dropped to be redone", dropped, step)
    with disk_full_named(output_dir):
        trainer.train(resume_from_checkpoint=resume_from)
    final = output_dir / FINAL_DIR
    trainer.save_model(str(final))  # every rank: ZeRO-3 gathers the shards here
    if main_process:
        processor.save_pretrained(str(final))
        trainer.create_model_card()
        copy_card(output_dir, final)
        (output_dir / LOG_HISTORY_FILE).write_text(json.dumps(trainer.state.log_history, indent=1))
    after = _heldout(recipe, trainer.model, processor, heldout, budget)
    summary = {
        "final_model": str(final),
        "train_examples": len(records),
        "rejected_examples": rejected,
        "heldout_before": before,
        "heldout_after": after,
        "global_step": trainer.state.global_step,
    }
    if main_process:
        (output_dir / HELDOUT_FILE).write_text(json.dumps(summary, indent=2))
    return summary


def _heldout(recipe, model, processor, records, budget) -> dict[str, Any] | None:
    if not records:
        return None
    return heldout_report(model, processor, records, budget, _verdict_tokens(recipe))


def _verdict_tokens(recipe: Recipe) -> int:
    """How long a held-out verdict may run: the rollouts' length, capped for speed."""
    return min(recipe.grpo.max_completion_length, 256)


def make_trainer(
    recipe: Recipe, processor: Any, dataset: Any, callbacks: list[Any] | None = None
) -> Any:
    """The stage's trainer (CriticGRPOTrainer or TRL's SFTTrainer), model loaded per recipe."""
    device = resolve_device(recipe.device)
    dtype = resolve_dtype(recipe.model.dtype, device)
    attention = resolve_attention(recipe.model.attn_implementation, device)
    model = load_model(recipe.model.name_or_path, dtype, attention)
    if recipe.model.freeze_vision_tower:
        freeze_vision_tower(model)
    peft_config = _lora(recipe)
    if recipe.stage == "sft":
        from mmcritic.train.sft import make_sft_trainer

        return make_sft_trainer(
            model, processor, dataset, sft_config(recipe, device, dtype), peft_config, callbacks
        )
    from mmcritic.train.grpo_trainer import CriticGRPOTrainer

    tokens = vision_token_ids(processor.tokenizer)
    functions, weights = training_rewards(
        reward_weights(recipe),
        dataset.unique("kind"),
        critic_reward(recipe, device),
        refinement_reward(recipe),
    )
    return CriticGRPOTrainer(
        model=model,
        reward_funcs=functions,
        args=grpo_config(recipe, device, dtype, tokens, weights),
        train_dataset=dataset,
        processing_class=processor,
        peft_config=peft_config,
        vision_token_ids=tokens,
        dynamic_sampling=recipe.grpo.dynamic_sampling,
        dynamic_sampling_max_rounds=recipe.grpo.dynamic_sampling_max_rounds,
        balance_positions=recipe.grpo.balance_positions,
        both_orders=recipe.grpo.both_orders,
        pair_baseline=recipe.grpo.pair_baseline,
        poise=recipe.grpo.poise if recipe.grpo.baseline == "poise" else None,
        critique_grpo=recipe.grpo.critique_grpo if recipe.grpo.critique_grpo.enabled else None,
        critique_budget=recipe.data.media_budget,
        shared_prefix=recipe.grpo.shared_prefix,
        stall_steps=recipe.grpo.stall_steps,
        callbacks=callbacks,
    )


def _lora(recipe: Recipe) -> Any:
    lora = recipe.model.lora
    if not lora.enabled:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        task_type="CAUSAL_LM",
    )
