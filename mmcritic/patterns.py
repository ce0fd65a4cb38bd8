"""Regular expressions that are searched over long texts many times (preprocessing reads every
row of a 100k-row source; rewards read every rollout)."""

from __future__ import annotations

import re


def anchored(starts: str, body: str, flags: int = 0) -> re.Pattern:
    """`body` compiled to skip at once every position where no match can begin.

    A lookahead on `starts` (a character class, under the same flags) rejects nearly every
    position before each alternative is tried: 2-3x faster on a long text. The matches are
    `body`'s as long as `starts` holds every character a match can begin with;
    `tests/test_patterns.py` checks every anchored pattern against its plain form."""
    return re.compile(f"(?=[{starts}])(?:{body})", flags)
