"""Reading a critique's verdict on one answer: is it correct?

The critique prompt (`templates/critique.txt`) asks for `correct` or `incorrect` alone in the
box; test-time refinement and the critic's discriminability reward both read it here. The
verdict words are data (`verdict_correct`, `verdict_incorrect` in
`mmcritic/reading/languages/<code>.json`); a box must be one of them whole, so "partially
correct" is no verdict rather than a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from mmcritic.reading.language import LANGUAGES, phrases
from mmcritic.rewards.answers import as_judged, final_boxed

CorrectnessReason = Literal["ok", "no_box", "unrecognised"]

# \textbf{Incorrect}: the macro and its braces go, the word stays
_MACRO = re.compile(r"\\[a-zA-Z]+\s*\{|[{}]")
_DECORATION = re.compile(r"[\s$*`\"'.!。！:：]+")


@dataclass(frozen=True)
class Correctness:
    """`accepts` is True when the critique calls the answer correct, False when incorrect,
    None when its box says neither (`reason` says why)."""

    accepts: bool | None
    box: str | None
    reason: CorrectnessReason


def parse_correctness(text: str) -> Correctness:
    """The verdict in the critique's last box after its think block."""
    box = final_boxed(text)
    if box is None:
        return Correctness(None, None, "no_box")
    accepts = _verdict_words().get(_plain(box))
    return Correctness(accepts, box, "ok" if accepts is not None else "unrecognised")


def _plain(box: str) -> str:
    words = _MACRO.sub(" ", box).lower()
    return " ".join(part for part in _DECORATION.split(words) if part)


@cache
def _verdict_words() -> dict[str, bool]:
    words: dict[str, bool] = {}
    for code in LANGUAGES:
        words |= {_plain(word): True for word in phrases(code, "verdict_correct")}
        words |= {_plain(word): False for word in phrases(code, "verdict_incorrect")}
    return words


def shown_critique(text: str) -> str:
    """A critique as the policy is shown it when it revises: the reasoning and "Verdict: X" in
    plain words, without think tags or boxes the policy could copy into its own answer."""
    return as_judged(text, "Verdict")
