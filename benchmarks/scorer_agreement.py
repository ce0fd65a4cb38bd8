"""Agreement of every scorer, and of the training reward, with a careful grader's labels.

Reads the labelled corpora in tests/fixtures/scoring (or --corpus DIR) and prints, per scorer,
how often mmcritic agrees with the label; where lmms-eval is importable (it is not a dependency)
and an adapter exists, lmms-eval's own function on the same outputs, side by side.

    python benchmarks/scorer_agreement.py [--corpus DIR] [--show-misses] [--save F] [--against F]

--save writes whether each line agrees; --against reads such a file, names every line whose
agreement moved since, and exits 1 if any line that agreed no longer does: the check a change
of the readers must pass line by line.

lmms-eval is not a dependency (its own requirements pin another stack). To see its column, put
the package and the few modules its task utilities import in a folder of their own:

    pip install --no-deps --target /tmp/lmms lmms-eval==0.7.3 loguru tenacity evaluate \
        sacrebleu portalocker tabulate colorama lxml opencv-python-headless
    PYTHONPATH=/tmp/lmms python benchmarks/scorer_agreement.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mmcritic_dev.scorer_agreement import (
    corpus_agreement,
    lmms_eval_agreement,
    moved_lines,
    read_corpus,
)

DEFAULT_CORPUS = Path(__file__).parents[1] / "tests" / "fixtures" / "scoring"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--save", type=Path, help="write whether each line agrees")
    parser.add_argument("--against", type=Path, help="name the lines that moved since a --save")
    args = parser.parse_args()
    print(f"{'scorer':24} {'n':>5} {'mmcritic':>9} {'lmms-eval':>10}")
    total = agreed = 0
    agrees: dict[str, list[bool]] = {}
    for path in sorted(args.corpus.glob("*.jsonl")):
        lines = read_corpus(path)
        ours = corpus_agreement(path.stem, lines)
        reference = lmms_eval_agreement(path.stem, lines)
        shown = f"{reference.rate:10.1%}" if reference else f"{'n/a':>10}"
        print(f"{path.stem:24} {ours.total:5d} {ours.rate:9.1%} {shown}")
        total, agreed = total + ours.total, agreed + ours.agreed
        agrees[path.stem] = ours.agrees
        if args.show_misses:
            for miss in ours.misses:
                print(f"    line {miss['line']}: {miss}")
    print(f"{'all':24} {total:5d} {agreed / max(total, 1):9.1%}")
    if args.save:
        args.save.write_text(json.dumps(agrees), encoding="utf-8")
    if args.against:
        moved = moved_lines(json.loads(args.against.read_text(encoding="utf-8")), agrees)
        for name, number, now in moved:
            print(f"moved: {name} line {number} {'now agrees' if now else 'NO LONGER AGREES'}")
        print(f"{len(moved)} lines moved since {args.against}")
        if any(not now for _, _, now in moved):
            sys.exit(1)


if __name__ == "__main__":
    main()
