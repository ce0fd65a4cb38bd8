"""The R1 recipe's training code path at the released model shapes: a GPU check, CPU-sized too.

The model's family's R1 recipe (`recipes/llava_critic_r1_qwen2_5_vl_7b.yaml`, or its Qwen2-VL-7B
or Qwen3-VL-8B variant) is loaded as a user loads it, with
overrides for its paths, the step count and the batch (a few prompts of n rollouts, split over
optimizer steps the way the recipe splits its rollout batch) and, on the CPU only, its lengths,
pixel budget and dtype. Everything else is the recipe's: n, KL (so the reference pass runs),
loss, clipping, gradient checkpointing, vLLM rollouts where vLLM is installed on a GPU, and
`grpo.shared_prefix` on or off. The trainer is built by `mmcritic.train.run.make_trainer`, as
`mmcritic train` builds it, over a random-weight model of released shapes (Qwen2-VL-7B,
Qwen2.5-VL-3B or -7B, Qwen3-VL-8B: `mmcritic.models.published`) and synthetic critic pairs whose
prompts differ in length.

Per configuration it measures the step split (`mmcritic_dev.profiling.PhaseTimer`), tokens/s,
peak memory, MFU on a GPU, and two things that fail the check:
- log-prob agreement: the reference log-probs the trainer computed for its first (left-padded)
  rollout batch against each row scored alone, without padding, by the same scoring method;
- movement: the share of trainable weights the optimizer steps changed. A random-weight model
  earns no reward, so its advantages are zero and its first gradient would be too (the KL term's
  gradient vanishes while the policy equals the reference); the policy therefore starts a little
  away from the reference (`policy_noise`), and the KL term pulls it back through every layer.
"""

from __future__ import annotations

import gc
import json
import logging
import resource
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from mmcritic.data.dataset import read_records
from mmcritic.data.schema import Record
from mmcritic.data.synth import synthesize
from mmcritic.models.devices import set_cpu_threads
from mmcritic.models.families import family_of_model
from mmcritic.models.loading import load_processor, resolve_device
from mmcritic.models.published import PUBLISHED, build_published_model, published_config
from mmcritic.models.tiny import TinyModelSpec, build_tiny_processor
from mmcritic.train.config import Recipe, load_recipe
from mmcritic.train.examples import filter_by_prompt_length, prompt_token_count, to_dataset
from mmcritic.train.run import make_trainer
from mmcritic_dev.profiling import PhaseTimer

logger = logging.getLogger(__name__)

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
FAMILY_RECIPES = {
    "qwen2-vl": RECIPES / "llava_critic_r1_qwen2_vl_7b.yaml",
    "qwen2.5-vl": RECIPES / "llava_critic_r1_qwen2_5_vl_7b.yaml",
    "qwen3-vl": RECIPES / "llava_critic_r1_qwen3_vl_8b.yaml",
}
# Dense bf16 tensor-core peaks (vendor datasheets), matched in order against the device name.
PEAK_BF16_TFLOPS = (("H100 PCIe", 756.0), ("H100", 989.0), ("H200", 989.0), ("A100", 312.0))
# Largest |log p(batched) - log p(alone)| per completion token that passes. float32: rounding
# is ~2e-6 here; bfloat16 keeps 8 bits of mantissa, so a random model's logits (about 1 in
# size) differ by ~1e-2 between kernels and batch shapes. A pad token leaking into attention, or
# a position shifted by the padding, moves log-probs by far more than either.
LOGPROB_TOLERANCE = {torch.float32: 1e-3, torch.float16: 2e-2, torch.bfloat16: 1e-1}
# On the CPU: the recipe's bf16 runs ~400x slower than float32 matmuls here, and a 2,048-token
# completion or a 512x512 image at 7B width takes minutes per pass on two cores.
CPU_COMPLETION_LENGTH = 16
CPU_MIN_PIXELS = 3136
CPU_MAX_PIXELS = 12544
SAMPLED_PER_TENSOR = 4096  # weights compared per tensor for the movement check
# Adam moves every weight that has a gradient by about the learning rate: in float32 all of
# them change; in bfloat16 at lr 1e-6 about 2% do (measured), the rest round back.
MOSTLY_CHANGED = 0.5


class CheckFailed(RuntimeError):
    """The recipe's code path ran, but what it computed is wrong."""


