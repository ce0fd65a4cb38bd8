"""Rule-based per-sample scorers; each names the benchmark code it follows.

A scorer takes the final answer (see `mmcritic.eval.answers.final_answer`) and the target and
returns a score in [0, 1]. Aggregation over samples lives in `mmcritic.eval.metrics`.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence

from mmcritic.eval.answers import Number, choice_letter, extract_numbers, fold, parse_number

ANLS_THRESHOLD = 0.5
# MMMU eval_utils.py `get_key_subresponses`
_KEY_INDICATORS = ("could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ")
_TRIVIAL_TAILS = {":", ",", ".", "!", "?", ";", "'"}
RELAXED_TOLERANCE = 0.05


def numeric_match(prediction: str, target: str | float, precision: int | None = None) -> bool:
    """Whether two numbers agree, both rounded to `precision` decimals when it is given.

    MathVista's normalisation: integers compare as `int(float(x))`, floats as
    `round(float(x), precision)`. A percent sign on either side is ignored, since the target
    states the unit in the question.
    """
    predicted = parse_number(prediction)
    expected = parse_number(str(target))
    if predicted is None or expected is None:
        return False
    if precision is None:
        return math.isclose(predicted.value, expected.value, rel_tol=1e-9, abs_tol=1e-9)
    return round(predicted.value, precision) == round(expected.value, precision)


def relaxed_match(prediction: str, target: str, tolerance: float = RELAXED_TOLERANCE) -> bool:
    """ChartQA's relaxed accuracy: numbers within 5% of a non-zero target, else exact match.

    Follows `relaxed_correctness` in Qwen-VL's evaluate_vqa.py (used by lmms-eval's chartqa),
    where `x%` reads as x/100. Two tolerances are added: thousands separators (`1,000`), and a
    percent sign on one side only (`12.0%` against `12`), which is also compared number to
    number since ChartQA targets often drop the sign the chart shows.
    """
    predicted, expected = parse_number(prediction), parse_number(target)
    if _is_plain_number(prediction) and _is_plain_number(target) and predicted and expected:
        candidates = [(predicted, expected)]
        if predicted.percent != expected.percent:
            candidates.append((Number(predicted.value), Number(expected.value)))
        return any(_within(p, e, tolerance) for p, e in candidates)
    return prediction.strip().lower() == target.strip().lower()


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
    """Edit distance with unit costs; O(len(left) * len(right)) time, linear memory."""
    if len(left) < len(right):
        left, right = right, left
    previous = list(range(len(right) + 1))
    for row, left_char in enumerate(left, start=1):
        current = [row]
        for column, right_char in enumerate(right, start=1):
            cost = previous[column - 1] + (left_char != right_char)
            current.append(min(previous[column] + 1, current[column - 1] + 1, cost))
        previous = current
    return previous[-1]


def closest_option(prediction: str, options: Sequence[str]) -> str:
    """The option with the smallest edit distance to the prediction (MathVista's fallback)."""
    return min(options, key=lambda option: levenshtein(prediction, str(option)))


def open_match(prediction: str, target: str | Sequence[str]) -> bool:
    """MMMU's `eval_open` on the answer its `parse_open_response` finds: the part after the last
    key phrase ("is ", "so ", "therefore ", "answer ", "=" ...) of the response. A numeric target
    matches a number there rounded to two decimals; a text target matches when it occurs there
    (a one-letter target only as a word). A target written as a Python list means "any of
    these". One deliberate difference: MMMU keeps the key part of every line, so a number from
    the reasoning ("There are 16 bars.\nSo the answer is 14.") can match; here only the last
    line that has a key part counts, as a careful grader reads the stated answer."""
    key = f" {mmmu_key_answer(prediction)} "
    numbers = {round(number, 2) for number in extract_numbers(key)}
    for gold in _targets(target):
        value = parse_number(gold) if _is_plain_number(gold) else None
        if value is not None and not value.percent:
            if round(value.value, 2) in numbers:
                return True
            continue
        text = gold.strip().lower()
        if (len(text) == 1 and f" {text} " in key) or (len(text) > 1 and text in key):
            return True
    return False


def mmmu_key_answer(response: str) -> str:
    """The key part of a free answer, after MMMU's `get_key_subresponses`: per line, the text
    after the indicator that leaves the shortest tail; the last line that has one."""
    lines = response.strip().strip(".").lower().split("\n")
    key = None
    for index, line in enumerate(lines):
        indicators = _KEY_INDICATORS + (("=",) if index == len(lines) - 1 else ())
        tails = [line.split(word)[-1].strip() for word in indicators if word in line]
        tails = [tail for tail in tails if tail and tail not in _TRIVIAL_TAILS]
        if tails:
            key = min(tails, key=len)
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


def math_equal(prediction: str, target: str) -> bool:
    """Mathematical equivalence by math-verify (`\\frac{1}{2}` equals `0.5`), with a plain
    string comparison first so non-mathematical answers still match."""
    if not prediction.strip() or not str(target).strip():
        return False
    if _squash(prediction) == _squash(str(target)):
        return True
    from math_verify import parse, verify

    gold = parse(f"${target}$")
    answer = parse(f"${prediction}$")
    return bool(gold and answer and verify(gold, answer))


def _squash(text: str) -> str:
    return "".join(text.lower().split()).rstrip(".")


def substring_match(prediction: str, targets: Sequence[str], ignore_spaces: bool = False) -> bool:
    """OCRBench: a target contained in the prediction, both lower-cased with line breaks read as
    spaces; handwritten-formula items (HME100k) compare with all spaces removed and case kept
    (`X^2` is not `x^2`). Follows lmms-eval's ocrbench utils, with Unicode compatibility
    folding added so fullwidth text (`ＳＴＯＰ`) reads as what it shows."""
    predicted = _ocr_form(prediction, ignore_spaces)
    return any(
        (expected := _ocr_form(str(target), ignore_spaces)) and expected in predicted
        for target in targets
    )


def _ocr_form(text: str, formula: bool) -> str:
    text = fold(text).strip().replace("\n", " ")
    return text.replace(" ", "") if formula else " ".join(text.lower().split())


def letter_score(
    prediction: str, target: str, letters: Sequence[str], options: Sequence[str] = ()
) -> tuple[str | None, float]:
    """(parsed letter, 1.0 or 0.0) for a multiple-choice answer."""
    parsed = choice_letter(prediction, letters, options)
    return parsed, float(parsed is not None and parsed == target.strip().strip("()").upper())
