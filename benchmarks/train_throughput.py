"""GRPO step time: mmcritic's trainer against a plain trl.GRPOTrainer, same config, same run.

Both trainers start from one SFT warm start (so rewards vary and gradients are not zero), train on
the quickstart's data and model (the paper's prompt, six colours, width 128) and take turns, a
block of steps each, with torch's threads pinned and their random states kept apart
(`mmcritic_dev.profiling.race`).
Warm-up steps are dropped; the median step time of each, its 95% interval, the phase split and
the losses are printed as JSON, then one line per group size:

    n=<n> ratio_ours_over_plain=<x> loss_plain=<x> loss_ours=<y>

Ours runs with position balancing, both-orders batches and dynamic sampling off so both sample
the same batches; what differs is the work per step (the shared-prefix log-prob and loss
passes).

Then, at a released model's widths (`--shape`, default Qwen2.5-VL-7B, one language layer), the
log-prob pass and an update micro-batch over one rollout of prompts of different lengths and long
completions, shared prefix against standard, in turns (`mmcritic_dev.pass_race`):

    shape=<model> layers=<k> n=<n> pass=<logprob|update> ratio_shared_over_standard=<x>

    python benchmarks/train_throughput.py [--generations 4 8] [--steps 12] [--threads 1]
    python benchmarks/train_throughput.py --generations --shape qwen2.5-vl-7b  # shape line only
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import tempfile
from pathlib import Path

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, nargs="*", default=[4, 8])
    parser.add_argument("--prompts", type=int, default=8, help="prompts per step")
    parser.add_argument("--steps", type=int, default=12, help="measured steps per trainer")
    parser.add_argument("--warmup", type=int, default=2, help="steps dropped per trainer")
    parser.add_argument("--block", type=int, default=2, help="steps per turn")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--sft-steps", type=int, default=40)
    parser.add_argument("--shape", default="qwen2.5-vl-7b", help="released shape; none: skip")
    parser.add_argument("--shape-layers", type=int, default=1)
    parser.add_argument("--shape-n", type=int, default=4, help="rollouts per prompt")
    parser.add_argument("--shape-completion", type=int, default=256, help="completion tokens")
    parser.add_argument("--shape-rounds", type=int, default=3, help="measured rounds")
    parser.add_argument("overrides", nargs="*", help="recipe KEY=VALUE for both trainers")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    logging.basicConfig(level=logging.WARNING)

    import torch

    from mmcritic_dev.pass_race import race_passes
    from mmcritic_dev.throughput import compare_step_times

    torch.set_num_threads(args.threads)
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        for n in args.generations:
            result = compare_step_times(
                Path(folder),
                RECIPES / "quickstart_cpu_sft.yaml",
                RECIPES / "quickstart_cpu.yaml",
                n=n,
                prompts=args.prompts,
                steps=args.steps,
                warmup=args.warmup,
                block=args.block,
                threads=args.threads,
                sft_steps=args.sft_steps,
                overrides=args.overrides,
            )
            print(json.dumps(result, indent=2), flush=True)
            lines.append(
                f"n={n} ratio_ours_over_plain={result['ratio_ours_over_plain']:.3f} "
                f"loss_plain={statistics.fmean(result['plain']['losses']):.6f} "
                f"loss_ours={statistics.fmean(result['ours']['losses']):.6f}"
            )
        if args.shape != "none":
            shape = race_passes(
                Path(folder) / "shape",
                RECIPES / "quickstart_cpu.yaml",
                args.shape,
                args.shape_layers,
                prompts=2,
                n=args.shape_n,
                completion=args.shape_completion,
                rounds=args.shape_rounds,
            )
            print(json.dumps(shape, indent=2), flush=True)
            lines += [
                f"shape={args.shape} layers={args.shape_layers} n={args.shape_n} pass={kind} "
                f"ratio_shared_over_standard={shape[kind]['ratio_shared_over_standard']:.3f}"
                for kind in ("logprob", "update")
            ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
