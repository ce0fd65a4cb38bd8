"""Regular expressions that are searched over long texts many times (preprocessing reads every
row of a 100k-row source; rewards read every rollout)."""

from __future__ import annotations

import re


def anchored(starts: str, body: str, flags: int = 0) -> re.Pattern:
    """`body` compiled to skip at once every position where no match can begin.

    Python's regex engine tries each alternative of a pattern at every position of the text; a
    lookahead on the characters a match can begin with (`starts`, a character class, matched
    with the same flags) rejects nearly all positions at that first step, which makes such
    patterns 2-3x faster on a long text. The matches are the same as `body`'s as long as
    `starts` holds every character a match can begin with; `tests/test_patterns.py` holds
    every anchored pattern of the package to its plain form."""
    return re.compile(f"(?=[{starts}])(?:{body})", flags)