@dataclass(frozen=True)
class CheckOptions:
    """What to run; None means the device's default (see `resolved`)."""

    work: Path
    model: str | None = None
    layers: int | None = None
    vision_layers: int | None = None
    tokenizer: str | None = None
    shared_prefix: tuple[bool, ...] = (True, False)
    prompts: int = 2
    steps: int | None = None
    warmup: int | None = None
    completion_length: int | None = None
    min_pixels: int | None = None
    max_pixels: int | None = None
    policy_noise: float = 0.01
    peak_tflops: float | None = None
    logprob_tolerance: float | None = None
    threads: int | None = None
    seed: int = 0

    def resolved(self, device: str) -> CheckOptions:
        """Defaults per device: the 7B at its released depth on a GPU; on the CPU the 3B (a
        one-layer 7B peaks at 7 GiB here, the 3B at 4 GiB) with one language layer and two
        vision blocks (one windowed, one full-attention), short completions and small images."""
        cpu = device == "cpu"
        model = self.model or ("qwen2.5-vl-3b" if cpu else "qwen2.5-vl-7b")
        shape = PUBLISHED[model]
        return replace(
            self,
            model=model,
            layers=self.layers or (1 if cpu else shape.num_layers),
            vision_layers=self.vision_layers or (2 if cpu else shape.vision_depth),
            completion_length=self.completion_length or (CPU_COMPLETION_LENGTH if cpu else None),
            min_pixels=self.min_pixels or (CPU_MIN_PIXELS if cpu else None),
            max_pixels=self.max_pixels or (CPU_MAX_PIXELS if cpu else None),
        )


def run_gpu_check(options: CheckOptions) -> list[dict[str, Any]]:
    """Builds the model and data once, then trains and checks each shared-prefix setting;
    returns one result per setting and raises `CheckFailed` at the first wrong result."""
    device = resolve_device("auto")
    options = options.resolved(device)
    if device == "cpu":
        set_cpu_threads(options.threads)
    recipe_path = FAMILY_RECIPES[PUBLISHED[options.model].family]
    base = load_recipe(recipe_path)
    options = _scheduled(options, _steps_per_rollout(base), device)
    work = Path(options.work)
    model_dir, notes = _build_model(options, base, device, work / "model")
    _release(device)
    data_dirs = _critic_pairs(work / "data", max(8, 2 * options.prompts), options.seed)
    results = []
    for shared in options.shared_prefix:
        recipe = load_recipe(
            recipe_path, _overrides(options, base, device, model_dir, data_dirs[0], work, shared)
        )
        result = _run_configuration(options, recipe, device, data_dirs)
        _release(device)
        results.append({**result, "notes": notes})
    return results


def _steps_per_rollout(recipe: Recipe) -> int:
    """Optimizer steps one rollout batch feeds (the 7B recipe: 32 micro-batches of rollouts,
    16 per optimizer step, so 2)."""
    return (recipe.grpo.steps_per_generation or 1) // recipe.optim.gradient_accumulation_steps


def _scheduled(options: CheckOptions, per_rollout: int, device: str) -> CheckOptions:
    """Whole rollout batches: on a GPU one of warm-up (CUDA and vLLM start-up) and two
    measured; on the CPU one, measured."""
    steps = options.steps or per_rollout * (1 if device == "cpu" else 2)
    warmup = options.warmup
    if warmup is None:
        warmup = 0 if device == "cpu" else per_rollout
    if options.prompts < 2:
        raise ValueError("the log-prob check needs at least 2 prompts (of different lengths)")
    if steps % per_rollout or warmup % per_rollout:
        raise ValueError(f"steps and warmup must be multiples of {per_rollout} (one rollout batch)")
    return replace(options, steps=steps, warmup=warmup)


def summary_line(result: dict[str, Any]) -> str:
    """The one-line summary of a configuration."""
    mfu = "na" if result["mfu"] is None else f"{result['mfu']:.3f}"
    return (
        f"model={result['model']} layers={result['layers']} "
        f"shared_prefix={'on' if result['shared_prefix'] else 'off'} "
        f"step_s={result['phases_s']['step_s']:.3f} tokens_per_s={result['tokens_per_s']:.1f} "
        f"peak_mem_gib={result['peak_mem_gib']:.2f} mfu={mfu}"
    )


