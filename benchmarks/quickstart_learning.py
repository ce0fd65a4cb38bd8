"""Does GRPO teach the tiny model to judge? Held-out accuracy of the warm start vs after GRPO.

Builds the tiny instruct base (width 128, eight attention heads, about 1 M parameters, trained
to answer synthetic visual questions) and the synthetic colour pairs (the full six-colour
palette and the paper's judge prompt by default), runs the warm start
(recipes/quickstart_cpu_sft.yaml: the judge's format, with the base's own answer and the
response that states it in the think block), then critic GRPO (recipes/quickstart_cpu.yaml), all
on the CPU, and prints the base's accuracy on its questions and the held-out report of both
checkpoints: accuracy with the better response first and second, position-consistent accuracy
(right in both orders; chance is 25%), each with a 95% interval, and the gains in points.
`--seeds N` repeats it with N seeds (model init, data, training) and prints the mean gain and
its 95% interval.

    python benchmarks/quickstart_learning.py [--work runs/quickstart] [--seeds 3] [KEY=VALUE ...]

CPU threads: one by default, so a seed ends where it ends on any machine (`--threads N` is
faster on N idle cores, but more threads sum some gradients in another order and the seed can
take another path); the thread count is in the report (`data.threads`).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from mmcritic.cli import run_reported
from mmcritic_dev.quickstart import QuickstartData, run_seeds

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("runs/quickstart"))
    parser.add_argument("--task", default=QuickstartData.task)
    parser.add_argument("--colors", type=int, default=QuickstartData.colors)
    parser.add_argument(
        "--template",
        default=QuickstartData.template,
        help="prompt template (default %(default)s, the paper's; pairwise_compact is easier)",
    )
    parser.add_argument(
        "--hidden",
        type=int,
        default=QuickstartData.hidden_size,
        help="the tiny model's text and vision width (default %(default)s: about 1 M parameters)",
    )
    parser.add_argument(
        "--layers",
        type=int,
        default=QuickstartData.text_layers,
        help="the tiny model's language layers (default %(default)s)",
    )
    parser.add_argument(
        "--heads",
        type=int,
        default=QuickstartData.text_heads,
        help="the tiny model's language attention heads (default %(default)s; each of width "
        "hidden/heads, a multiple of 16)",
    )
    parser.add_argument(
        "--kv-heads",
        type=int,
        default=QuickstartData.text_kv_heads,
        help="its key/value heads (default %(default)s)",
    )
    parser.add_argument("--no-think-suffix", action="store_true")
    parser.add_argument("--n-train", type=int, default=QuickstartData.n_train)
    parser.add_argument("--seeds", type=int, default=1, help="runs, each with its own seed")
    parser.add_argument("--seed", type=int, default=QuickstartData.seed, help="the first seed")
    parser.add_argument(
        "--threads",
        type=int,
        default=QuickstartData.threads,
        help="CPU threads (default %(default)s: the same result on any machine; more threads "
        "are faster on idle cores, but sum some gradients in another order, so a seed can end "
        "elsewhere)",
    )
    parser.add_argument("overrides", nargs="*", help="GRPO recipe overrides, e.g. max_steps=50")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    resume = f"run the same command to go on from the checkpoints in {args.work}"
    sys.exit(run_reported(lambda: _learning(args), after_interrupt=lambda: resume))


def _learning(args: argparse.Namespace) -> dict:
    started = time.perf_counter()
    report = run_seeds(
        args.work,
        RECIPES / "quickstart_cpu_sft.yaml",
        RECIPES / "quickstart_cpu.yaml",
        QuickstartData(
            task=args.task,
            n_train=args.n_train,
            colors=args.colors,
            hidden_size=args.hidden,
            text_layers=args.layers,
            text_heads=args.heads,
            text_kv_heads=args.kv_heads,
            template=args.template,
            think_suffix=not args.no_think_suffix,
            seed=args.seed,
            threads=args.threads,
        ),
        args.seeds,
        overrides=args.overrides,
    )
    report["wall_seconds"] = round(time.perf_counter() - started, 1)
    return report


if __name__ == "__main__":
    main()
