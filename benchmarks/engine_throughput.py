"""Eval samples per second through the hf engine and through `transformers serve` servers.

The same eval slice (r1 policy prompts over pictures of four sizes, greedy) goes through the
in-process hf engine, through one server and through two, with the same CPU threads in total,
in rotating turns with the first round dropped (`mmcritic_dev.engine_race`). One line each:

    engine=<hf|openai> servers=<k> samples_per_s=<x> same_answers=<fraction>

    python benchmarks/engine_throughput.py [--model DIR] [--requests 32] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="checkpoint folder (default: the tiny model)")
    parser.add_argument("--requests", type=int, default=32, help="eval samples per round")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads per configuration")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds (one more warms)")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)

    from mmcritic.models import build_tiny_model
    from mmcritic_dev.engine_race import eval_slice, race_engines

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        model = args.model or build_tiny_model(work / "tiny")
        results = race_engines(
            model, work, eval_slice(args.requests), args.max_new_tokens, args.threads, args.rounds
        )
    for result in results:
        print(json.dumps(result.__dict__))
    for result in results:
        print(result.line())


if __name__ == "__main__":
    main()
