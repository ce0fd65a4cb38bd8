"""The paper's claims at toy scale: does critic-only GRPO make a better policy, and does
self-critique (Best-of-8 by knockout) beat majority voting and a single sample, and does the
critic make a better policy as its reward?

On the CPU with the tiny model (`mmcritic_dev.critic_to_policy`): a base model that answers the
synthetic colour and count questions some of the time and writes a critic's verdict format, then
critic-only GRPO, and before and after it the policy's greedy accuracy and the accuracy of a
single sample, majority vote and Best-of-8 over 8 samples per question, per seed and as a mean
with its 95% interval over seeds; then policy GRPO from the same base rewarded by the trained
critic alone, and the same figures for the policy it ends with. Writes critic_to_policy.json
under --work and ends with one JSON line (percentages; after GRPO unless the name ends in
_before):

    {"policy_accuracy_before": .., "policy_accuracy_after": .., "bon_accuracy": ..,
     "majority_accuracy": .., "single_accuracy": .., "critic_rewarded_policy_accuracy": .., ...}

Seeds already run under --work are read back, so `--seed 3 --seeds 1` in another process runs a
seed in parallel and a later `--seeds 5` gathers them.

    python benchmarks/critic_to_policy.py [--seeds 3] [--quick] [--work runs/critic_to_policy]
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import replace
from pathlib import Path

from mmcritic.models.devices import set_cpu_threads
from mmcritic_dev.critic_to_policy import ToyScale, headline, run_seeds
from mmcritic_dev.toy_stages import Recipes

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("runs/critic_to_policy"))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument(
        "--quick", action="store_true", help="one seed, fewer questions and GRPO steps"
    )
    parser.add_argument("--threads", type=int, help="CPU threads (default: the usable cores)")
    parser.add_argument("overrides", nargs="*", help="GRPO recipe overrides, e.g. max_steps=50")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    set_cpu_threads(args.threads)
    toy = ToyScale.quick(args.seed) if args.quick else ToyScale()
    toy = replace(toy, critic=replace(toy.critic, seed=args.seed))
    seeds = 1 if args.quick else args.seeds
    recipes = Recipes(
        RECIPES / "toy_critic_cpu_sft.yaml",
        RECIPES / "toy_critic_cpu.yaml",
        RECIPES / "policy_grpo_critic_reward_cpu.yaml",
    )
    summary = run_seeds(args.work, toy, seeds, recipes, args.overrides)
    stages = ("before", "after", "critic_rewarded")
    print(json.dumps({key: summary[key] for key in stages}, indent=2))
    print(json.dumps(headline(summary)))


if __name__ == "__main__":
    main()
