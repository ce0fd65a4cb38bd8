"""What the readers make of the scoring corpus's outputs rewritten the ways real outputs vary.

    python benchmarks/reading_variants.py --save F      # before a change of the readers
    python benchmarks/reading_variants.py --against F   # after it: each rewrite read otherwise

Exits 1 when a rewrite is read differently since --save. A change meant to read the same (a
refactor) must pass; a change meant to read better shows here what else it changes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mmcritic_dev.reading_variants import VARIANTS, changed_readings, variant_readings

DEFAULT_CORPUS = Path(__file__).parents[1] / "tests" / "fixtures" / "scoring"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--save", type=Path, help="write what each rewrite reads")
    parser.add_argument("--against", type=Path, help="name each rewrite read otherwise since")
    args = parser.parse_args()
    readings = variant_readings(args.corpus)
    count = sum(len(lines) for lines in readings.values()) * len(VARIANTS)
    print(f"{count} rewrites read ({', '.join(VARIANTS)})")
    if args.save:
        args.save.write_text(json.dumps(readings), encoding="utf-8")
    if args.against:
        changed = changed_readings(json.loads(args.against.read_text(encoding="utf-8")), readings)
        for name, number, variant, was, now in changed:
            print(f"changed: {name} line {number} {variant}: {was!r} -> {now!r}")
        print(f"{len(changed)} rewrites read differently since {args.against}")
        sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
