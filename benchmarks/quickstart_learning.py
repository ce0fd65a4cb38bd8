"""Does GRPO teach the tiny model? Held-out accuracy of the warm start vs after GRPO.

Builds the tiny model and the synthetic colour task, runs the SFT format warm start
(recipes/quickstart_cpu_sft.yaml), then GRPO (recipes/quickstart_cpu.yaml), all on the CPU, and
prints the held-out preference accuracy of both checkpoints, the gain in points, and the path
of the reward/accuracy curve PNG.

    python benchmarks/quickstart_learning.py [--work runs/quickstart] [KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from mmcritic_dev.quickstart import QuickstartData, run_quickstart

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("runs/quickstart"))
    parser.add_argument("--task", default=QuickstartData.task)
    parser.add_argument("--colors", type=int, default=QuickstartData.colors)
    parser.add_argument(
        "--template",
        default=QuickstartData.template,
        help="prompt template (default %(default)s; 'pairwise' is the paper's prompt)",
    )
    parser.add_argument("--no-think-suffix", action="store_true")
    parser.add_argument("--n-train", type=int, default=QuickstartData.n_train)
    parser.add_argument("overrides", nargs="*", help="GRPO recipe overrides, e.g. max_steps=50")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    started = time.perf_counter()
    report = run_quickstart(
        args.work,
        RECIPES / "quickstart_cpu_sft.yaml",
        RECIPES / "quickstart_cpu.yaml",
        QuickstartData(
            task=args.task,
            n_train=args.n_train,
            colors=args.colors,
            template=args.template,
            think_suffix=not args.no_think_suffix,
        ),
        overrides=args.overrides,
    )
    report["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
