"""Which scoring-corpus lines each phrase of the language data decides.

The rule audit (`rule_audit`) switches off a compiled regex; a regex built from the language
files (`mmcritic/reading/languages/`) holds one phrase per language and kind, so that audit sees
all of them as one rule. The readers compile the data when they are imported, so here a phrase is
switched off in a fresh interpreter whose language data lacks it, and the lines it could touch
(those whose text it matches, case-folded) are scored again there. A line a phrase *decides* is
one the scorers agree on with the phrase and not without it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# (corpus, line number from 1), as `rule_audit` keys lines; stated here because importing
# `rule_audit` imports the readers, which the child process must import only after its patch
LineKey = tuple[str, int]


@dataclass(frozen=True)
class Phrase:
    code: str
    kind: str
    position: int
    text: str

    def __str__(self) -> str:
        return f"{self.code}.{self.kind}[{self.position}]"


@dataclass
class PhraseReport:
    phrase: Phrase
    matched: list[LineKey] = field(default_factory=list)
    decides: list[LineKey] = field(default_factory=list)
    harms: list[LineKey] = field(default_factory=list)


def phrases() -> list[Phrase]:
    """Every regular-expression phrase of every language file."""
    from mmcritic.reading.language import LANGUAGES, PATTERN_KINDS
    from mmcritic.reading.language import phrases as listed

    return [
        Phrase(code, kind, position, text)
        for code in LANGUAGES
        for kind in PATTERN_KINDS
        for position, text in enumerate(listed(code, kind))
    ]


def audit(
    folder: Path,
    progress: Callable[[str], None] = lambda _: None,
    kinds: tuple[str, ...] | None = None,
) -> list[PhraseReport]:
    """Each phrase's report over the corpora in `folder` (of the `kinds` given, else all)."""
    from mmcritic_dev.rule_audit import corpora

    lines = corpora(folder)
    audited = [phrase for phrase in phrases() if kinds is None or phrase.kind in kinds]
    reports = [PhraseReport(phrase, _touched(phrase, lines)) for phrase in audited]
    keys = sorted({key for report in reports for key in report.matched})
    baseline = _agreements(folder, keys, None)
    for number, report in enumerate(reports, start=1):
        progress(f"phrase {number}/{len(reports)} {report.phrase}: {len(report.matched)} lines")
        if not report.matched:
            continue
        without = _agreements(folder, report.matched, report.phrase)
        report.decides = [key for key in report.matched if baseline[key] and not without[key]]
        report.harms = [key for key in report.matched if without[key] and not baseline[key]]
    return reports


# a verdict statement's slots (`mmcritic.rewards.parsing`), as loosely as a line may fill them:
# a line the phrase could touch is scored again, so more is only slower
_SLOTS = re.compile(r"\{(index|letter|place|who|better)\}")
_SLOT_FILLS = {
    "index": r"(?:[12ab]|\w+)",
    "letter": r"[12ab]",
    "place": r"\w+",
    "who": r"\w+\s*#?\s*",
    "better": r"[^.!?\n]*?",
}


def _touched(phrase: Phrase, lines: dict[str, list[dict[str, Any]]]) -> list[LineKey]:
    """The lines whose text the phrase matches, as written or case-folded and NFKC-normalised
    (the readers match some texts lower-cased and folded)."""
    found = re.compile(_SLOTS.sub(lambda slot: _SLOT_FILLS[slot.group(1)], phrase.text), re.I)
    touched = []
    for corpus, corpus_lines in lines.items():
        for number, line in enumerate(corpus_lines, start=1):
            text = str(line.get("response", line.get("completion", "")))
            folded = unicodedata.normalize("NFKC", text).casefold()
            if found.search(text) or found.search(folded):
                touched.append((corpus, number))
    return touched


def _agreements(folder: Path, keys: list[LineKey], without: Phrase | None) -> dict[LineKey, bool]:
    """Whether the scorers agree with each line's label, in a fresh interpreter whose language
    data lacks `without`."""
    request = {"folder": str(folder), "keys": keys, "without": without and without.__dict__}
    done = subprocess.run(
        [sys.executable, "-m", "mmcritic_dev.phrase_audit"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
    )
    return {(corpus, number): agreed for corpus, number, agreed in json.loads(done.stdout)}


def _score_without(request: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """The child's side: drop the phrase from the data, then import the readers and score."""
    from mmcritic.reading import language

    files = language._all()
    dropped = request["without"]
    if dropped:
        kept = [
            text
            for position, text in enumerate(files[dropped["code"]][dropped["kind"]])
            if position != dropped["position"]
        ]
        files[dropped["code"]] = {**files[dropped["code"]], dropped["kind"]: kept}
    from mmcritic_dev.rule_audit import _agrees, corpora

    lines = corpora(Path(request["folder"]))
    return [
        (corpus, number, _agrees(corpus, lines[corpus][number - 1]))
        for corpus, number in request["keys"]
    ]


if __name__ == "__main__":
    json.dump(_score_without(json.load(sys.stdin)), sys.stdout)
