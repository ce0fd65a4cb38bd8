"""Rule-based per-sample scorers; each names the benchmark code it follows.

A scorer takes the final answer (see `mmcritic.reading.final.final_answer`) and the target and
returns a score in [0, 1]. Aggregation over samples lives in `mmcritic.eval.metrics`.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

from mmcritic.eval.answers import (
    ASIDE,
    KEY_INDICATORS,
    MAX_DIGITS,
    Number,
    answer_span,
    extract_numbers,
    holds_digit,
    integer_value,
    is_cut_off,
    latex_fractions,
    number_value,
    number_word,
    parse_number,
    plain_words,
    shortest_key_tail,
    stated_count,
)
from mmcritic.eval.choices import choice_letter, opens_with_letter, read_choice, rejected_before
from mmcritic.eval.text_answers import text_answer
from mmcritic.eval.yes_no import yes_no
from mmcritic.reading.final import stated_answer
from mmcritic.reading.markup import fold
from mmcritic.reading.statements import (
    LONG_ASIDE,
    YEAR,
    hedges_after,
    sentences,
    settled_part,
    states_reading,
    subject_answer,
    subject_core,
)
from mmcritic.reading.structure import HEDGES, reading_of

ANLS_THRESHOLD = 0.5
_NONE_STATED = re.compile(
    r"\W*(?:none\b|nothing\b|no\s+[a-z]+\s+(?:is|are|has|have|was|were)\b|there\s+(?:is|are)\s+"
    r"(?:none|no)\b)",
    re.IGNORECASE,
)
_LATEX_COMMAND = re.compile(r"\\(?P<name>d?frac|sqrt)\s*(?=\{)")
_ROOT = re.compile(r"√\s*(\([^()]*\)|[\d.]+|[a-zA-Z])")
_UNICODE_MATH = {"π": "\\pi", "×": "\\times", "·": "\\cdot", "°": "^\\circ", "∞": "\\infty"}
_UNIT = re.compile(
    r"\s*(?:\\text\{\s*[a-zA-Z ]+\}(?:\^\{?\d\}?)?|\b(?:(?:square|cubic)\s+)?(?:cm|mm|km|m|"
    r"units?|(?:centi|milli|kilo)?met(?:er|re)s?|degrees?|inch(?:es)?|feet|foot|ft)"
    r"(?:\^?\{?[23]\}?|²|³)?)\s*$"
)
_POINT_NAME = re.compile(r"^[A-Z]\s*(?=\()")
# the value's decimal approximation beside it, read as "≈ 6.28": "2\pi (≈ 6.28)", "4√2
# (approximately 5.66)"
_APPROXIMATION_ASIDE = re.compile(
    r"\(\s*(?:≈|~|approx\.?|approximately|about|roughly)\s*(?P<value>[^()]*)\)", re.IGNORECASE
)
# a quantity in a prefixed unit, read also in the base unit a gold answer is usually given in
# (starting inside a run of digits reads the same as at its start)
_QUANTITY = re.compile(
    r"(?<!\d)(-?\d+(?:\.\d+)?)\s*(mm|cm|km|mg|kg|ms|ma|kw|kj|kpa)\b", re.IGNORECASE
)
_UNIT_SCALE = {
    "mm": 1e-3, "cm": 1e-2, "km": 1e3, "mg": 1e-6, "kg": 1.0, "ms": 1e-3,
    "ma": 1e-3, "kw": 1e3, "kj": 1e3, "kpa": 1e3,
}  # fmt: skip
_FRACTIONS = re.compile(r"(?<![\d.])(-?\d+)\s*/\s*(\d+)(?![\d.])")
# a number with its percent sign; not one glued to a Latin letter, which labels ("Q3", "FY2022")
_NUMBER_IN_TEXT = re.compile(r"(?<![A-Za-z])(-?\d+(?:\.\d+)?)\s*(%|percent)?")
RELAXED_TOLERANCE = 0.05
# math-verify reads a long text as LaTeX (500 characters of prose, as a product of symbols, take
# it 0.4 s) and evaluates the numbers it meets (`10^{99999999}` would not finish): a candidate
# longer than this, or holding a numeral of more than MAX_DIGITS digits, an exponent of four
# digits or more, a number raised to a power of a number (`10^{10^{10}}`) or the factorial of
# a four-digit number, is compared as a string only
MAX_VERIFIED_CHARS = 500
_POWER = r"(?:\^|\*\*)\s*[{(]?\s*[-+]?"
_UNVERIFIABLE = re.compile(
    rf"\d{{{MAX_DIGITS + 1}}}|{_POWER}\d{{4}}|{_POWER}\d+\s*{_POWER}|\d{{4}}\s*!"
)
# a later sentence that sets a mention aside: "..., not the laptop", "... is the fax date, not
# the field value"
# a closing sentence that states the reading the question asks for: "The invoice number is X."
_RESTATED_READING = re.compile(r"^(?:so\s+)?the\s+((?:[\w-]+\s+){1,4}?)(?:is|reads)\s+\S", re.I)
_CONTEXT_AFTER = re.compile(r",\s+not\s+(?:the|a|an|this|that)\b|\bnot\s+the\s+\w+\s*\.?\s*$")
# context after a reading that names the runners-up or what it is not: "the United States,
# followed by Brazil and India", "WARDEN, not GARDEN", "Coke, ahead of Pepsi"
_OTHERS_AFTER = re.compile(
    r",?\s+(?:followed\s+by|compared\s+(?:with|to)|ahead\s+of|versus|vs\.?|rather\s+than)\s"
    r"|,\s*not\s",
    re.IGNORECASE,
)
# two readings offered: "MARKET" or possibly "MARKETS"; a bare "ohsticf or ohstlcf"
_TWO_READINGS = re.compile(
    rf"{HEDGES}|^\s*[\"']?[^\s\"']+[\"']?\s+or\s+[\"']?[^\s\"']+[\"']?\s*\.?\s*$",
    re.IGNORECASE,
)
# bare values on lines of their own and nothing else
_VALUE_LINES = re.compile(r"\s*(?:[$€£]?-?\d[\d,.]*%?[ \t]*\n\s*)+[$€£]?-?\d[\d,.]*%?\s*")
# a value told beside a text answer: "Q3 with 21", "Norway at about 45%"
_VALUE_BESIDE = re.compile(
    r"\s+(?:with|at)\s+(?:about\s+|around\s+|approximately\s+|nearly\s+)?[$€£]?-?\d[\d,.]*\s*%?$",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;!?\n]")
_RATIO = re.compile(r"(?<![\d.:])(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)(?![\d:])")


def numeric_match(
    prediction: str, target: str | float, precision: int | None = None, question: str = ""
) -> bool:
    """Whether the answer states the target number, both rounded to `precision` decimals when it
    is given.

    MathVista's normalisation: integers compare as `int(float(x))`, floats as
    `round(float(x), precision)`. The answer's number is the last one in the span that states
    it (`answer_span`: a box, "answer is", a bold value, the value after the last `=` or
    after a key phrase), so a value the reasoning passes through does not count and a hedge
    ("5 or 6") is read as its last value; fractions, number words and a percent sign on
    either side are accepted, since the target states the unit in the question. An answer
    that opens by saying there is none ("None.", "No bars are ...") reads as 0 unless it marks
    another answer.
    """
    span = answer_span(prediction, question)
    expected, predicted = parse_number(str(target)), parse_number(span)
    if stated_answer(prediction) is None and _NONE_STATED.match(fold(prediction)):
        predicted = Number(0.0)  # "None of the bars are under 6.", "There are none."
    if expected is None or predicted is None or reading_of(span).has("alternatives"):
        return False
    if stated_answer(prediction) is None and hedges_after(prediction, span):
        return False  # "the age gap is 6 years. However, ... so it might be 10."
    if precision is None:
        return math.isclose(predicted.value, expected.value, rel_tol=1e-9, abs_tol=1e-9)
    return round(predicted.value, precision) == round(expected.value, precision)


def relaxed_match(
    prediction: str, target: str, tolerance: float = RELAXED_TOLERANCE, question: str = ""
) -> bool:
    """ChartQA's relaxed accuracy, read as a careful grader reads it: a number stated as the
    answer within 5% of a numeric target, else the same text.

    Follows `relaxed_correctness` in Qwen-VL's evaluate_vqa.py (used by lmms-eval's chartqa),
    where `x%` reads as x/100, on the span of the answer that states it (`answer_span`), with
    what a person accepts added: thousands separators, currency and units around the number
    (`$1,245.6 million`), number words, a percent sign on one side only, yes/no answers that
    go on to explain, and text answers that differ in case or final punctuation. A year is a
    label, not a quantity: it must match exactly (2018 is not 2019, although within 5%)."""
    target = str(target).strip()
    if plain_words(target) in ("yes", "no"):
        return yes_no(prediction, question) == plain_words(target)
    if _VALUE_LINES.fullmatch(prediction) and len(set(prediction.split())) > 1:
        return False  # "2016\n2017": two values, one on each line
    span = answer_span(prediction, question)
    expected = parse_number(target) if _is_plain_number(target) else None
    if expected is None:
        wanted = plain_words(target)
        stated = (text_answer(prediction, question), span, prediction)
        subject = subject_answer(prediction, question)  # "Norway has the highest share ..."
        core = subject_core(subject, question) if subject else None  # "The orange segments"
        bare = ASIDE.sub("", prediction)  # "Transport (12.5)"
        valued = _VALUE_BESIDE.sub("", span)  # "The highest is Q3 with 21"
        # "The sector with the highest growth is Technology (+18%)."
        candidates = (*stated, subject, core, bare, text_answer(bare, question), valued)
        return any(plain_words(c) == wanted for c in candidates if c is not None)
    if reading_of(span).has("alternatives"):
        return False  # "around 2019–2020", "between 30 and 35"
    if YEAR.fullmatch(target):
        return any(number.value == expected.value for number in _stated_numbers(span))
    predicted = _ratio(span) if not float(expected.value).is_integer() else None
    predicted = predicted or _quantity(span)
    return predicted is not None and _relaxed_equal(predicted, expected, tolerance)


def _ratio(span: str) -> Number | None:
    """A ratio stated as "57:31", read as its value (1.84) for a fractional target."""
    found = _RATIO.search(fold(span))
    if found is None:
        return None
    antecedent, consequent = number_value(found.group(1)), number_value(found.group(2))
    if antecedent is None or not consequent:
        return None
    return Number(antecedent / consequent)


def _quantity(span: str) -> Number | None:
    """The number an answer states as a quantity: its last number, passing over years told
    beside it as labels ("spent $5.2 billion in 2017" states 5.2)."""
    stated = _stated_numbers(span)
    quantities = [n for n in stated if not (n.value.is_integer() and _is_year(n.value))]
    if quantities and len(quantities) < len(stated):
        return quantities[-1]
    return parse_number(span)


def _is_year(value: float) -> bool:
    return YEAR.fullmatch(str(int(value))) is not None


def _stated_numbers(span: str) -> list[Number]:
    """Every number in an answer span, each with its own percent sign: a year is a label the
    answer may state beside other figures ("peaked in 2016 at 320 units")."""
    text = number_word(span)
    numbers = []
    for match in _NUMBER_IN_TEXT.finditer(fold(text).replace(",", "")):
        value = number_value(match.group(1))
        if value is not None:
            numbers.append(Number(value, bool(match.group(2))))
    return numbers


def _relaxed_equal(predicted: Number, expected: Number, tolerance: float) -> bool:
    candidates = [(predicted, expected)]
    if predicted.percent != expected.percent:
        candidates.append((Number(predicted.value), Number(expected.value)))
    if predicted.scale != 1.0:  # "1.5 million" for 1500000, or for 1.5 on a chart in millions
        candidates.append((Number(predicted.value * predicted.scale), expected))
    return any(_within(p, e, tolerance) for p, e in candidates)


def _is_plain_number(text: str) -> bool:
    stripped = text.strip().rstrip(".").replace(",", "").removesuffix("%").strip()
    try:
        float(stripped)
    except ValueError:
        return False
    return True


def _within(predicted: Number, expected: Number, tolerance: float) -> bool:
    scale = 0.01 if expected.percent else 1.0
    target = expected.value * scale
    value = predicted.value * (0.01 if predicted.percent else 1.0)
    if target == 0:
        return value == target
    return abs(value - target) / abs(target) <= tolerance


def anls(prediction: str, targets: Sequence[str], threshold: float = ANLS_THRESHOLD) -> float:
    """Average Normalized Levenshtein Similarity for one question (DocVQA, InfoVQA).

    Biten et al., "Scene Text Visual Question Answering", ICCV 2019, exactly as the DocVQA
    evaluation script and lmms-eval's `anls` compute it: the edit distance between the
    lower-cased, whitespace-collapsed strings, divided by the longer of the two *raw* strings;
    the best target's similarity `1 - that`, set to 0 when below `threshold`.
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


