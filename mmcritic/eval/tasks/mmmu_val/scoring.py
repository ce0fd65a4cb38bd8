"""MMMU's open-answer rule: its `parse_open_response` and `eval_open`, read as a careful grader
reads an answer."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from mmcritic.eval.answers import (
    extract_numbers,
    holds_digit,
    integer_value,
    is_cut_off,
    latex_fractions,
    number_value,
    number_word,
    parse_number,
    sentences_before_cut,
    without_afterthought,
)
from mmcritic.eval.choices import rejected_before
from mmcritic.eval.scorers import is_plain_number
from mmcritic.reading.markup import BOLD, MARKUP
from mmcritic.reading.statements import main_clause, offers_two_marked, sentences, without_unasked
from mmcritic.reading.structure import reading_of

# a quantity in a prefixed unit ("50 cm"), read also in the base unit; `(?<!\d)` loses no match
# (one starting inside a run of digits also starts at its start) and keeps the search linear
_UNIT_SCALE = dict(
    mm=1e-3, cm=1e-2, km=1e3, mg=1e-6, kg=1.0, ms=1e-3, ma=1e-3, kw=1e3, kj=1e3, kpa=1e3
)
_QUANTITY = re.compile(rf"(?<!\d)(-?\d+(?:\.\d+)?)\s*({'|'.join(_UNIT_SCALE)})\b", re.I)
_FRACTIONS = re.compile(r"(?<![\d.])(-?\d+)\s*/\s*(\d+)(?![\d.])")
# MMMU eval_utils.py `get_key_subresponses`
KEY_INDICATORS = ("could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ")
_TRIVIAL_TAILS = {":", ",", ".", "!", "?", ";", "'"}


def open_match(prediction: str, target: str | Sequence[str], question: str = "") -> bool:
    """MMMU's `eval_open` on the key part its `parse_open_response` finds (after the last key
    phrase, "therefore "): a numeric target matches a number there rounded to two decimals, a
    text target one occurring there (a one-letter target only as a word); a target written as
    a Python list means any of these. Departures, as a careful grader reads: only the last line
    with a key part counts (MMMU keeps every line's, so a number from the reasoning matches), and
    not one cut off mid-sentence unless it revises what came before; a
    fraction counts as its value and a quantity also in its base unit (`50 cm` is 0.5 m); a
    text target must be stated as whole words and not rejected."""
    golds = _targets(target)
    # "= 85%. For reference, specificity = 90%."; "… is 36 m. The maximum speed reached is 8 m/s."
    prediction = without_unasked(without_afterthought(prediction), question)
    said = sentences_before_cut(prediction)
    if is_cut_off(prediction) and said:
        prediction = "\n".join(said)  # "... = 2,500 units.\n\nTo verify: ... total cost is"
    numeric = any(is_plain_number(gold) for gold in golds)
    key = latex_fractions(mmmu_key_answer(prediction, numeric))
    concluded = reading_of(key).parts("conclusion")[-1]  # "100, so the hypotenuse is 10 units"
    key = f" {concluded if holds_digit(concluded) else key} "
    # the sentence's conclusion, not the premises before it: "falls from 80 to 40 mg/L between
    # 0 and 4 hours, so the half-life is 4 hours" offers one value
    sentence = reading_of(_sentence_at(prediction, key.strip())).parts("conclusion")[-1]
    # not "32, as read from (ages 0–4, ...)"; "**50%** or **34%**" offers two
    stated = (main_clause(key.translate(MARKUP)), main_clause(sentence.translate(MARKUP)))
    if any(reading_of(part).has("alternatives") for part in stated):
        return False  # "It could be a bar or a spit; the image resolution makes it hard to tell."
    value_end = re.search(r"\d+", key)
    if value_end and reading_of(key).has("hedged_value", value_end.end()):
        return False  # "50%, though if the temperatures are in °C it would be about 34%"
    # "a cube, which has twelve edges": number words count where no digit states a number
    values = list(extract_numbers(key) or extract_numbers(number_word(key)))
    fractions = [(integer_value(a), integer_value(b)) for a, b in _FRACTIONS.findall(key)]
    values += [a / b for a, b in fractions if a is not None and b]  # "1/3", nonzero below
    quantities = [(number_value(n), _UNIT_SCALE[u.lower()]) for n, u in _QUANTITY.findall(key)]
    values += [value * scale for value, scale in quantities if value is not None]  # "50 cm"
    numbers = {round(value, 2) for value in values}
    for gold in golds:
        value = parse_number(gold) if is_plain_number(gold) else None
        if value is None or value.percent:
            # stated as whole words ("methylbenzene" is not "benzene"), not only to reject it
            text = gold.strip().lower()
            spots = re.finditer(rf"(?<!\w){re.escape(text)}(?!\w)", key) if text else ()
            if any(not rejected_before(key, spot.start()) for spot in spots):
                return True
        elif round(value.value, 2) in numbers:
            return True
    return False


def _sentence_at(text: str, part: str) -> str:
    """The sentence of `text` in which `part` (lower-cased, as MMMU's key part is) begins."""
    at = text.lower().find(part[:30]) if part else -1
    if at < 0:
        return ""
    start = 0
    for sentence in sentences(text):
        start = text.find(sentence, start)
        if start <= at < start + len(sentence):
            return sentence
    return ""


def mmmu_key_answer(response: str, numeric: bool = False) -> str:
    """The key part of a free answer, after MMMU's `get_key_subresponses`: the text after the
    indicator leaving the shortest tail, on the last line that has one. For a numeric target,
    the last sentence whose key part holds a number, `=` and `≈` counting as indicators ("NPV ≈
    387. Since the NPV is positive, ..." is 387)."""
    # the value marked last, unless one of two or corrected after: "= 0.5, i.e. **50%**. So for
    # every 1000 J of heat taken in, at most 500 J ..." is 50%
    marked = [m for m in BOLD.finditer(response) if holds_digit(m[1])] if numeric else []
    last = marked[-1] if marked and not offers_two_marked(response, marked[-1][1]) else None
    if last and not reading_of(response).has("correction", last.end()):
        return last[1].lower()
    if numeric:
        indicators = (*KEY_INDICATORS, "=", "≈")
        for sentence in reversed(sentences(response.lower())):
            tails = [sentence.split(word)[-1].strip() for word in indicators if word in sentence]
            concluded = reading_of(sentence).parts("conclusion")  # "所以 ... 为 6 Ω" too
            tails += concluded[-1:] if len(concluded) > 1 else []
            if tails := [tail for tail in tails if re.search(r"\d", tail)]:
                return min(tails, key=len).strip(".")
    *earlier, last = response.strip().strip(".").lower().split("\n")
    tails = (shortest_key_tail(line) for line in reversed(earlier))  # `=` on the last line only
    found = shortest_key_tail(last, (*KEY_INDICATORS, "=")) or next(filter(None, tails), None)
    return found or response.strip().lower()


def _targets(target: str | Sequence[str]) -> list[str]:
    if not isinstance(target, str):
        return [str(item) for item in target]
    try:
        parsed = ast.literal_eval(target.strip()) if target.strip().startswith("[") else None
    except (ValueError, SyntaxError):
        parsed = None
    return [str(item) for item in parsed] if isinstance(parsed, list) else [target]


def shortest_key_tail(lowered: str, indicators: tuple[str, ...] = KEY_INDICATORS) -> str | None:
    """MMMU's key part of one lower-cased sentence: the shortest tail after a key phrase ("is ");
    None when no phrase leaves a real one."""
    tails = [lowered.split(word)[-1].strip() for word in indicators if word in lowered]
    tails = [tail for tail in tails if tail and tail not in _TRIVIAL_TAILS]
    return min(tails, key=len) if tails else None
