"""Self-critique scaling: accuracy against N = 1, 2, 4, ... sampled answers, per strategy.

Samples N_max answers per question once, then picks among the first N with each strategy
(knockout, round robin, pointwise, and majority vote as the baseline), and draws the curves with
the oracle (any of the N right) as the ceiling. Writes scaling.json, scaling_samples.jsonl and
scaling.png under --output. The logic is `mmcritic_dev.scaling`.

    python benchmarks/self_critique_scaling.py --model runs/r1 --task mathvista_testmini \
        --max-n 16 --limit 200 --output runs/r1/scaling
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from mmcritic_dev.scaling import ScalingOptions, run_scaling


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="model folder or hub id")
    parser.add_argument("--task", required=True, help="a policy task, e.g. mathvista_testmini")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--max-n", type=int, default=8, help="largest N; N runs over 1, 2, 4, ...")
    parser.add_argument(
        "--strategies", default="knockout,round_robin,pointwise,majority", help="comma-separated"
    )
    parser.add_argument("--limit", type=int, help="first N questions")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--both-orders", action="store_true", help="critic judges both orders")
    parser.add_argument("--max-new-tokens", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--task-data", help="local copy of the task's data")
    parser.add_argument("--media-root", help="folder relative media paths resolve against")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    ns = tuple(2**k for k in range(args.max_n.bit_length()) if 2**k <= args.max_n)
    options = ScalingOptions(
        model=args.model,
        task=args.task,
        output=args.output,
        ns=ns,
        strategies=tuple(s.strip() for s in args.strategies.split(",") if s.strip()),
        limit=args.limit,
        temperature=args.temperature,
        both_orders=args.both_orders,
        max_new_tokens=args.max_new_tokens,
        batch_size=args.batch_size,
        seed=args.seed,
        task_data=args.task_data,
        media_root=args.media_root,
        device=args.device,
        dtype=args.dtype,
    )
    print(json.dumps(run_scaling(options)["curves"], indent=2))


if __name__ == "__main__":
    main()
