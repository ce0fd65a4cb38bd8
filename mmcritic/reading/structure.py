"""The second stage of reading: where a response commits to an answer and where it does not.

After its format is read (`markup`), a response is marked in one place: each self-correction,
turn, hedge, negation, conclusion, offer of alternatives, statement that it cannot tell and yes
or no, with its position. Readers ask a `Reading` ("what follows the last correction?") instead
of compiling their own patterns; a kind is marked when first asked for, so a reader pays only
for the kinds it uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mmcritic.reading.language import ordinals, pattern, words
from mmcritic.reading.markup import CJK

# a self-correction ("The answer is (C). Wait — ..."): only what follows it counts
_CORRECTIONS = pattern("corrections")
CORRECTION = re.compile(_CORRECTIONS, re.IGNORECASE)
# a turn away from an earlier reading: what follows it is what the answer settles on
TURNS = pattern("turns")
TURN = re.compile(rf"(?:,|;|\.)?\s*(?:{TURNS}|{_CORRECTIONS})", re.IGNORECASE)
# a turn as a yes/no answer makes it ("Yes, in reality ..., but in the chart, no")
YES_NO_TURN = re.compile(TURNS)
# a second reading offered after the first: "MARKET or possibly MARKETS"
HEDGES = pattern("hedges")
HEDGE = re.compile(HEDGES, re.IGNORECASE)
# a value offered as possible ("it might be 10"), and the words that join alternatives
_POSSIBLE = rf"\b{pattern('possibilities')}\b"
HEDGED_VALUE = re.compile(rf"(?:{HEDGES}|{_POSSIBLE})[^.;!?]{{0,40}}?\d", re.I)
_OR, _MAYBE = rf"\b{pattern('or_words')}", rf"\b{pattern('maybe_words')}\b"
NEGATION = re.compile(pattern("negations"), re.IGNORECASE)
# a stated inability to tell, anywhere in an answer: "I can't tell"
CANNOT_TELL = re.compile(pattern("cannot_tell"))
CONCLUSIONS = pattern("conclusions")
# in a language written without spaces ("面积是36，所以边长为6"); none listed matches nothing
_UNSPACED = "|".join(w for w in words("conclusions") if re.search(f"[{CJK}]", w)) or "(?!)"
CONCLUSION = re.compile(rf",?\s+{CONCLUSIONS},?\s+|[，、；]?(?:{_UNSPACED})[，、]?", re.IGNORECASE)
# two answers rather than one: "5–7 years", "between 5 and 7", "either A or B", "both 3 and 4",
# "could be a bar or a spit", "65° or 115°", "5 (or √73)" (not "5:2, or 2.5", nor from inside
# "1,000,000")
_RANGE = re.compile(r"\d\s*[–—]\s*[$€£]?\d")
_VALUE_PAIR = re.compile(
    rf"\b{pattern('value_pairs')}\s+[$€£]?\d".replace("{value}", r"[$€£]?\d[\d.,]*\s*\S{0,8}"), re.I
)
_EITHER_OR = re.compile(
    rf"(?:\b{pattern('either_words')}\b|{_POSSIBLE})(?:[^.;!?]|(?<=\b[A-Z])\.){{1,80}}?{_OR}\b",
    re.IGNORECASE,
)
_VALUE_OR_VALUE = re.compile(
    r"(?<![\w.])(?<!\d,)-?[$€£]?\d+(?:[.,]\d+)*\s*(?:°|%|Ω|[a-z]{1,12}\b)?"
    rf"(?:\s+|,\s+(?={_OR}\s+{_MAYBE}))\(?{_OR}\s+(?:{_MAYBE}\s+)?-?[$€£]?(?:√|\\sqrt\{{?)?\d",
    re.I,
)
# two values of one label joined by "or": "July 8 or July 9"
_LABELLED_VALUES_OR = re.compile(rf"\b([A-Z][a-z]+\.?)\s+\d[\d,.]*\s+{_OR}\s+\1\s+\d")
# two quoted, bold, capitalised or coded readings joined by "or": "FRESH or FRESCO", "B12 or
# B17", "the **50-64** or the **65+** group"
_CODE = r"(?:[A-Z]{2,}|[A-Z]+\d\w*)"
_QUOTED_OR = re.compile(
    rf"[\"“][^\"”\n]{{1,60}}[\"”],?\s+{_OR}\s+[\"“]|['‘][^'’\n]{{1,60}}['’],?\s+{_OR}\s+['‘]"
    rf"|\*\*[^*\n]{{1,60}}\*\*,?\s+{_OR}\s+(?:{pattern('articles')}\s+)?\*\*"
    rf"|\b{_CODE},?\s+{_OR}\s+{_CODE}\b"
)
# a yes or a no stated as such in a lower-cased answer ("no longer", "no one" are neither)
YES_NO = re.compile(rf"\b(?:(?P<yes>{pattern('yes_words')})|(?P<no>{pattern('no_words')}))\b")

# an ordinal in any language ("fourth", "第四"), says its place ("o4")
ORDINAL = re.compile(
    "|".join(f"(?P<o{place}>{forms})" for place, forms in enumerate(ordinals(), start=1)) or "(?!)",
    re.IGNORECASE,
)

# each kind a reading marks -> the names of its patterns, looked up when a reading is made so
# that `mmcritic_dev.rule_audit` can switch each one off
MARKS: dict[str, tuple[str, ...]] = {
    "correction": ("CORRECTION",),
    "turn": ("TURN",),
    "yes_no_turn": ("YES_NO_TURN",),
    "negation": ("NEGATION",),
    "cannot_tell": ("CANNOT_TELL",),
    "conclusion": ("CONCLUSION",),
    "hedged_value": ("HEDGED_VALUE",),
    "alternatives": (
        "_RANGE",
        "_VALUE_PAIR",
        "_EITHER_OR",
        "_VALUE_OR_VALUE",
        "_LABELLED_VALUES_OR",
    ),
    # unlike "alternatives", a range or two numbers are not two readings of a text answer,
    # since a document's answer may be one ("1985-1990")
    "two_readings": ("_EITHER_OR", "_QUOTED_OR", "_LABELLED_VALUES_OR"),
    "yes_no": ("YES_NO",),
    "ordinal": ("ORDINAL",),
}


@dataclass(frozen=True)
class Mark:
    """One marked place of a response: its kind, where it starts and ends, what it says."""

    kind: str
    start: int
    end: int
    text: str
    # the named group that matched ("yes", "no", "o4" for "fourth"; each is outermost, so it
    # is the match's last group), else the kind
    says: str


@dataclass
class Reading:
    """A response with its marks, found per kind when first asked for."""

    text: str
    _found: dict[str, list[Mark]] = field(default_factory=dict, repr=False)

    def marks(self, kind: str, start: int = 0) -> list[Mark]:
        """The marks of one kind in order of position, from `start` on (searched from there, so
        a mark may overlap one that starts before it)."""
        if start:
            return _marks(self.text, kind, start)
        if kind not in self._found:
            self._found[kind] = _marks(self.text, kind)
        return self._found[kind]

    def has(self, kind: str, start: int = 0) -> bool:
        return bool(self.marks(kind, start))

    def first(self, kind: str, start: int = 0) -> Mark | None:
        return found[0] if (found := self.marks(kind, start)) else None

    def last(self, kind: str) -> Mark | None:
        return found[-1] if (found := self.marks(kind)) else None

    def after_last(self, kind: str) -> str | None:
        """The text after the last mark of a kind; None when there is none."""
        mark = self.last(kind)
        return None if mark is None else self.text[mark.end :]

    def parts(self, kind: str) -> list[str]:
        """The text cut at every mark of a kind ("48 and 60, so the tallest is 60" at "so");
        a mark that overlaps the one before it cuts nothing more."""
        parts, start = [], 0
        for mark in self.marks(kind):
            if mark.start >= start:
                parts.append(self.text[start : mark.start])
                start = mark.end
        return [*parts, self.text[start:]]

    def said(self, kind: str) -> set[str]:
        """What the marks of a kind say: {"yes", "no"} for an answer that states both."""
        return {mark.says for mark in self.marks(kind)}


def reading_of(text: str) -> Reading:
    """The structured reading of a response's text (its format already read)."""
    return Reading(text)


def _marks(text: str, kind: str, start: int = 0) -> list[Mark]:
    found = [
        Mark(kind, match.start(), match.end(), match.group(), match.lastgroup or kind)
        for name in MARKS[kind]
        for match in globals()[name].finditer(text, start)
    ]
    return sorted(found, key=lambda mark: (mark.start, mark.end))