def _build_model(
    options: CheckOptions, base: Recipe, device: str, out: Path
) -> tuple[Path, list[str]]:
    """A random-weight model of the released shapes and its processor, saved to `out`."""
    notes = []
    if options.tokenizer:
        from transformers import AutoProcessor

        processor = AutoProcessor.from_pretrained(options.tokenizer)
        vocab_size = None
    else:
        processor = build_tiny_processor(TinyModelSpec(family=PUBLISHED[options.model].family))
        vocab_size = len(processor.tokenizer)
        notes.append(
            f"vocabulary cut from {PUBLISHED[options.model].vocab_size:,} to the local "
            f"tokenizer's {vocab_size} tokens (no hub here; --tokenizer takes the real one)"
        )
    config = published_config(
        options.model, processor.tokenizer, options.layers, options.vision_layers, vocab_size
    )
    dtype = torch.float32 if device == "cpu" else getattr(torch, base.model.dtype)
    build_published_model(out, config, processor, dtype, device, options.seed)
    if device == "cpu":
        notes.append("float32 on the CPU (its bfloat16 matmuls are ~400x slower here)")
    return out, notes


def _overrides(
    options: CheckOptions,
    base: Recipe,
    device: str,
    model_dir: Path,
    data_dir: Path,
    work: Path,
    shared: bool,
) -> list[str]:
    """The recipe's paths, steps and batch, and on the CPU its lengths; nothing else moves."""
    n = base.grpo.num_generations
    per_rollout = _steps_per_rollout(base)
    rows = options.prompts * n
    if rows % per_rollout:
        raise ValueError(
            f"{options.prompts} prompts x {n} rollouts do not split into {per_rollout}"
        )
    overrides = [
        f"output_dir={work / ('shared_prefix_' + ('on' if shared else 'off'))}",
        f"model.name_or_path={model_dir}",
        f"data.train={data_dir}",
        f"max_steps={options.warmup + options.steps}",
        f"seed={options.seed}",
        "resume=never",
        "report_to=[]",
        "logging_steps=1",
        f"grpo.shared_prefix={str(shared).lower()}",
        # the recipe's split of a rollout batch into optimizer steps, on fewer rows
        f"optim.per_device_train_batch_size={rows // per_rollout}",
        "optim.gradient_accumulation_steps=1",
        f"grpo.steps_per_generation={per_rollout}",
    ]
    if options.completion_length:
        overrides.append(f"grpo.max_completion_length={options.completion_length}")
    if options.min_pixels:
        overrides.append(f"data.min_pixels={options.min_pixels}")
    if options.max_pixels:
        overrides.append(f"data.max_pixels={options.max_pixels}")
    if device == "cpu":
        overrides += ["device=cpu", "model.dtype=float32", "grpo.use_vllm=false"]
        overrides.append("data.dataloader_num_workers=0")
        if options.threads:
            overrides.append(f"cpu_threads={options.threads}")
    elif not _vllm_installed():
        overrides.append("grpo.use_vllm=false")
    return overrides


def _vllm_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def _run_configuration(
    options: CheckOptions, recipe: Recipe, device: str, data_dirs: list[Path]
) -> dict[str, Any]:
    """Trains one configuration, measures it, and raises `CheckFailed` if it computed wrong."""
    _reset_peak_memory(device)
    trainer = _trainer(options, recipe, data_dirs)
    _offset_policy(trainer.model, options.policy_noise, options.seed)
    weights = _sample_weights(trainer.model)
    rollouts = RolloutLog(trainer, options.warmup)
    timer = PhaseTimer(trainer, options.warmup)
    trainer.train()
    peak_gib = _peak_memory_gib(device)
    phases = timer.phases()
    measured_s = phases["step_s"] * options.steps
    tokens, flops = rollouts.measured_work(trainer)
    tolerance = options.logprob_tolerance or LOGPROB_TOLERANCE[trainer.model.dtype]
    result = {
        "model": options.model,
        "layers": options.layers,
        "vision_layers": options.vision_layers,
        "shared_prefix": recipe.grpo.shared_prefix,
        "device": _device_name(device),
        "dtype": str(trainer.model.dtype).removeprefix("torch."),
        "attention": trainer.model.config._attn_implementation,
        "use_vllm": recipe.grpo.use_vllm,
        "rollout": {
            "prompts": options.prompts,
            "generations": recipe.grpo.num_generations,
            "max_completion_length": recipe.grpo.max_completion_length,
            "pixels": [recipe.data.min_pixels, recipe.data.max_pixels],
        },
        "steps": options.steps,
        "warmup": options.warmup,
        "phases_s": {key: round(value, 4) for key, value in phases.items()},
        "tokens_per_s": tokens / measured_s,
        "peak_mem_gib": peak_gib,
        "mfu": _mfu(flops, measured_s, device, options.peak_tflops),
        "logprob_agreement": {**logprob_agreement(trainer, rollouts.first), "tolerance": tolerance},
        "weights_changed_fraction": _changed_fraction(trainer.model, weights),
        "logged": _last_logged(trainer),
    }
    _enforce(result)
    return result


