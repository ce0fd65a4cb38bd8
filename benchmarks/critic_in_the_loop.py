"""The critic in the loop at toy scale: (a) policy GRPO rewarded only by the trained critic,
(b) both-orders critic training against standard training, (c) critic Voting@k.

On the CPU with the tiny model (`mmcritic_dev.critic_in_the_loop` says what each part measures),
over seeds with 95% intervals; writes critic_in_the_loop.json under --work. `--quick` runs part
(a) for a few steps from a freshly built tiny model (one seed unless --seeds) and ends with one
JSON line:

    {"critic_calls": .., "policy_accuracy_before": .., "policy_accuracy_after": ..}

    python benchmarks/critic_in_the_loop.py [--quick] [--seeds N] [--parts abc]
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import replace
from pathlib import Path

from mmcritic.models.devices import set_cpu_threads
from mmcritic_dev.critic_in_the_loop import LoopScale, run_seeds
from mmcritic_dev.toy_stages import Recipes

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("runs/critic_in_the_loop"))
    parser.add_argument("--seeds", type=int, help="seeds to run (default 3; 1 with --quick)")
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--parts", default="abc", help="which of a, b, c to run")
    parser.add_argument("--quick", action="store_true", help="part (a), few steps")
    parser.add_argument("--threads", type=int, help="CPU threads (default: the usable cores)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    set_cpu_threads(args.threads)
    scale = LoopScale.quick(args.seed) if args.quick else LoopScale()
    scale = replace(scale, critic=replace(scale.critic, seed=args.seed))
    recipes = Recipes(
        RECIPES / "toy_critic_cpu_sft.yaml",
        RECIPES / "toy_critic_cpu.yaml",
        RECIPES / "policy_grpo_critic_reward_cpu.yaml",
    )
    seeds = args.seeds or (1 if args.quick else 3)
    parts = "a" if args.quick else args.parts
    summary = run_seeds(args.work, scale, recipes, seeds, parts)
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=2))
    if "critic_reward" in summary:
        part = summary["critic_reward"]
        keys = (
            "critic_calls",
            "policy_accuracy_before",
            "policy_accuracy_after",
            "sampled_accuracy_before",
            "sampled_accuracy_after",
        )
        print(json.dumps({key: part[key]["mean"] for key in keys}))


if __name__ == "__main__":
    main()
