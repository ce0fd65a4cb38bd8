"""Does critique improve answers at toy scale? Refinement per round before and after
refinement-aware critic training, and Critique-GRPO against plain GRPO
(`mmcritic_dev.refinement_study`), over seeds with 95% intervals.

    python benchmarks/refinement_study.py [--work runs/refinement_study] [--seeds 3] [--quick]

Each seed reuses the quickstart's instruct base of that seed when `--work/seed_<k>/
instruct_base` holds it (copy `runs/qs_<k>/instruct_base` there), and builds it otherwise.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from mmcritic.cli import run_reported
from mmcritic.models.devices import set_cpu_threads
from mmcritic_dev.refinement_study import REPORT_FILE, StudyScale, run_seed, summarize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("runs/refinement_study"))
    parser.add_argument("--seeds", type=int, default=3, help="runs, seeds 0..N-1 from --seed")
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--quick", action="store_true", help="a few steps of each stage")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    set_cpu_threads(args.threads)
    scale = StudyScale.quick() if args.quick else StudyScale()

    def study() -> dict:
        seeds = range(args.seed, args.seed + args.seeds)
        runs = [run_seed(args.work / f"seed_{seed}", seed, scale) for seed in seeds]
        summary = summarize(runs, scale)
        (args.work / REPORT_FILE).write_text(json.dumps(summary, indent=2))
        return summary

    resume = f"run the same command to go on from {args.work}"
    sys.exit(run_reported(study, after_interrupt=lambda: resume))


if __name__ == "__main__":
    main()
