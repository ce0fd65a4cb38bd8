"""The R1 recipe's training code path at released model shapes, on a GPU or the CPU.

A random-weight model of a released configuration (Qwen2.5-VL-7B by default, -3B, Qwen2-VL-7B or
Qwen3-VL-8B), at full depth on a GPU and one language layer on the CPU, runs a few GRPO steps of
its family's R1 recipe (recipes/llava_critic_r1_qwen2_5_vl_7b.yaml or its variant) through
`mmcritic train`'s trainer, with grpo.shared_prefix on and off. The check fails when the
trainer's log-probs of a left-padded batch differ from each row scored alone, or when the
optimizer steps move no weight (`mmcritic_dev.gpu_check`). It prints each configuration as JSON,
then one line per configuration:

    model=<name> layers=<k> shared_prefix=<on|off> step_s=<x> tokens_per_s=<y>
        peak_mem_gib=<z> mfu=<m|na>     (on one line)

    python benchmarks/gpu_check.py [--model qwen3-vl-8b] [--layers K] [--shared-prefix both]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

from mmcritic.models.published import PUBLISHED

SHARED_PREFIX = {"on": (True,), "off": (False,), "both": (True, False)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        choices=sorted(PUBLISHED),
        help="default: the 7B on a GPU, the 3B on the CPU",
    )
    parser.add_argument(
        "--layers", type=int, help="language layers (default: all on a GPU, 1 on the CPU)"
    )
    parser.add_argument(
        "--vision-layers", type=int, help="vision blocks (default: all on a GPU, 2 on the CPU)"
    )
    parser.add_argument(
        "--tokenizer", help="a Qwen2.5-VL processor (path or hub id); default: the local one"
    )
    parser.add_argument("--shared-prefix", choices=list(SHARED_PREFIX), default="both")
    parser.add_argument(
        "--prompts", type=int, default=2, help="prompts per rollout batch (n rollouts each)"
    )
    parser.add_argument("--steps", type=int, help="measured optimizer steps")
    parser.add_argument("--warmup", type=int, help="optimizer steps run before measuring")
    parser.add_argument(
        "--completion-length", type=int, help="default: the recipe's on a GPU, short on the CPU"
    )
    parser.add_argument(
        "--min-pixels", type=int, help="default: the recipe's on a GPU, small on the CPU"
    )
    parser.add_argument(
        "--max-pixels", type=int, help="default: the recipe's on a GPU, small on the CPU"
    )
    parser.add_argument("--peak-tflops", type=float, help="the device's dense bf16 peak, for MFU")
    parser.add_argument("--logprob-tolerance", type=float, help="default: by dtype")
    parser.add_argument("--threads", type=int, help="torch CPU threads")
    parser.add_argument(
        "--work", type=Path, help="folder for the model, data and runs (default: temporary)"
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    logging.basicConfig(level=logging.WARNING)

    from mmcritic_dev.gpu_check import CheckFailed, CheckOptions, run_gpu_check, summary_line

    with tempfile.TemporaryDirectory() as folder:
        options = CheckOptions(
            work=args.work or Path(folder),
            model=args.model,
            layers=args.layers,
            vision_layers=args.vision_layers,
            tokenizer=args.tokenizer,
            shared_prefix=SHARED_PREFIX[args.shared_prefix],
            prompts=args.prompts,
            steps=args.steps,
            warmup=args.warmup,
            completion_length=args.completion_length,
            min_pixels=args.min_pixels,
            max_pixels=args.max_pixels,
            peak_tflops=args.peak_tflops,
            logprob_tolerance=args.logprob_tolerance,
            threads=args.threads,
        )
        try:
            results = run_gpu_check(options)
        except CheckFailed as failure:
            sys.exit(f"gpu check FAILED: {failure}")
    for result in results:
        print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print("\n".join(summary_line(result) for result in results))


if __name__ == "__main__":
    main()
