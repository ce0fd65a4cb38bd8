"""GRPO's group baseline (n = 2, 4, 8) against POISE (n = 2) on the quickstart critic, at
equal generated tokens (64 rollouts a step for the same steps), over seeds.

Builds each seed's instruct base, pairs and warm start as the quickstart does (reused when
already there), trains critic GRPO once per setting and reports (JSON on stdout, `summary`
first) one line per setting: held-out accuracy right in both orders (mean and 95% interval
over seeds), generated tokens and the GRPO stage's wall time. The curve against generated
tokens is `WORK/baseline_compare.png`, the figures `WORK/baseline_compare.json`. A finished
run is read back, so several processes can each take some seeds and a last call with all of
them writes the report. Then the settings' step times are measured side by side on the first
seed (`--race-steps`, turns of 2 steps, threads pinned, 2 warm-up steps dropped), since the
runs' own wall times are comparable only on equally loaded cores.

    python benchmarks/baseline_compare.py [--work runs/baseline_compare] [--seeds 0 1 2] \
        [KEY=VALUE ...]

One CPU thread by default, as in benchmarks/quickstart_learning.py (the same result on any
machine).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from mmcritic.cli import run_reported
from mmcritic_dev.baseline_compare import SETTINGS, compare_baselines
from mmcritic_dev.quickstart import QuickstartData

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("runs/baseline_compare"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--threads", type=int, default=QuickstartData.threads)
    parser.add_argument(
        "--race-steps",
        type=int,
        default=12,
        help="then time the settings side by side, this many steps each after 2 dropped (0: skip)",
    )
    parser.add_argument(
        "--settings", nargs="+", choices=list(SETTINGS), help="some of the settings (default all)"
    )
    parser.add_argument("overrides", nargs="*", help="GRPO recipe overrides, e.g. max_steps=50")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    resume = f"run the same command to go on from the runs in {args.work}"
    sys.exit(run_reported(lambda: _compare(args), after_interrupt=lambda: resume))


def _compare(args: argparse.Namespace) -> dict:
    return compare_baselines(
        args.work,
        RECIPES / "quickstart_cpu_sft.yaml",
        RECIPES / "quickstart_cpu.yaml",
        QuickstartData(threads=args.threads),
        args.seeds,
        args.overrides,
        args.settings,
        args.race_steps,
    )


if __name__ == "__main__":
    main()
