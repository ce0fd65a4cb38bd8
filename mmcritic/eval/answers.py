"""Reading a policy's answer: the final answer, an option letter, a number, yes or no.

The think block and the boxes are found with `mmcritic.rewards.parsing` and
`mmcritic.inference.answers`, the modules that also read a critic's verdict and a policy's boxed
answer, so a box means the same thing in training, inference and evaluation.
What is added here is what benchmarks need on top: the option letter in the manner of MMMU's
official parser, numbers written with thousands separators or percent signs, and yes/no.
Nothing here raises on model output.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from mmcritic.inference.answers import final_boxed
from mmcritic.rewards.parsing import THINK_CLOSE, THINK_OPEN, boxed_contents, normalize_tags

_TEXT_MACRO = re.compile(
    r"\\(?:text|textbf|textit|texttt|textrm|mathrm|mathbf|mathit|operatorname|emph)\s*\{([^{}]*)\}"
)
_ANSWER_PHRASE = re.compile(
    r"(?:final\s+answer|correct\s+answer|best\s+answer|correct\s+option|answer)"
    r"\s*(?:is|should\s+be|would\s+be|=|:)\s*:?\s*",
    re.IGNORECASE,
)
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_FRACTION = re.compile(r"([-+]?\d+)\s*/\s*(\d+)")
_LEADING_LETTER = re.compile(
    r"\(\s*([A-Za-z])\s*\)|([A-Za-z])\s*[.):](?!\w)|([A-Za-z])[ \t]*(?:\n|$)"
)
_UNCLEAR = re.compile(
    r"^(?:i\s+(?:cannot|can't|can\s+not|am\s+unable\s+to|am\s+not\s+able\s+to|don't\s+know)"
    r"|it\s+is\s+(?:unclear|not\s+clear|uncertain|impossible\s+to)|unclear|uncertain|"
    r"not\s+sure|unsure|cannot\s+(?:be\s+)?determine|there\s+is\s+not\s+enough)"
)
_YES_WORDS = r"yes|yeah|yep|correct|true|right|indeed|certainly"
_NO_WORDS = r"no|nope|nah|not|incorrect|false|wrong|isn't|doesn't|don't|aren't|wasn't|cannot"
_LEADING_YES_NO = re.compile(rf"^(?:(?P<yes>{_YES_WORDS})|(?P<no>{_NO_WORDS}))\b")
_STATED_YES_NO = re.compile(r"\banswer\s+(?:is|would\s+be|:)\s*:?\s*(?P<w>yes|no)\b")
_ANY_YES_NO = re.compile(r"\b(?:(?P<yes>yes)|(?P<no>no|nope|not|isn't|doesn't|aren't))\b")
_PUNCTUATION = re.compile(r"[^\w\s]")
_EDGE_PUNCTUATION = ",.!?;:'\" "
_MARKUP = str.maketrans("", "", "*$`")
_EMPHASIS = str.maketrans("", "", "*`")
# `$x$` around math; a `$` followed by a digit opens no math and closes none: it is currency
_MATH_DOLLARS = re.compile(r"\$([^$]*?)\$(?!\d)")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_JSON_ANSWER_KEYS = {"answer", "final_answer", "final answer", "choice", "option", "result"}


def final_answer(text: str) -> str:
    """The part of a response that states the answer.

    First the last box after the think block, read exactly as `Answer.final_answer` of
    `mmcritic.inference` reads it. Where that finds none: the text after the last "answer is" /
    "Answer:" phrase, up to the end of its line; else all of the answer text. An unclosed think
    block is then read as answer text rather than discarded: a policy benchmark scores what was
    said, and lmms-eval's parsers ignore think tags altogether.
    """
    boxed = final_boxed(text)
    if boxed is not None:
        return clean_latex(boxed)
    text = normalize_tags(text)
    close = text.rfind(THINK_CLOSE)
    region = text[close + len(THINK_CLOSE) :] if close >= 0 else text.replace(THINK_OPEN, "")
    boxes = boxed_contents(region)
    if boxes:
        return clean_latex(boxes[-1])
    stated = json_answer(region)
    if stated is not None:
        return clean_latex(stated)
    phrases = list(_ANSWER_PHRASE.finditer(region))
    if phrases:
        tail = region[phrases[-1].end() :].strip().splitlines()
        if tail and tail[0].strip():
            return clean_latex(tail[0]).rstrip(".")
    return clean_latex(region)


def json_answer(text: str) -> str | None:
    """The answer of a response written as JSON (`{"answer": "A"}`, also inside a ```json
    fence), as models asked for structured output write it; None when it is not such JSON."""
    match = _JSON_OBJECT.search(text)
    if match is None:
        return None
    try:
        value = json.loads(match.group())
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    for key, answer in value.items():
        if str(key).strip().lower() in _JSON_ANSWER_KEYS and isinstance(answer, str | int | float):
            return str(answer)
    return None


def clean_latex(text: str) -> str:
    """Drops `\\text{}`-style wrappers, math `$...$` delimiters, `*` and backticks, LaTeX's
    `\\%` and outer whitespace. A `$` before a number is a currency sign and stays: `$25.00`
    is DocVQA's answer as printed."""
    previous = None
    while previous != text:
        previous, text = text, _TEXT_MACRO.sub(r"\1", text)
    text = _MATH_DOLLARS.sub(r"\1", text).replace("\\%", "%").replace("\\$", "$")
    return text.translate(_EMPHASIS).strip()


def fold(text: str) -> str:
    """Unicode compatibility folding: fullwidth `ＳＴＯＰ` and `Ｂ` read as `STOP` and `B`."""
    return unicodedata.normalize("NFKC", text)


def option_letters(count: int) -> list[str]:
    """`A`, `B`, ... for `count` options."""
    return [chr(ord("A") + index) for index in range(count)]


def choice_letter(text: str, letters: Sequence[str], options: Sequence[str] = ()) -> str | None:
    """The option a short answer picks; None when it picks none.

    After folding fullwidth forms and dropping markup, first hit wins:
    1. the whole answer is a letter (any case);
    2. the answer opens with a letter marked as one: `B.`, `(B)`, `B)`, `B:`, or `B` alone on
       its first line ("C\\nBecause both the red one ...") — so an option text that holds a
       capital one-letter word ("D. A and B") is read as D;
    3. MMMU's `parse_multi_choice_response` patterns over the answer with line breaks read as
       spaces: `(B)`, ` B `, ` B.`, ` B)`, ` B:`, each time the letter mentioned last;
    4. the answer equals an option's text, or (over five words) contains it as whole words,
       punctuation ignored on both sides; several: the one mentioned last.
    Unlike MMMU, which draws a random letter when nothing matches, no match is None, so a score
    never depends on chance. See https://github.com/MMMU-Benchmark/MMMU/blob/main/eval/eval_utils.py.
    """
    core = fold(text).translate(_MARKUP).strip(_EDGE_PUNCTUATION + "\n\t")
    if len(core) == 1 and core.upper() in letters:
        return core.upper()
    leading = _LEADING_LETTER.match(core)
    letter = next((group for group in leading.groups() if group), "") if leading else ""
    if letter.upper() in letters:
        return letter.upper()
    padded = f" {' '.join(core.split())} "
    for pattern in ("({})", " {} ", " {}.", " {})", " {}:"):
        found = {letter: padded.rfind(pattern.format(letter)) for letter in letters}
        hits = {letter: at for letter, at in found.items() if at >= 0}
        if hits:
            return max(hits, key=hits.__getitem__)
    return _letter_from_option_text(core, letters, options)


def _letter_from_option_text(
    core: str, letters: Sequence[str], options: Sequence[str]
) -> str | None:
    answer = plain_words(core)
    texts = [plain_words(str(option)) for option in options]
    for letter, option in zip(letters, texts, strict=False):
        if option and answer == option:
            return letter
    if len(answer.split()) <= 5:
        return None
    hits = {}
    for letter, option in zip(letters, texts, strict=False):
        found = list(re.finditer(rf"(?<!\w){re.escape(option)}(?!\w)", answer)) if option else []
        if found:
            hits[letter] = found[-1].start()
    return max(hits, key=hits.__getitem__) if hits else None


def plain_words(text: str) -> str:
    """Lower-cased words without punctuation: the form answer and option texts compare in."""
    return " ".join(_PUNCTUATION.sub(" ", fold(text).lower()).split())


@dataclass(frozen=True)
class Number:
    """A number read from text; `percent` records a trailing `%`."""

    value: float
    percent: bool = False


def parse_number(text: str) -> Number | None:
    """The last number in a short answer: `1,000` is 1000, `12.0%` is 12 with `percent` set,
    `3/4` is 0.75, `$1.45` is 1.45. None when the text holds no number."""
    cleaned = _THOUSANDS.sub(lambda match: match.group().replace(",", ""), text.strip())
    cleaned = cleaned.translate(_MARKUP)
    fraction = _FRACTION.fullmatch(cleaned.rstrip(". "))
    if fraction and int(fraction.group(2)):
        return Number(int(fraction.group(1)) / int(fraction.group(2)))
    matches = list(_NUMBER.finditer(cleaned))
    if not matches:
        return None
    last = matches[-1]
    try:
        value = float(last.group())
    except ValueError:
        return None
    return Number(value, cleaned[last.end() :].lstrip().startswith("%"))


def yes_no(text: str) -> str | None:
    """`yes`, `no` or `unclear` as a careful grader reads a yes/no answer; None for none.

    The opening word decides ("Nope", "Not really", "Correct.", "No, it is not ... yes"); then
    a stated "the answer is yes/no"; then a stated inability to tell (`unclear`); then the
    first yes or no word anywhere ("It is not the most populous" is no)."""
    core = " ".join(fold(text).translate(_MARKUP).lower().strip(_EDGE_PUNCTUATION).split())
    if _UNCLEAR.match(core):
        return "unclear"
    leading = _LEADING_YES_NO.match(core)
    if leading:
        return "yes" if leading.group("yes") else "no"
    stated = _STATED_YES_NO.search(core)
    if stated:
        return stated.group("w")
    anywhere = _ANY_YES_NO.search(core)
    if anywhere:
        return "yes" if anywhere.group("yes") else "no"
    return None


def extract_numbers(text: str) -> list[float]:
    """Every number in the text, thousands separators removed (MMMU's `extract_numbers`)."""
    cleaned = _THOUSANDS.sub(lambda match: match.group().replace(",", ""), text)
    numbers = []
    for match in _NUMBER.finditer(cleaned):
        try:
            numbers.append(float(match.group()))
        except ValueError:
            continue
    return numbers