def open_match(prediction: str, target: str | Sequence[str]) -> bool:
    """MMMU's `eval_open` on the answer its `parse_open_response` finds: the part after the last
    key phrase ("is ", "so ", "therefore ", "answer ", "=" ...) of the response. A numeric target
    matches a number there rounded to two decimals; a text target matches when it occurs there
    (a one-letter target only as a word). A target written as a Python list means "any of
    these". Deliberate differences, as a careful grader reads an answer: MMMU keeps the key part
    of every line, so a number from the reasoning ("There are 16 bars.\nSo the answer is 14.")
    can match, where here only the last line that has a key part counts; a fraction counts as
    its value (`1/3` is 0.33) and a quantity also in its base unit (`50 cm` is 0.5 m); a text
    target must be stated as whole words and not rejected ("methylbenzene" and "meiosis, not
    mitosis" do not state benzene or mitosis)."""
    golds = _targets(target)
    numeric = any(_is_plain_number(gold) for gold in golds)
    key = latex_fractions(mmmu_key_answer(prediction, numeric))
    concluded = reading_of(key).parts("conclusion")[-1]  # "100, so the hypotenuse is 10 units"
    key = f" {concluded if holds_digit(concluded) else key} "
    sentence = _sentence_at(prediction, key.strip())
    if reading_of(key).has("alternatives") or reading_of(sentence).has("alternatives"):
        return False  # "It could be a bar or a spit; the image resolution makes it hard to tell."
    # "a cube, which has twelve edges": number words count where no digit states a number
    numbers = {
        round(number, 2) for number in extract_numbers(key) or extract_numbers(number_word(key))
    }
    numbers |= {round(a / b, 2) for a, b in _fractions(key)}
    numbers |= {
        round(value * _UNIT_SCALE[unit.lower()], 2)
        for numeral, unit in _QUANTITY.findall(key)
        if unit.lower() in _UNIT_SCALE and (value := number_value(numeral)) is not None
    }
    for gold in golds:
        value = parse_number(gold) if _is_plain_number(gold) else None
        if value is not None and not value.percent:
            if round(value.value, 2) in numbers:
                return True
            continue
        if _states_text(key, gold.strip().lower()):
            return True
    return False


