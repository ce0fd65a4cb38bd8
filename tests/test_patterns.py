"""Anchored patterns (`mmcritic.patterns.anchored`) match exactly where their plain forms do."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from re import _parser as sre_parse

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


_CATEGORIES = {"CATEGORY_DIGIT": r"\d", "CATEGORY_SPACE": r"\s", "CATEGORY_WORD": r"\w"}
_ASCII = [chr(code) for code in range(128)]


def _first_characters(items) -> tuple[set[str], bool]:
    """The characters a match of parsed pattern items can begin with (ASCII members of a class),
    and whether the items can match empty; a start that could be any character raises."""
    firsts: set[str] = set()
    for op, argument in items:
        name = str(op)
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        if name == "LITERAL":
            return firsts | {chr(argument)}, False
        if name == "IN":
            return firsts | _class_members(argument), False
        if name == "SUBPATTERN":
            inner, empty = _first_characters(argument[-1])
        elif name == "BRANCH":
            found = [_first_characters(branch) for branch in argument[1]]
            inner, empty = set().union(*(chars for chars, _ in found)), any(e for _, e in found)
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            inner, empty = _first_characters(argument[2])
            empty = empty or argument[0] == 0
        else:
            raise AssertionError(f"a match may begin with any character ({name})")
        firsts |= inner
        if not empty:
            return firsts, False
    return firsts, True


def _class_members(members) -> set[str]:
    chars: set[str] = set()
    for op, argument in members:
        if str(op) == "LITERAL":
            chars.add(chr(argument))
        elif str(op) == "RANGE":
            chars |= {chr(code) for code in range(argument[0], argument[1] + 1)}
        elif str(op) == "CATEGORY" and str(argument) in _CATEGORIES:
            chars |= {c for c in _ASCII if re.match(_CATEGORIES[str(argument)], c)}
        else:
            raise AssertionError(f"a class of any character ({op} {argument})")
    return chars


def test_each_anchored_pattern_looks_ahead_for_every_character_a_match_can_begin_with():
    """Read from the pattern itself, so a wording no fragment above spells is covered too: a
    start left out of the lookahead would silently never match ("Final judgment:")."""
    for name, pattern in PATTERNS.items():
        starts, body = pattern.pattern[4:].split("])(?:", 1)
        firsts, empty = _first_characters(sre_parse.parse(body[:-1], pattern.flags))
        assert not empty, name
        lookahead = re.compile(f"[{starts}]", pattern.flags)
        missing = sorted(c for c in firsts if not lookahead.match(c))
        assert not missing, (name, missing)
