"""The shared-prefix pass's expected saving at Qwen2.5-VL's released shapes, from FLOP counts.

For one prompt group of n rows (the 7B recipe: n = 8, one group per chunk and per update
micro-batch of 8 rows), the forward FLOPs of all decoder layers in the standard pass and in the
shared pass, at prompt and completion lengths around the recipe's (prompts up to 6,142 tokens,
completions up to 2,048). Prints a table and, per model, one line:

    model=<name> n=<n> ratio_min=<x> ratio_max=<y>

    python benchmarks/shared_prefix_savings.py [--model qwen2.5-vl-7b] [--n 8]
"""

from __future__ import annotations

import argparse

from mmcritic_dev.prefix_savings import saving_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-vl-7b")
    parser.add_argument("--n", type=int, default=8, help="rows per prompt group")
    parser.add_argument("--prompts", type=int, nargs="+", default=[1000, 2000, 4000, 6142])
    parser.add_argument("--completions", type=int, nargs="+", default=[256, 512, 1024, 2048])
    args = parser.parse_args()
    table = saving_table(args.model, args.n, args.prompts, args.completions)
    print(f"{'prompt':>7} {'completion':>10} {'standard TFLOP':>15} {'shared TFLOP':>13} ratio")
    for row in table:
        print(
            f"{row['prompt']:>7} {row['completion']:>10} {row['standard_tflop']:>15} "
            f"{row['shared_tflop']:>13} {row['ratio']:.3f}"
        )
    ratios = [row["ratio"] for row in table]
    print(f"model={args.model} n={args.n} ratio_min={min(ratios):.3f} ratio_max={max(ratios):.3f}")


if __name__ == "__main__":
    main()