def _fractions(text: str) -> list[tuple[int, int]]:
    """(numerator, denominator) of each plain fraction ("1/3") of a usable size, nonzero below."""
    parts = [(integer_value(a), integer_value(b)) for a, b in _FRACTIONS.findall(text)]
    return [(a, b) for a, b in parts if a is not None and b]


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


def _states_text(answer: str, gold: str) -> bool:
    """Whether the answer states `gold` as whole words, not only to reject it ("meiosis, not
    mitosis"), and not as part of another word ("methylbenzene" is not "benzene")."""
    if not gold:
        return False
    return any(
        not rejected_before(answer, match.start())
        for match in re.finditer(rf"(?<!\w){re.escape(gold)}(?!\w)", answer)
    )


def mmmu_key_answer(response: str, numeric: bool = False) -> str:
    """The key part of a free answer, after MMMU's `get_key_subresponses`: per line, the text
    after the indicator that leaves the shortest tail; the last line that has one. For a numeric
    target, the last sentence whose key part holds a number, with `=` and `≈` as indicators
    ("NPV = ... ≈ 387. Since the NPV is positive, the project should be accepted." is 387)."""
    if numeric:
        for sentence in reversed(sentences(response.lower())):
            tails = [
                tail.strip()
                for word in (*KEY_INDICATORS, "=", "≈")
                if word in sentence and re.search(r"\d", tail := sentence.split(word)[-1])
            ]
            if tails:
                return min(tails, key=len).strip(".")
    lines = response.strip().strip(".").lower().split("\n")
    key = None
    for index, line in enumerate(lines):
        last = index == len(lines) - 1
        tail = shortest_key_tail(line, KEY_INDICATORS + (("=",) if last else ()))
        key = tail if tail is not None else key
    return key if key is not None else response.strip().lower()


