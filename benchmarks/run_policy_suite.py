"""Runs a checkpoint as a policy on the policy benchmark suite and prints the headline numbers.

The suite is every policy task in `mmcritic.eval` (MMMU, MathVista, MathVision, MathVerse,
MMStar, AI2D, ChartQA, DocVQA, OCRBench, HallusionBench, RealWorldQA, BLINK, MMVU, Video-MME),
greedy, with the think/boxed instruction, as the paper evaluates (`--protocol r1`, the default;
`--protocol lmms-eval` reproduces lmms-eval's Qwen2.5-VL setup). Flags are `mmcritic eval`'s;
`--tasks` narrows the suite. Video tasks need their videos: `--media-root videomme=DIR`.

    python benchmarks/run_policy_suite.py --model runs/r1 --output runs/r1/policy --limit 100
    python benchmarks/run_policy_suite.py --model runs/r1 --output runs/r1/bon8 \
        --tasks mathvista_testmini,mathvision_testmini --bon-n 8 --bon-strategy knockout
"""

from __future__ import annotations

import argparse
import json
import logging

from mmcritic.cli.eval import add_eval_arguments, run_eval_command
from mmcritic.eval.suites import POLICY_SUITE, headline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_eval_arguments(parser)
    parser.set_defaults(tasks=",".join(POLICY_SUITE))
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    print(json.dumps(headline(run_eval_command(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