def _trainer(options: CheckOptions, recipe: Recipe, data_dirs: list[Path]) -> Any:
    """The trainer `mmcritic train` builds for the recipe, on prompts of spread lengths."""
    budget = family_of_model(recipe.model.name_or_path).media_budget(recipe.data.media_budget)
    processor = load_processor(recipe.model.name_or_path, budget)
    pairs = [record for folder in data_dirs for record in read_records(folder)]
    records = _spread_prompts(pairs, processor, budget, options.prompts)
    kept, rejected = filter_by_prompt_length(
        records, processor, budget, recipe.data.max_prompt_tokens
    )
    if rejected:
        raise CheckFailed(f"the recipe rejects the check's prompts: {rejected}")
    return make_trainer(recipe, processor, to_dataset(kept, budget), [_NoCheckpoint()])


def _enforce(result: dict[str, Any]) -> None:
    agreement, changed = result["logprob_agreement"], result["weights_changed_fraction"]
    if agreement["max_abs_diff"] > agreement["tolerance"]:
        raise CheckFailed(
            f"batched log-probs differ from rows scored alone by {agreement['max_abs_diff']:.3g} "
            f"(tolerance {agreement['tolerance']:g}): {json.dumps(result)}"
        )
    if changed == 0.0:
        raise CheckFailed(f"the optimizer steps changed no weight: {json.dumps(result)}")
    if changed < MOSTLY_CHANGED:
        logger.warning(
            "the optimizer steps changed only %.1f%% of the weights: steps smaller than a "
            "weight's rounding are lost, as when bfloat16 weights are updated without float32 "
            "master copies (one process without DeepSpeed; ZeRO keeps float32 copies)",
            100 * changed,
        )


def _critic_pairs(folder: Path, count: int, seed: int) -> list[Path]:
    """Synthetic colour pairs with one-sentence responses and with reasoned ones, whose prompts
    are some 50 tokens longer: the trainer gets records of both (the first folder stands as the
    recipe's data.train)."""
    folders = []
    for style in ("short", "reasoned"):
        synthesize("color", count, folder / style, seed=seed, overwrite=True, responses=style)
        folders.append(folder / style)
    return folders


def _spread_prompts(records: list[Record], processor: Any, budget: Any, count: int) -> list[Record]:
    """`count` records whose prompt lengths spread from the shortest to the longest, so every
    rollout batch (all of them) pads its shorter prompts on the left."""
    ranked = sorted(records, key=lambda record: prompt_token_count(record, processor, budget))
    picks = [round(i * (len(ranked) - 1) / (count - 1)) for i in range(count)] if count > 1 else [0]
    return [ranked[index] for index in picks]


def _offset_policy(model: torch.nn.Module, noise: float, seed: int) -> None:
    """Moves every trainable weight by a relative `noise` (w <- w (1 + noise z), z ~ N(0, 1))
    away from the reference model, which TRL loaded from the same folder."""
    device = next(model.parameters()).device
    generator = torch.Generator(device=device).manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.requires_grad:
                z = torch.randn(
                    parameter.shape, generator=generator, device=device, dtype=parameter.dtype
                )
                parameter.mul_(1 + noise * z)


