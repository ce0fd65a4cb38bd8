"""Anchored patterns (`mmcritic.patterns.anchored`) match exactly where their plain forms do."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

PACKAGE = Path(__file__).parents[1] / "mmcritic"


def _modules_using_anchored() -> list[str]:
    """Every module of the package that builds a pattern with `anchored` (directly or through a
    helper named in it), so a new one cannot escape the comparison below."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "patterns.py" and "anchored(" in path.read_text(encoding="utf-8"):
            found.append(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
    return found


def _anchored_patterns() -> dict[tuple[str, str], re.Pattern]:
    patterns = {}
    for module_name in _modules_using_anchored():
        for name, value in vars(importlib.import_module(module_name)).items():
            for position, entry in enumerate(value if isinstance(value, list) else [value]):
                for part, item in enumerate(entry if isinstance(entry, tuple) else (entry,)):
                    if isinstance(item, re.Pattern) and item.pattern.startswith("(?=["):
                        patterns[(module_name, f"{name}[{position}][{part}]")] = item
    return patterns


PATTERNS = _anchored_patterns()
# fragments of every wording the patterns look for, in both cases, with the characters whose
# case folding is not ASCII (Kelvin sign, long s, dotless and dotted i)
FRAGMENTS = [
    *("The first response:", "the Second Answer :", "[Response 1]:", "Answer B:", "USER:"),
    *("[The Start of Assistant 2's Answer]", "[The End of Assistant A's Answer]", "\n\n"),
    *("[User Question]", "Query:", "Instruction :", "Please evaluate", "Give it a score"),
    *("better response is: [the second", "Overall Judgment: Answer 2", "I prefer Output B"),
    *("The first one is clearly superior", "equally good", "is a tie", "neither answer is"),
    *("Score: 8", "7 out of 10", "[[9]]", "rating of 4", "scale of 1 to 10", "1-100"),
    *("\\boxed{2}", "\\BOXED {", "< /Think >", "<think>", "[[A>>B]]", "[[ tie ]]", "[[C]]"),
    *("The better response is:", "OVERALL JUDGEMENT:", "the  better response:"),
    *("\u212a", "\u017f", "\u0131", "\u0130", "RESPONSE", "answer", " ", "x", "\n", "[", "]"),
]


def test_every_module_that_anchors_a_pattern_is_compared():
    assert {module for module, _ in PATTERNS} == set(_modules_using_anchored())
    assert len(PATTERNS) >= 16, sorted(PATTERNS)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join))
def test_each_anchored_pattern_matches_exactly_where_its_plain_form_does(text):
    """The lookahead only skips positions faster; a start character left out of it would drop
    matches, which this compares against the pattern without the lookahead."""
    for name, pattern in PATTERNS.items():
        body = pattern.pattern[pattern.pattern.index("])(?:") + 5 : -1]
        plain = re.compile(body, pattern.flags)
        spans = [match.span() for match in pattern.finditer(text)]
        assert spans == [match.span() for match in plain.finditer(text)], (name, text)
