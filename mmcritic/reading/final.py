"""The final statement of a response: the answer it marks, or all of its answer text.

Every reader reads `final_answer` first: a box, a family's answer box, a JSON `answer`, or the
text after the last "the answer is" phrase of any language, unless the response corrects itself
after it.
"""

from __future__ import annotations

import re

from mmcritic.reading.language import pattern
from mmcritic.reading.markup import (
    BOLD,
    answer_region,
    boxed_contents,
    clean_latex,
    family_boxes,
    json_answer,
    unclosed_think,
    without_symbols,
)
from mmcritic.reading.statements import open_check, sentences, without_final_period
from mmcritic.reading.structure import YES_NO, reading_of

# what introduces a stated answer in each language: "the answer is", "**Final Answer**", "答案是"
_ANSWER_PHRASE = re.compile(pattern("answer_phrases"), re.IGNORECASE)
# what makes an answer phrase after it a supposition: "which would mean the answer is no"
_SUPPOSED = re.compile(rf"\b{pattern('suppositions')}\s+(?:the\s+)?$", re.IGNORECASE)
# two boxes offered as alternatives: "\boxed{A} or \boxed{B}"
_BOXES_OFFERED = re.compile(
    rf"\\boxed\s*\{{[^{{}}]*\}}\s*(?:{pattern('or_words')}|/|,)\s*\\boxed\s*\{{"
)
# a stated answer ends at a line break, CJK punctuation or a word that closes one (Korean 입니다)
_STATED_END = re.compile(r"[\n，。；！？]|" + pattern("answer_ends"))


def final_answer(text: str) -> str:
    """The part of a response that states the answer: `stated_answer`, else all of the answer
    text; nothing when a think block is opened and never closed (cut off while thinking)."""
    stated = stated_answer(text)
    if stated is not None or unclosed_think(text):
        return stated or ""
    # bold stays: in a free answer it marks the stated value (`answer_span`)
    return clean_latex(answer_region(text), keep_bold=True)


def stated_answer(text: str) -> str | None:
    """The answer a response marks as such, or None: two boxes offered as alternatives as "A or
    B", which every reader takes for a hedge; else the last box (as `rewards.answers.final_boxed`
    reads it), a family's box, a JSON `answer`, or the text after the last "answer is" phrase."""
    region = answer_region(text)
    boxes = boxed_contents(region)
    if _BOXES_OFFERED.search(region):
        offered = dict.fromkeys(clean_latex(box) for box in boxes)
        if len(offered) > 1:  # "\boxed{Smith} or \boxed{Smyth}": neither
            return " or ".join(offered)
    tagged = family_boxes(region)  # GLM-4.xV: <|begin_of_box|>A<|end_of_box|>
    # `final_boxed` of the bounded answer text, unless cut off while thinking beside a family box
    marked = tagged if tagged and (not boxes or unclosed_think(text)) else boxes
    stated = marked[-1] if marked else json_answer(region)
    return _phrased_answer(region) if stated is None else clean_latex(stated)


def _phrased_answer(region: str) -> str | None:
    """The text after the last "answer is" phrase that states something, up to the end of its
    line and sentence; None when a self-correction follows it. The last correction is found
    once and each tail cut at its line's end, so many empty phrases read in linear time."""
    corrections = [mark.start for mark in reading_of(region).marks("correction")]
    if (check := open_check(region)) is not None:  # "The answer is C. Let me double-check the"
        corrections = [at for at in corrections if at < check]
    for phrase in reversed(list(_ANSWER_PHRASE.finditer(region))):
        if corrections and corrections[-1] >= phrase.end():
            return None  # "The answer is (C)... no wait, (B)": the answer is read whole
        if _SUPPOSED.search(region[max(0, phrase.start() - 40) : phrase.start()]):
            continue
        # the last phrase that states something ("The answer is 5. The answer is" cut off)
        end = _STATED_END.search(region, phrase.end())
        tail = without_symbols(region[phrase.end() : end.start() if end else len(region)])
        tail = next(iter(sentences(tail)), "")  # up to the end of its sentence
        # a stated answer opening by negating, unless with a plain no, states nothing
        negation = reading_of(tail.strip()).first("negation")
        if negation and negation.start == 0 and not YES_NO.fullmatch(negation.text.lower()):
            continue  # "The answer is not 1 (...) or 4 (...); ... so it is 7."
        if tail.strip():
            return _stated_tail(tail)
    return None


def _stated_tail(tail: str) -> str:
    """A stated answer as written, without wrapping quotes or a final period; bold stays where
    it marks part of it ("**248** participants"), not where it wraps all of it."""
    text = without_final_period(clean_latex(tail, keep_bold=True)).strip().strip("'\"“”‘’")
    # the closing half of a bold opened before the phrase: "**Answer: 12**"
    if text.count("**") % 2:
        text = without_final_period(text.strip("*").strip())
    wrapped = BOLD.fullmatch(text.strip())
    return (wrapped.group(1) if wrapped else text).strip()
