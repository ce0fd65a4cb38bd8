"""Which scoring-corpus lines each reading rule decides (mmcritic_dev.rule_audit).

    python benchmarks/rule_audit.py --out runs/rule_audit.json

Prints the rules that decide no line (candidates to remove) and each rule's count; the JSON
lists every rule's matched, decided and harmed lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mmcritic_dev.rule_audit import audit

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "scoring"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=Path("runs/rule_audit.json"))
    args = parser.parse_args()
    reports = audit(args.corpus, progress=lambda text: print(text, file=sys.stderr, flush=True))
    rows = [
        {
            "rule": str(report.rule),
            "matched": len(report.matched),
            "decides": [list(key) for key in report.decides],
            "harms": [list(key) for key in report.harms],
            "unswitchable": report.unswitchable,
            "aliases": [str(alias) for alias in report.aliases],
        }
        for report in reports
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))
    idle = [row for row in rows if not row["decides"] and not row["unswitchable"]]
    for row in rows:
        print(f"{len(row['decides']):5d} decided {row['matched']:6d} matched  {row['rule']}")
    print(f"{len(idle)} of {len(rows)} rules decide no line; written {args.out}")


if __name__ == "__main__":
    main()