def _targets(target: str | Sequence[str]) -> list[str]:
    if isinstance(target, str):
        if target.strip().startswith("["):
            try:
                parsed = ast.literal_eval(target.strip())
            except (ValueError, SyntaxError):
                return [target]
            return [str(item) for item in parsed] if isinstance(parsed, list) else [target]
        return [target]
    return [str(item) for item in target]


def math_equal(prediction: str, target: str, question: str = "") -> bool:
    """Mathematical equivalence by math-verify (`\\frac{1}{2}` equals `0.5`), with a plain
    string comparison first so non-mathematical answers still match. The answer is tried as
    written, as the span that states it (`answer_span`) and as its last inline formula, each
    with Unicode math (`√3`, `π`, `−`) written as LaTeX and a trailing unit dropped."""
    if not prediction.strip() or not str(target).strip() or is_cut_off(prediction):
        return False  # also an answer cut off before its value: "Therefore c equals"
    span = answer_span(prediction, question)
    if reading_of(span).has("alternatives"):
        return False  # "So angle 1 is 65° or 115°."
    gold_text = str(target)
    golds = dict.fromkeys([gold_text, _math_form(gold_text)])  # "60 cm^3" is also 60
    for candidate in _math_candidates(prediction, span):
        for gold in golds:
            if not gold:
                continue
            if _squash(candidate) == _squash(gold) or (
                _verifiable(candidate) and _verify(candidate, gold)
            ):
                return True
    return False