def _sample_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Up to SAMPLED_PER_TENSOR evenly spaced elements of each trainable tensor, on the CPU."""
    sampled = {}
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            flat = parameter.detach().reshape(-1)
            stride = max(1, flat.numel() // SAMPLED_PER_TENSOR)
            sampled[name] = flat[::stride].to("cpu", copy=True)
    return sampled


def _changed_fraction(model: torch.nn.Module, before: dict[str, torch.Tensor]) -> float:
    changed = total = 0
    for name, parameter in model.named_parameters():
        if name in before:
            flat = parameter.detach().reshape(-1)
            now = flat[:: max(1, flat.numel() // SAMPLED_PER_TENSOR)].cpu()
            changed += int((now != before[name]).sum())
            total += now.numel()
    return changed / total


class _NoCheckpoint(TrainerCallback):
    """No checkpoint, not even the Trainer's at the last step: a 7B one is ~50 GB of writes."""

    def on_step_end(self, args, state, control, **kwargs):
        control.should_save = False


class RolloutLog:
    """Wraps the trainer's `_generate_and_score_completions` to keep its first rollout batch
    (for the log-prob check) and the work of every rollout made after `warmup` steps."""

    def __init__(self, trainer: Any, warmup: int):
        self.warmup = warmup
        self.first: dict[str, Any] | None = None
        self.measured: list[dict[str, Any]] = []
        method = trainer._generate_and_score_completions

        def logged(inputs):
            rollout = method(inputs)
            if self.first is None:
                self.first = dict(rollout)
            if trainer.state.global_step >= self.warmup:
                self.measured.append(_rollout_shape(rollout))
            return rollout

        trainer._generate_and_score_completions = logged

    def measured_work(self, trainer: Any) -> tuple[int, float]:
        """(prompt + completion tokens, model FLOPs) of the measured rollouts' rows."""
        counts = _parameter_counts(trainer.model)
        text = trainer.model.config.get_text_config()
        tokens, flops = 0, 0.0
        for shape in self.measured:
            # passes per row: generation, the old and reference log-probs when present, and
            # the training pass (forward and backward, three forwards' worth)
            passes = 1 + shape["old_pass"] + shape["ref_pass"] + 3
            for length, patches in zip(shape["lengths"], shape["patches"], strict=True):
                forward = (
                    2 * counts["text"] * length
                    + 2 * counts["vision"] * patches
                    # causal attention: QK^T and AV over half the L x L scores, every layer
                    + 2 * text.num_hidden_layers * length**2 * text.hidden_size
                )
                flops += passes * forward
                tokens += length
        return tokens, flops


def _rollout_shape(rollout: dict[str, Any]) -> dict[str, Any]:
    lengths = (rollout["prompt_mask"].sum(1) + rollout["completion_mask"].sum(1)).tolist()
    counts = rollout.get("num_images") or [0] * len(lengths)
    grids = rollout.get("image_grid_thw")
    per_image = grids.prod(-1).tolist() if grids is not None else []
    patches, start = [], 0
    for count in counts:
        patches.append(sum(per_image[start : start + count]))
        start += count
    return {
        "lengths": lengths,
        "patches": patches,
        "old_pass": int(rollout.get("old_per_token_logps") is not None),
        "ref_pass": int(rollout.get("ref_per_token_logps") is not None),
    }


def _parameter_counts(model: torch.nn.Module) -> dict[str, int]:
    """Weights that multiply per text token (the decoder and the output head, not the input
    embedding, a lookup) and per image patch (the vision tower and its merger)."""
    vision = sum(p.numel() for name, p in model.named_parameters() if "visual" in name)
    embedding = model.get_input_embeddings().weight
    head = model.get_output_embeddings().weight
    total = sum(p.numel() for p in model.parameters())  # a tied head is counted once here
    tied = embedding.data_ptr() == head.data_ptr()
    text = total - vision - embedding.numel() + (head.numel() if tied else 0)
    return {"text": text, "vision": vision}


