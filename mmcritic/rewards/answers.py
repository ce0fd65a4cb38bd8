"""Reading what a model wrote: the rationale, the final boxed answer and a pointwise score.

Following the rule of `mmcritic.rewards.parsing`, the parser of training rewards and verdicts:
only boxes after the think block count, and an unclosed think block has no answer.
"""

from __future__ import annotations

import re

from mmcritic.reading.language import pattern
from mmcritic.reading.markup import MARKUP, STYLE_MACRO, boxed_contents
from mmcritic.rewards.parsing import THINK_CLOSE, THINK_OPEN, VERDICT_MARKER, normalize_tags
from mmcritic.text import comparable

_SCORE = re.compile(rf"(?P<s>[+-]?\d+(?:\.\d+)?)(?:\s*(?:/|{pattern('out_of')})\s*\d+(?:\.\d+)?)?")
_BOX = re.compile(r"\\boxed\s*\{([^{}]*)\}")
_MAX_BOX_DEPTH = 8  # no answer nests boxes deeper than this


def rationale(text: str) -> str:
    """The reasoning inside the think block, or the whole text when the model wrote none."""
    text = normalize_tags(text)
    start, end = text.find(THINK_OPEN), text.rfind(THINK_CLOSE)
    return (text[start + len(THINK_OPEN) : end] if 0 <= start < end else text).strip()


def final_boxed(text: str) -> str | None:
    """The content of the last box after the think block; None when there is none."""
    _, close, answer = normalize_tags(text).rpartition(THINK_CLOSE)
    if not close and THINK_OPEN in answer:
        return None
    boxes = boxed_contents(answer)
    return boxes[-1].strip() if boxes else None


def as_judged(text: str, label: str = "Final answer") -> str:
    """A policy's answer as a critic is shown it: the reasoning, then "Final answer: X" (`label`)
    for the boxed answer. Think tags, boxes and other verdict markers are taken out, or the
    answer could write the judge's verdict for it; a critique shown to the policy reads the same."""
    shown, answer = _unmarked(rationale(text)), final_boxed(text)
    return shown if answer is None else f"{shown}\n{label}: {_unmarked(answer)}".strip()


def _unmarked(text: str) -> str:
    """`text` without verdict markers, boxes kept as their contents. Read as the data guards read
    text (`comparable`), so a fullwidth `＼boxed｛2｝` is a marker too. Boxes unwrap one level a
    pass, up to `_MAX_BOX_DEPTH`; a marker left deeper is removed with the rest."""
    text = comparable(text)
    for _ in range(_MAX_BOX_DEPTH):
        text = _BOX.sub(r"\1", text)
    return " ".join(VERDICT_MARKER.sub(" ", text).split())


def parse_score(text: str) -> tuple[float | None, str]:
    """(score, reason): the number in the final box (`7/10` is 7), or None with `no_box` or
    `unrecognised`, so a failure is counted rather than read as a low score."""
    boxed = final_boxed(text)
    match = None if boxed is None else _SCORE.fullmatch(normalize_answer(boxed))
    if match is None:
        return None, "no_box" if boxed is None else "unrecognised"
    return float(match.group("s")), "ok"


def normalize_answer(answer: str) -> str:
    """The form answers are voted in: case, spacing, `$` and a trailing period do not count."""
    core = STYLE_MACRO.sub(r"\1", answer).translate(MARKUP)
    return " ".join(core.split()).lower().rstrip(".").strip()