def _verifiable(candidate: str) -> bool:
    """Whether math-verify may read the candidate (`MAX_VERIFIED_CHARS`)."""
    return len(candidate) <= MAX_VERIFIED_CHARS and _UNVERIFIABLE.search(candidate) is None


def _math_form(text: str) -> str:
    """A value as math-verify reads it: Unicode math as LaTeX, without a trailing unit, a final
    full stop or a point's name ("P(2, 1)" is the point (2, 1))."""
    latex = _UNIT.sub("", _as_latex(fold(text))).strip().rstrip(".")
    return _POINT_NAME.sub("", latex)


def _math_candidates(prediction: str, span: str) -> list[str]:
    """The answer, the span stating it, its last fraction or root,
    and the one number the span, else the answer, states when it states only one ("31
    matchsticks", "Five squares need colouring.")."""
    expressions = _latex_expressions(prediction)
    numbers = set(extract_numbers(number_word(span)))  # "31 matchsticks"
    if len(numbers) != 1:
        numbers = set(extract_numbers(number_word(prediction)))
    only = [f"{numbers.pop():g}"] if len(numbers) == 1 else []
    if stated_answer(prediction) is not None:
        expressions = []  # a boxed answer is the answer, not a piece of it
    # an answer that corrects itself is read from its span alone ("The answer is 6. No wait,
    # ... that makes 7.")
    whole = [] if reading_of(prediction).has("correction") else [prediction]
    spans = [*whole, span, *expressions[-1:], *only]
    candidates = []
    for span in spans:
        for part in _APPROXIMATION_ASIDE.sub(r"≈ \g<value>", span).split("≈"):
            latex = _math_form(part)
            if latex and latex not in candidates:
                candidates.append(latex)
    return candidates