def logprob_agreement(trainer: Any, rollout: dict[str, Any] | None) -> dict[str, Any]:
    """The reference log-probs the trainer computed for a left-padded rollout batch against
    each row scored alone (no padding, its own media) by the trainer's
    `_get_per_token_logps_and_entropies` on the same reference model."""
    if rollout is None or rollout.get("ref_per_token_logps") is None:
        raise CheckFailed("no rollout with reference log-probs was made (is grpo.beta 0?)")
    if trainer.ref_model is None:
        raise CheckFailed("the trainer has no separate reference model to score rows with")
    prompt_mask, completion_mask = rollout["prompt_mask"], rollout["completion_mask"]
    padded = int((prompt_mask == 0).any(1).sum())
    if padded == 0:
        raise CheckFailed("no row of the checked batch was left-padded: nothing was checked")
    differences = []
    with torch.no_grad():
        for row in range(prompt_mask.size(0)):
            completion = int(completion_mask[row].sum())
            if completion == 0:
                continue
            alone = _score_alone(trainer, rollout, row, completion)
            batched = rollout["ref_per_token_logps"][row, :completion].float()
            differences.append((alone.float() - batched).abs())
    flat = torch.cat(differences)
    return {
        "rows": len(differences),
        "left_padded_rows": padded,
        "prompt_lengths": sorted(set(prompt_mask.sum(1).tolist())),
        "tokens": flat.numel(),
        "max_abs_diff": float(flat.max()),
        "mean_abs_diff": float(flat.mean()),
    }


def _score_alone(trainer: Any, rollout: dict[str, Any], row: int, completion: int) -> torch.Tensor:
    prompt = int(rollout["prompt_mask"][row].sum())
    width = rollout["prompt_ids"].size(1)
    ids = torch.cat(
        [rollout["prompt_ids"][row, width - prompt :], rollout["completion_ids"][row, :completion]]
    )[None]
    kwargs = _row_media(rollout, row)
    if rollout.get("mm_token_type_ids") is not None:
        # from the row's own tokens, not the batch's: a batch whose token types are padded on
        # the other side than its ids would otherwise misplace the image here too
        config = trainer.model.config
        types = (ids == config.image_token_id).long() + 2 * (ids == config.video_token_id).long()
        kwargs["mm_token_type_ids"] = types
    logps, _, _ = trainer._get_per_token_logps_and_entropies(
        trainer.ref_model, ids, torch.ones_like(ids), completion, batch_size=1, **kwargs
    )
    return logps[0]


def _row_media(rollout: dict[str, Any], row: int) -> dict[str, Any]:
    """One row's images out of the batch's, as TRL lays them out: `pixel_values` holds every
    image's patches in row order, `image_grid_thw` one grid per image."""
    counts = rollout.get("num_images")
    if not counts or rollout.get("pixel_values") is None:
        return {}
    grids = rollout["image_grid_thw"]
    patches = grids.prod(-1)
    if int(patches.sum()) != rollout["pixel_values"].size(0):
        raise CheckFailed("pixel_values do not hold one block of patches per image")
    first = sum(counts[:row])
    images = slice(first, first + counts[row])
    start = int(patches[:first].sum())
    end = start + int(patches[images].sum())
    return {
        "pixel_values": rollout["pixel_values"][start:end],
        "image_grid_thw": grids[images],
        "num_images": [counts[row]],
    }


def _mfu(flops: float, seconds: float, device: str, peak_tflops: float | None) -> float | None:
    if device == "cpu":
        return None
    peak = peak_tflops or _known_peak_tflops(torch.cuda.get_device_name())
    if peak is None:
        logger.warning(
            "no peak FLOP/s known for %s: pass --peak-tflops to get an MFU",
            torch.cuda.get_device_name(),
        )
        return None
    return flops / seconds / (peak * 1e12)


def _known_peak_tflops(name: str) -> float | None:
    return next((peak for key, peak in PEAK_BF16_TFLOPS if key in name), None)


def _device_name(device: str) -> str:
    return torch.cuda.get_device_name() if device == "cuda" else "cpu"


def _reset_peak_memory(device: str) -> None:
    """CUDA's peak counter, or on Linux the process's peak resident set (VmHWM, reset by
    writing 5 to /proc/self/clear_refs), so each configuration reports its own peak."""
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        return
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        logger.info("cannot reset the peak RSS; the peak covers the whole process")


def _peak_memory_gib(device: str) -> float:
    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2**30
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 2**30
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**30


def _release(device: str) -> None:
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def _last_logged(trainer: Any) -> dict[str, float]:
    """The last optimizer step's logged metrics (loss, KL, rewards, clip ratios...)."""
    steps = [entry for entry in trainer.state.log_history if "loss" in entry]
    return {key: value for key, value in steps[-1].items() if isinstance(value, int | float)}
