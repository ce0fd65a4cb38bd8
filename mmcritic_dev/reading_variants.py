"""The scoring corpus's outputs rewritten the ways real outputs vary, read before and after.

`benchmarks/scorer_agreement.py --against` holds a change of the readers to every labelled line;
this holds it to inputs no labelled line holds. Each output is rewritten as a model might have
written it instead (cut off, opened by an answer phrase, after a think block, with a hedge
added, lower-cased, or another line's output for this line's question), and what each scorer
reads from each rewrite is saved. A refactor that should read the same reads every rewrite the
same; each rewrite it reads differently is a behaviour change to look at, right or wrong.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mmcritic_dev.scorer_agreement import output_key, read_corpus, reading


def _cut_off(text: str, other: str) -> str:
    words = text.split()
    return " ".join(words[: max(1, len(words) * 2 // 3)])


# name -> (the line's output, another line's output) -> the rewrite
VARIANTS: dict[str, Callable[[str, str], str]] = {
    "cut_off": _cut_off,
    "answer_phrase": lambda text, other: f"The answer is {text}",
    "think_block": lambda text, other: f"<think>Let me look at the image.</think>\n{text}",
    "hedged": lambda text, other: f"{text.rstrip()} Hmm, actually, I am not entirely sure.",
    "lower_case": lambda text, other: text.lower(),
    "another_output": lambda text, other: other,
}
Readings = dict[str, list[list[Any]]]  # corpus -> line -> one reading a variant, as JSON


def variant_readings(corpus: Path) -> Readings:
    """What each scorer reads from each variant of each line's output; the one other output a
    line is given is drawn with the corpus's name as the seed, so two runs rewrite alike."""
    readings: Readings = {}
    for path in sorted(corpus.glob("*.jsonl")):
        lines, key = read_corpus(path), output_key(path.stem)
        draw = random.Random(path.stem)
        readings[path.stem] = []
        for number, line in enumerate(lines, start=1):
            other = draw.choice(lines)[key]
            rewrites = [rewrite(line[key], other) for rewrite in VARIANTS.values()]
            readings[path.stem].append([reading(path.stem, number, line, t) for t in rewrites])
    return json.loads(json.dumps(readings))  # tuples as lists, as a saved file holds them


def changed_readings(before: Readings, after: Readings) -> list[tuple[str, int, str, Any, Any]]:
    """(corpus, line, variant, reading before, reading now) for each rewrite read differently;
    readings of another corpus (a file or line added or gone) are an error, not fewer changes."""
    shapes = [{name: len(lines) for name, lines in side.items()} for side in (before, after)]
    if shapes[0] != shapes[1]:
        raise ValueError(f"readings of another corpus: {shapes[0]} then {shapes[1]}; save again")
    return [
        (name, number, variant, was, now)
        for name, lines in after.items()
        for number, (old, new) in enumerate(zip(before[name], lines, strict=True), 1)
        for variant, was, now in zip(VARIANTS, old, new, strict=True)
        if was != now
    ]