def _latex_expressions(text: str) -> list[str]:
    """The outermost `\\frac{..}{..}` and `\\sqrt{..}` of a text, nested braces included, so
    `\\frac{\\sqrt{3}}{2}` is one expression and not its inner root."""
    found, covered = [], 0
    closing: dict[int, int] | None = None
    for match in _LATEX_COMMAND.finditer(text):
        if match.start() < covered:
            continue
        closing = _closing_braces(text) if closing is None else closing
        end = match.end()
        for _ in range(2 if "frac" in match.group("name") else 1):
            end = closing.get(end, -1)  # the group must open right where the last one closed
            if end < 0:
                break
        if end > 0:
            found.append(text[match.start() : end])
            covered = end
    return found


def _closing_braces(text: str) -> dict[int, int]:
    """For each `{` that is closed, the index after its `}`: one pass with a stack, so a text
    of many unclosed groups is not scanned to its end from each of them."""
    closing: dict[int, int] = {}
    opened: list[int] = []
    for index, char in enumerate(text):
        if char == "{":
            opened.append(index)
        elif char == "}" and opened:
            closing[opened.pop()] = index + 1
    return closing


def _as_latex(text: str) -> str:
    text = _ROOT.sub(lambda m: f"\\sqrt{{{m.group(1).strip('()')}}}", text)
    for symbol, latex in _UNICODE_MATH.items():
        text = text.replace(symbol, latex)
    return text


def _verify(prediction: str, target: str) -> bool:
    from math_verify import parse, verify

    gold = parse(f"${target}$")
    answer = parse(f"${prediction}$")
    return bool(gold and answer and verify(gold, answer))


def _squash(text: str) -> str:
    return "".join(text.lower().split()).rstrip(".")


def substring_match(
    prediction: str, targets: Sequence[str], ignore_spaces: bool = False, question: str = ""
) -> bool:
    """OCRBench: a target contained in the prediction, both lower-cased with line breaks read as
    spaces; handwritten-formula items (HME100k) compare with all spaces removed and case kept
    (`X^2` is not `x^2`). Follows lmms-eval's ocrbench utils, with Unicode compatibility
    folding added so fullwidth text (`ＳＴＯＰ`) reads as what it shows, and read as a careful
    grader reads it: an answer that offers two readings commits to neither; one that turns away
    from a first reading ("looks like GARDEN, but ... the word is WARDEN") is read from the
    turn on; a long parenthetical aside ("(the main line, 202-862-4510, is printed above
    it)") and what follows the reading to name others ("the United States, followed by
    Brazil", "WARDEN, not GARDEN") are context, not the reading, as is a paragraph explaining a
    reading given alone on the first line. A yes/no target is read as the yes or no the answer
    gives ("Yes. ... 'Knowing God'" does not contain "no"); given the question, a "how many"
    answer is read as its count of what is asked ("The legend lists 12 regions, and 9 countries
    are highlighted" states 9), and a last sentence that restates what it asks for ("...; the
    sender is Dennis Lowe.") as the reading."""
    if all(plain_words(str(target)) in ("yes", "no") for target in targets):
        return yes_no(prediction) in {plain_words(str(target)) for target in targets}
    two = _TWO_READINGS.search(fold(LONG_ASIDE.sub("", prediction)))  # "X or Y (the end is ...)"
    if reading_of(prediction).has("alternatives") or two:
        return False  # "It's either DENTIST or DENTAL", "MARKET or possibly MARKETS"
    counted = stated_count(prediction, question)
    prediction = counted or _first_line_reading(prediction)
    settled = settled_part(prediction)
    # "... 48, 52 and 60 ..., so the tallest is 60"
    concluded = reading_of(settled).parts("conclusion")[-1]
    settled = concluded if states_reading(concluded) else settled
    read = settled if states_reading(settled) else LONG_ASIDE.sub("", prediction)
    first = sentences(read)
    if len(first) > 1 and states_reading(first[0]) and _CONTEXT_AFTER.search(" ".join(first[1:])):
        read = first[0]  # "It's a Dell laptop. The Lenovo sticker ... is on the stand, not ..."
    elif len(first) > 1 and _restates_a_named_reading(first, question):
        read = first[-1]  # "... order number A-4471 and invoice number A-4417. The invoice
        # number is A-4417."
    if not ignore_spaces:
        read = _without_others(read)
    predicted = _ocr_form(read, ignore_spaces)
    return any(
        (expected := _ocr_form(str(target), ignore_spaces)) and expected in predicted
        for target in targets
    )


