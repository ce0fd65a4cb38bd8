"""Rule-based per-sample scorers; each names the benchmark code it follows.

A scorer takes the final answer (`mmcritic.reading.final.final_answer`) and the target and
returns a score in [0, 1]; aggregation over samples lives in `mmcritic.eval.metrics`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

from mmcritic.eval.answers import (
    ASIDE,
    MAX_DIGITS,
    SCALES,
    Number,
    answer_span,
    extract_numbers,
    is_cut_off,
    number_value,
    number_word,
    parse_number,
    plain_words,
    values_only,
    without_other_counts,
    written_numbers,
)
from mmcritic.eval.choices import choice_letter, read_choice
from mmcritic.eval.text_answers import text_answer
from mmcritic.eval.yes_no import yes_no
from mmcritic.reading.final import stated_answer
from mmcritic.reading.language import pattern
from mmcritic.reading.markup import fold
from mmcritic.reading.statements import (
    YEAR,
    english_gloss,
    hedges_after,
    name_first,
    sentences,
    subject_answer,
    subject_core,
)
from mmcritic.reading.structure import reading_of

ANLS_THRESHOLD = 0.5
_NONE_STATED = re.compile(rf"\W*{pattern('none_stated')}", re.IGNORECASE)
_LATEX_COMMAND = re.compile(r"\\(?P<name>d?frac|sqrt)\s*(?=\{)")
_ROOT = re.compile(r"√\s*(\([^()]*\)|\d+(?:\.\d+)?|[a-zA-Z])")  # not a full stop: "9√3."
_UNICODE_MATH = {"π": "\\pi", "×": "\\times", "·": "\\cdot", "°": "^\\circ", "∞": "\\infty"}
_UNIT = re.compile(
    r"\s*(?:\\text\{\s*[a-zA-Z ]+\}(?:\^\{?\d\}?)?"
    rf"|\b(?:{pattern('unit_powers')}\s+)?(?:cm|mm|km|m|ft|{pattern('unit_words')})"
    r"(?:\^?\{?[23]\}?|²|³)?)\s*$"
)
_POINT_NAME = re.compile(r"^[A-Z]\s*(?=\()")
# a fraction of numbers written before a variable is its coefficient: "-2/3x" is -(2/3)x, as
# golds and models write a line's slope, where LaTeX parsing would read 2/(3x)
_SLASH_COEFFICIENT = re.compile(
    r"(?<![\w.)/])(\d+(?:\.\d+)?)/(\d+(?:\.\d+)?)(?=[a-zA-Z](?![a-zA-Z]))"
)
# the last line stating an equation, after any lead-in up to a colon: "**y = -(2/3)x + 2**"
_EQUATION_LINE = re.compile(r"^(?:[^\n:]*:)?[\s*$]*(?P<equation>[^\n=≈]+=[^\n=≈]+?)[\s*$.]*$", re.M)
# a decimal approximation beside the value, read as "≈ 5.66": "4√2 (approximately 5.66)"
_APPROXIMATE = pattern("approximations")
_APPROXIMATION_ASIDE = re.compile(rf"\(\s*(?:≈|~|{_APPROXIMATE})\s*(?P<value>[^()]*)\)", re.I)
# a number with its percent sign; not one glued to a Latin letter, which labels ("FY2022")
_NUMBER_IN_TEXT = re.compile(
    rf"(?<![A-Za-z])(-?\d+(?:\.\d+)?)(?:\s*(%|{pattern('percent_words')}))?"
    rf"(?:\s+({'|'.join(SCALES)})\b)?",
    re.IGNORECASE,
)
RELAXED_TOLERANCE = 0.05
# math-verify reads prose as LaTeX (500 characters take 0.4 s) and evaluates the numbers it meets
# (`10^{99999999}` would not finish): a longer candidate, or one with a numeral over MAX_DIGITS
# digits, a 4-digit exponent, a power tower or a 4-digit factorial, compares as a string only
MAX_VERIFIED_CHARS = 500
_POWER = r"(?:\^|\*\*)\s*[{(]?\s*[-+]?"
_UNVERIFIABLE = re.compile(
    rf"\d{{{MAX_DIGITS + 1}}}|{_POWER}\d{{4}}|{_POWER}\d+\s*{_POWER}|\d{{4}}\s*!"
)
# bare values on lines of their own and nothing else
_VALUE_LINES = re.compile(r"\s*(?:[$€£]?-?\d[\d,.]*%?[ \t]*\n\s*)+[$€£]?-?\d[\d,.]*%?\s*")
# a value told beside a text answer: "Norway at about 45%"
_VALUE_BESIDE = re.compile(
    rf"\s+{pattern('beside_prepositions')}\s+(?:{_APPROXIMATE}\s+)?[$€£]?-?\d[\d,.]*\s*%?$",
    re.IGNORECASE,
)
# words naming a label's kind before it: "Adults ages 18-29" is the label "18-29"
_KIND_THEN_LABEL = re.compile(r"^(?:[^\W\d]+\s+){1,3}(?=\S*\d\S*$)")
# a value with a decimal comma alone, as German or French write it: "31,4" (not "1,000")
_DECIMAL_COMMA_VALUE = re.compile(r"^(-?\d+),(\d{1,2})$")
_IRRATIONAL = re.compile(r"√|π|\\(?:sqrt|pi)\b")
_PLUS_MINUS = re.compile(r"±|\\pm\b")  # two values, one each side of zero: "k = ±2"
# digits that end a label ("Q3", "FY2022"), which states no quantity
_LABEL_DIGITS = re.compile(r"(?<=[A-Za-z])\d+\b")
# a label the question names by a word and a capital letter: "stage C", "labelled D"
_LABELLED_LETTER = re.compile(r"\b[A-Za-z]{3,}\s+[A-Z]\b(?![.:)'’-])")
_RATIO = re.compile(r"(?<![\d.:])(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)(?![\d:])")


def numeric_match(
    prediction: str, target: str | float, precision: int | None = None, question: str = ""
) -> bool:
    """Whether the answer states the target number, both rounded to `precision` decimals if given.

    MathVista's normalisation (integers as `int(float(x))`, floats as `round(float(x),
    precision)`), applied to the last number of the span stating the answer (`answer_span`), not
    to values the reasoning passes through. Fractions, number words, a percent sign on either
    side and a scale word ("$2 million": 2000000, or 2 on a chart in millions) are accepted; a
    year beside the value is a label unless the target is one ("earned $2 million in 2019").
    """
    span = answer_span(prediction, question)
    expected = parse_number(str(target))
    asks_year = expected is not None and _is_year(expected.value)
    predicted = parse_number(span) if asks_year else _quantity(span)
    if stated_answer(prediction) is None and _NONE_STATED.match(fold(prediction)):
        predicted = Number(0.0)  # "None of the bars are under 6.", "There are none."
    if expected is None or predicted is None or _offers_another(prediction, span):
        return False
    readings, wanted = predicted.readings, expected.value
    if precision is None:
        return any(math.isclose(v, wanted, rel_tol=1e-9, abs_tol=1e-9) for v in readings)
    return any(round(v, precision) == round(wanted, precision) for v in readings)


def relaxed_match(
    prediction: str, target: str, tolerance: float = RELAXED_TOLERANCE, question: str = ""
) -> bool:
    """ChartQA's relaxed accuracy, read as a careful grader reads it: a number stated as the
    answer within 5% of a numeric target, else the same text.

    Follows `relaxed_correctness` in Qwen-VL's evaluate_vqa.py (lmms-eval's chartqa), where `x%`
    reads as x/100, on the span stating the answer (`answer_span`). Added: separators, currency,
    units and scale words around the number, number words, a percent sign on one side only,
    yes/no answers that explain, and text differing in case or final punctuation. A year must
    match exactly (2018 is not 2019, although within 5%)."""
    target = str(target).strip()
    if plain_words(target) in ("yes", "no"):
        return yes_no(prediction, question) == plain_words(target)
    if _VALUE_LINES.fullmatch(prediction) and len(set(prediction.split())) > 1:
        return False  # "2016\n2017": two values, one on each line
    span = answer_span(prediction, question)
    expected = parse_number(target) if is_plain_number(target) else None
    if expected is None:
        stated = text_answer(prediction, question)
        # what follows its last self-correction: "Apple has the largest. Actually no, ... Samsung."
        corrected = reading_of(prediction).after_last("correction")
        if corrected is not None and not reading_of(corrected).has("cannot_tell"):
            prediction = corrected  # not "Food. Hmm, actually, I am not entirely sure."
        subject = subject_answer(prediction, question)  # "Norway has the highest share ..."
        core = subject_core(subject, question) if subject else None  # "The orange segments"
        named = subject_core(stated, question)  # "represented by the red line"
        bare = text_answer(ASIDE.sub("", prediction), question)  # "Transport (12.5)"
        valued = _VALUE_BESIDE.sub("", span)  # "The highest is Q3 with 21"
        glossed = english_gloss(prediction)  # "Londres tiene el alquiler más alto."
        found = [stated, core, named, bare, valued, glossed, name_first(prediction, question)]
        if re.search(r"\d", target) and not reading_of(stated).has("negation"):
            found.append(_KIND_THEN_LABEL.sub("", stated))
        return any(plain_words(c) == plain_words(target) for c in found if c is not None)
    if _offers_another(prediction, span):
        return False
    if YEAR.fullmatch(target):
        if any(number.value == expected.value for number in _stated_numbers(span)):
            return True
        named = _stated_numbers(text_answer(prediction, question))  # "2016, with 3.2m sales"
        return len(named) == 1 and named[0].value == expected.value
    predicted = (None if float(expected.value).is_integer() else _ratio(span)) or _quantity(span)
    return predicted is not None and _relaxed_equal(predicted, expected, tolerance)


def _offers_another(prediction: str, span: str) -> bool:
    """Whether an answer offers two values: in its span ("around 2019–2020", "between 30 and
    35") or, where it marks no answer, after it ("6 years. However, ... it might be 10",
    "Probably 45, but possibly 54")."""
    if reading_of(span).has("alternatives") or _offered_in_closing(prediction, span):
        return True
    if reading_of(span).has("hedged_value"):  # "probably 4/4, though it could also be 2/4"
        return True
    return stated_answer(prediction) is None and hedges_after(prediction, span)


def _offered_in_closing(prediction: str, span: str) -> bool:
    """Whether the closing conclusion offers the span's value as one of two ("..., so I'd put
    it somewhere between 30% and 50%"), not beside a range it only mentions ("72 bpm, within
    the normal 60–100 range")."""
    closing = reading_of((sentences(prediction) or [""])[-1]).parts("conclusion")[-1]
    at = closing.rfind(span)
    offers = reading_of(closing).marks("alternatives")
    return at >= 0 and any(mark.start <= at <= mark.end for mark in offers)


def _ratio(span: str) -> Number | None:
    """A ratio stated as "57:31", read as its value (1.84) for a fractional target."""
    found = _RATIO.search(fold(span))
    antecedent, consequent = map(number_value, found.groups()) if found else (None, None)
    return Number(antecedent / consequent) if antecedent is not None and consequent else None


def _quantity(span: str) -> Number | None:
    """The number an answer states as a quantity: its last number, passing over years told
    beside it as labels ("spent $5.2 billion in 2017" states 5.2)."""
    stated = _stated_numbers(span)
    quantities = [n for n in stated if not _is_year(n.value)]
    if quantities and len(quantities) < len(stated):
        return quantities[-1]
    return parse_number(_LABEL_DIGITS.sub("", span))  # "14.8% share in Q3" states 14.8


def _is_year(value: float) -> bool:
    return value.is_integer() and YEAR.fullmatch(str(int(value))) is not None


def _stated_numbers(span: str) -> list[Number]:
    """Every number in an answer span, each with its own percent sign: a year is a label the
    answer may state beside other figures ("peaked in 2016 at 320 units"); a decimal comma is a
    point ("14,2 Prozent")."""
    text = values_only(number_word(span))  # not a rate's base: "10 per 1,000"
    return [  # each with its scale word: "$5.2 billion"
        Number(value, bool(match.group(2)), SCALES.get((match.group(3) or "").lower(), 1.0))
        for match in _NUMBER_IN_TEXT.finditer(written_numbers(text).replace(",", ""))
        if (value := number_value(match.group(1))) is not None
    ]


def _relaxed_equal(predicted: Number, expected: Number, tolerance: float) -> bool:
    wanted = expected.value * (0.01 if expected.percent else 1.0)
    pairs = [(predicted.value * (0.01 if predicted.percent else 1.0), wanted)]
    if predicted.percent != expected.percent:
        pairs.append((predicted.value, expected.value))
    if predicted.scale != 1.0:  # "1.5 million" for 1500000, or for 1.5 on a chart in millions
        pairs.append((predicted.value * predicted.scale, wanted))
    return any(
        abs(value - goal) / abs(goal) <= tolerance if goal else value == 0 for value, goal in pairs
    )


def is_plain_number(text: str) -> bool:
    """Whether the text is one number as written ("1,234.5", "12%"), with nothing else to read."""
    stripped = text.strip().rstrip(".").replace(",", "").removesuffix("%").strip()
    try:
        float(stripped)
    except ValueError:
        return False
    return True


def anls(prediction: str, targets: Sequence[str], threshold: float = ANLS_THRESHOLD) -> float:
    """Average Normalized Levenshtein Similarity for one question (DocVQA, InfoVQA).

    Biten et al., ICCV 2019, exactly as the DocVQA script and lmms-eval's `anls` compute it: the
    edit distance between the lower-cased, whitespace-collapsed strings over the longer *raw*
    string; the best target's `1 - that`, set to 0 below `threshold`.
    """
    predicted = " ".join(prediction.strip().lower().split())
    best = 0.0
    for target in targets:
        expected = " ".join(str(target).strip().lower().split())
        longest = max(len(str(target)), len(prediction))
        best = max(best, 1.0 - levenshtein(predicted, expected) / longest if longest else 1.0)
    return best if best >= threshold else 0.0


def levenshtein(left: str, right: str) -> int:
    """Edit distance with unit costs (rapidfuzz's C implementation)."""
    return Levenshtein.distance(left, right)


def closest_option(prediction: str, options: Sequence[str]) -> str:
    """The option with the smallest edit distance to the prediction (MathVista's fallback)."""
    return min(options, key=lambda option: levenshtein(prediction, str(option)))


def math_equal(prediction: str, target: str, question: str = "") -> bool:
    """Mathematical equivalence by math-verify (`\\frac{1}{2}` equals `0.5`), after a plain
    string comparison so non-mathematical answers still match. The answer is tried as written,
    as its stated span and as its last formula, with Unicode math (`√3`) as LaTeX and a trailing
    unit dropped."""
    span = answer_span(prediction, question)  # "" for one cut off before its value
    if not span.strip() or not str(target).strip():
        return False
    prediction = span if is_cut_off(prediction) else prediction  # read what it said before
    if reading_of(span).has("alternatives") or (
        _PLUS_MINUS.search(span) and not _PLUS_MINUS.search(target)
    ):
        return False  # "So angle 1 is 65° or 115°.", "So k = ±2." where the gold is one value
    # "60 cm^3" is also 60; math-verify reads the gold's LaTeX form only, since it reads "6√3" as 6
    gold = _math_form(str(target))
    written = {squashed(str(target)), squashed(gold)}
    # shortest first: math-verify reads a sentence of prose as LaTeX at many times a value's cost
    candidates = sorted(_math_candidates(prediction, span), key=len)
    if "=" in gold:  # an equation meets the gold in any equivalent form: "2x + 3y - 6 = 0"
        candidates += [_math_form(m["equation"]) for m in _EQUATION_LINE.finditer(prediction)][-1:]
    return any(squashed(c) in written for c in candidates) or (
        bool(gold) and any(_verify(c, gold) for c in candidates)
    )


def _math_form(text: str) -> str:
    """A value as math-verify reads it: Unicode math as LaTeX, without a trailing unit, a final
    full stop or a point's name ("P(2, 1)" is the point (2, 1))."""
    latex = _ROOT.sub(lambda m: f"\\sqrt{{{m.group(1).strip('()')}}}", fold(text))
    for symbol, command in _UNICODE_MATH.items():
        latex = latex.replace(symbol, command)
    latex = _SLASH_COEFFICIENT.sub(r"(\1/\2)", latex)
    return _POINT_NAME.sub("", _UNIT.sub("", latex).strip().rstrip("."))


def _math_candidates(prediction: str, span: str) -> list[str]:
    """The answer, the span stating it, its last fraction or root, and the one number the span,
    else the answer, states when it states only one ("Five squares need colouring.")."""
    numbers = set(extract_numbers(number_word(span)))  # "31 matchsticks"
    if len(numbers) != 1:
        numbers = set(extract_numbers(number_word(prediction)))
    # a root or π is part of the value: "3√3" is no 3
    only = [f"{numbers.pop():g}"] if len(numbers) == 1 and not _IRRATIONAL.search(span) else []
    # a boxed answer is the answer, not a piece of it
    expressions = [] if stated_answer(prediction) is not None else _latex_expressions(prediction)
    # an answer that corrects itself is read from its span alone ("The answer is 6. No wait,
    # ... that makes 7."), as is one whose span holds a root or π, which math-verify would read
    # from the whole answer as the number before it ("..., so AC = 8√3/3" as 8)
    alone = reading_of(prediction).has("correction") or _IRRATIONAL.search(span)
    whole = [] if alone else [prediction]
    candidates = []
    for text in (*whole, span, *expressions[-1:], *only):
        for part in _APPROXIMATION_ASIDE.sub(r"≈ \g<value>", text).split("≈"):
            candidates.append(_DECIMAL_COMMA_VALUE.sub(r"\1.\2", _math_form(part)))  # "≈ 31,4"
    return [latex for latex in dict.fromkeys(candidates) if latex]


def _latex_expressions(text: str) -> list[str]:
    """The outermost `\\frac{..}{..}` and `\\sqrt{..}` of a text, nested braces included, so
    `\\frac{\\sqrt{3}}{2}` is one expression and not its inner root. Braces are paired in one
    pass with a stack, so a text of many unclosed groups is not scanned to its end from each."""
    closing: dict[int, int] = {}  # for each `{` that is closed, the index after its `}`
    opened: list[int] = []
    for index, char in enumerate(text):
        if char == "{":
            opened.append(index)
        elif char == "}" and opened:
            closing[opened.pop()] = index + 1
    found, covered = [], 0
    for match in _LATEX_COMMAND.finditer(text):
        if match.start() < covered:
            continue
        end = match.end()
        for _ in range(2 if "frac" in match.group("name") else 1):
            end = closing.get(end, -1)  # the group must open right where the last one closed
        if end > 0:
            found.append(text[match.start() : end])
            covered = end
    return found


@lru_cache(maxsize=1 << 16)
def _verify(prediction: str, target: str) -> bool:
    """math-verify's equivalence; False for a prediction it may not read (`MAX_VERIFIED_CHARS`).
    A pair costs tens of milliseconds of LaTeX parsing and sympy, so each pair, and each value's
    parse (a gold meets many answers; math-verify's own cache holds 20), is read once."""
    if len(prediction) > MAX_VERIFIED_CHARS or _UNVERIFIABLE.search(prediction):
        return False
    from math_verify import verify

    gold, answer = _parsed(target), _parsed(prediction)
    return bool(gold and answer and verify(list(gold), list(answer)))


@lru_cache(maxsize=1 << 14)
def _parsed(latex: str) -> tuple[Any, ...]:
    from math_verify import parse

    return tuple(parse(f"${latex}$"))


def squashed(text: str) -> str:
    """The text lower-cased, without whitespace or a final full stop: how plain answers compare
    before any reading of their maths."""
    return "".join(text.lower().split()).rstrip(".")


def letter_score(
    prediction: str,
    target: str,
    letters: Sequence[str],
    options: Sequence[str] = (),
    question: str = "",
) -> tuple[str | None, float]:
    """(parsed letter, 1.0 or 0.0) for a multiple-choice answer. An answer that names no option
    is read against the options' texts by its stated span ("∠1 + ∠2 = 270°" for "270°"); given
    the question, a count of something else names no option."""
    prediction = _without_asked_label(without_other_counts(prediction, question), question)
    choice = read_choice(prediction, letters, options)
    parsed = choice.letter
    # only an answer that names no option may state one's value; "(B) 5" (5 being C) or "The
    # total is $10.50 (B)" contradicts itself, and a hedge commits to nothing
    if options and choice.open:
        span = answer_span(prediction)
        parsed = choice_letter(span, letters, options) or _option_by_value(span, letters, options)
    return parsed, float(parsed is not None and parsed == target.strip().strip("()").upper())


def _without_asked_label(prediction: str, question: str) -> str:
    """The answer with the one lettered label its question asks about ("what is stage C?") read
    as "it": "Stage C is the **pupa**." picks the pupa, not option C."""
    named = {m[0].lower() for m in _LABELLED_LETTER.finditer(question)}
    if len(named) != 1:
        return prediction
    return re.sub(rf"\b{re.escape(named.pop())}\b", "it", prediction, flags=re.IGNORECASE)


def _option_by_value(span: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The one option whose number is the number the answer states ("9.5" for "$9.50"); None
    unless exactly one option has it and the answer offers no alternatives."""
    stated = parse_number(span)
    if stated is None or reading_of(span).has("alternatives"):
        return None
    matching = [
        letter
        for letter, option in zip(letters, options, strict=False)
        if len(numbers := extract_numbers(str(option))) == 1
        and any(math.isclose(numbers[0], value, abs_tol=1e-9) for value in stated.readings)
    ]
    return matching[0] if len(matching) == 1 else None
