"""Which scoring-corpus lines each reading rule decides (mmcritic_dev.rule_audit): each regex,
with --functions each function rule, with --phrases each phrase of the language data
(mmcritic_dev.phrase_audit).

    python benchmarks/rule_audit.py --out runs/rule_audit.json
    python benchmarks/rule_audit.py --functions --out runs/function_audit.json
    python benchmarks/rule_audit.py --phrases --out runs/phrase_audit.json
    python benchmarks/rule_audit.py --lines
    python benchmarks/rule_audit.py --cost runs/rule_audit.json runs/function_audit.json

Prints the rules that decide no line (candidates to remove) and each rule's count; the JSON
lists every rule's matched, decided and harmed lines. --cost reads such files and prints what
removing every rule that decides at most 0, 1, 2, 3, 5, 10 or 20 lines would save in layer lines
and cost in corpus lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mmcritic_dev import phrase_audit, rule_audit

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "scoring"
PRUNING_LIMITS = (0, 1, 2, 3, 5, 10, 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--phrases", action="store_true", help="audit the language data's phrases")
    parser.add_argument("--functions", action="store_true", help="audit the function rules")
    parser.add_argument("--lines", action="store_true", help="the reading layer's lines a file")
    parser.add_argument("--cost", type=Path, nargs="+", help="audit files to weigh pruning by")
    parser.add_argument("--out", type=Path, default=Path("runs/rule_audit.json"))
    args = parser.parse_args()
    if args.lines:
        _print_lines()
        return
    if args.cost:
        _print_costs([row for path in args.cost for row in json.loads(path.read_text())])
        return
    if args.phrases:
        rows = _phrase_rows(args.corpus)
    else:
        audit = rule_audit.audit_functions if args.functions else rule_audit.audit
        rows = _rule_rows(audit(args.corpus, progress=_progress))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))
    idle = [row for row in rows if not row["decides"] and not row.get("unswitchable")]
    for row in rows:
        print(f"{len(row['decides']):5d} decided {row['matched']:6d} matched  {row['rule']}")
    print(f"{len(idle)} of {len(rows)} rules decide no line; written {args.out}")


def _print_lines() -> None:
    lines = rule_audit.layer_lines()
    for file, count in lines.items():
        print(f"{count:6d}  {file}")
    print(f"{sum(lines.values()):6d}  in all (budget {rule_audit.LAYER_LINE_BUDGET:,})")


def _print_costs(rows: list[dict]) -> None:
    sizes = {name: len(lines) for name, lines in rule_audit.corpora(CORPUS).items()}
    corpus_lines = sum(sizes.values())
    for cost in rule_audit.pruning_costs(rows, PRUNING_LIMITS):
        print(
            f"rules deciding <= {cost.most:2d} lines: {cost.rules:3d} rules, "
            f"{cost.definition_lines:5d} layer lines, {cost.corpus_lines:4d} corpus lines decided "
            f"({cost.corpus_lines / corpus_lines:.2%} of {corpus_lines:,})"
        )
        lost = (f"{name} {100 * count / sizes[name]:.2f}" for name, count in cost.by_corpus.items())
        print(f"    points of agreement each scorer would lose: {', '.join(lost) or 'none'}")


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _rule_rows(reports: list[rule_audit.RuleReport]) -> list[dict]:
    return [
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


def _phrase_rows(corpus: Path) -> list[dict]:
    return [
        {
            "rule": str(report.phrase),
            "phrase": report.phrase.text,
            "matched": len(report.matched),
            "decides": [list(key) for key in report.decides],
            "harms": [list(key) for key in report.harms],
        }
        for report in phrase_audit.audit(corpus, progress=_progress)
    ]


if __name__ == "__main__":
    main()