def _restates_a_named_reading(parts: list[str], question: str) -> bool:
    """Whether the last sentence states the reading of something the earlier ones named among
    others ("... order number A-4471 and invoice number A-4417. The invoice number is ...") or
    the question asks for ("...; the sender is Dennis Lowe." for "Who is the sender?")."""
    restated = _RESTATED_READING.match(parts[-1])
    named = restated.group(1).strip().lower() if restated else ""
    return bool(named) and named in " ".join([*parts[:-1], question]).lower()


def _first_line_reading(text: str) -> str:
    """The reading a response gives alone on its first line, before a paragraph that explains
    it ("clearly\n\nThe first letters could be mistaken for ... 'dearly', but ..."); else the
    whole response, and when the paragraph corrects the first line."""
    first, blank, rest = text.strip().partition("\n\n")
    bare = first.strip().strip("*\"'")
    explains = rest.strip() and not reading_of(rest).has("correction")  # not "Wait, ... it is a Y"
    if blank and explains and 0 < len(bare.split()) <= 3 and not bare.endswith(":"):
        return first
    return text


def _without_others(text: str) -> str:
    """The text without what follows a reading to name others, up to the end of that clause
    ("the United States, followed by Brazil and India."; "so it is a Y, not a V. The word is
    LIBERTY."), when the text before it states a reading of its own."""
    kept = text
    for other in reversed(list(_OTHERS_AFTER.finditer(text))):
        end = _CLAUSE_END.search(text, other.end())
        if states_reading(text[: other.start()]):
            kept = kept[: other.start()] + kept[end.start() if end else len(text) :]
    return kept


def _ocr_form(text: str, formula: bool) -> str:
    text = fold(text).strip().replace("\n", " ")
    return text.replace(" ", "") if formula else " ".join(text.lower().split())


def letter_score(
    prediction: str, target: str, letters: Sequence[str], options: Sequence[str] = ()
) -> tuple[str | None, float]:
    """(parsed letter, 1.0 or 0.0) for a multiple-choice answer. An answer that names no option
    may still state one's value ("∠1 + ∠2 = 270°" for the option "270°"): its stated span
    (`answer_span`) is then read against the options' texts."""
    choice = read_choice(prediction, letters, options)
    parsed = choice.letter
    # only an answer that names no option may state one's value; "(B) 5" (5 being C) or "The
    # total is $10.50 (B)" contradicts itself, and a hedge commits to nothing
    if options and choice.open and not opens_with_letter(prediction, letters):
        span = answer_span(prediction)
        if span != prediction:
            parsed = choice_letter(span, letters, options)
        parsed = parsed or _option_by_value(span, letters, options)
    return parsed, float(parsed is not None and parsed == target.strip().strip("()").upper())


def _option_by_value(span: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The one option whose number is the number the answer states ("9.5" for "$9.50",
    `60^{\\circ}` for "60", "35 km/h" for "35 mph"); None unless exactly one option has it and
    the answer offers no alternatives."""
    stated = parse_number(span)
    if stated is None or reading_of(span).has("alternatives") or opens_with_letter(span, letters):
        return None  # "(B) 5" where 5 is option C names two options, not one
    matching = [
        letter
        for letter, option in zip(letters, options, strict=False)
        if len(extract_numbers(str(option))) == 1
        and math.isclose(extract_numbers(str(option))[0], stated.value, abs_tol=1e-9)
    ]
    return matching[0] if len(matching) == 1 else None
