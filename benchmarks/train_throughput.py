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

    python benchmarks/train_throughput.py [--generations 4 8] [--steps 12] [--threads 1]
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
    parser.add_argument("--generations", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--prompts", type=int, default=8, help="prompts per step")
    parser.add_argument("--steps", type=int, default=12, help="measured steps per trainer")
    parser.add_argument("--warmup", type=int, default=2, help="steps dropped per trainer")
    parser.add_argument("--block", type=int, default=2, help="steps per turn")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--sft-steps", type=int, default=40)
    parser.add_argument("overrides", nargs="*", help="recipe KEY=VALUE for both trainers")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    logging.basicConfig(level=logging.WARNING)

    import torch

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
    print("\n".join(lines))


if __name__ == "__main__":
    main()
