"""Runs a checkpoint as a critic on the critic benchmark suite and prints the headline numbers.

The suite: VL-RewardBench, MM-RLHF-RewardBench and Multimodal RewardBench. The first order is the
one published numbers use; `--both-orders` also judges every pair swapped and adds the averaged,
consistent (right in both orders) accuracy and the position-consistency rate. The judge prompt is
the critic's training template (`--protocol r1`, the default) or the benchmarks' own
(`--protocol lmms-eval` or `official`), verdicts then read by their rules first. Multimodal
RewardBench is not on the hub: `--task-data multimodal_rewardbench=<clone>/data/all_data.json`.

    python benchmarks/run_critic_suite.py --model runs/r1 --output runs/r1/critic --both-orders \
        --task-data multimodal_rewardbench=mmrb/data/all_data.json
"""

from __future__ import annotations

import argparse
import json
import logging

from mmcritic.cli.eval import add_eval_arguments, run_eval_command
from mmcritic.eval.suites import CRITIC_SUITE, headline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_eval_arguments(parser)
    parser.set_defaults(tasks=",".join(CRITIC_SUITE))
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    print(json.dumps(headline(run_eval_command(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
