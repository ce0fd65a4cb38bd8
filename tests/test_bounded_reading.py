"""Reading hostile model output stays bounded: no response a model writes makes eval's answer
reading raise, build a huge number or take more than a fraction of a second.

Numbers are generated in every notation models use, far beyond float range and far longer than
Python reads as an integer, with lone surrogates, and framed as models frame an answer. Each is
read by `final_answer`, scored by every registered policy task on its fixture problems, and read
by every critic verdict reader; each call must return within `PER_CALL_SECONDS`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmcritic.eval.answers import MAX_DIGITS, answer_span, extract_numbers, parse_number
from mmcritic.eval.protocols import PROTOCOL_NAMES, verdict_reader
from mmcritic.eval.registry import get_task, task_names
from mmcritic.eval.scorers import math_equal, numeric_match, relaxed_match
from mmcritic.eval.tasks import CriticTask, PolicyTask, Problem
from mmcritic.eval.tasks.mmmu_val.scoring import open_match
from mmcritic.eval.tasks.vl_rewardbench.verdicts import overall_judgment
from mmcritic.reading.final import final_answer
from mmcritic.reading.markup import MAX_ANSWER_CHARS, json_answer, readable
from mmcritic.rewards.parsing import parse_judgement
from tests.test_eval_fixtures import all_task_data, built_items

# Ordinary answers are read in milliseconds; a tenth of this catches a reader gone quadratic on
# the generated sizes while leaving room for a loaded test machine.
PER_CALL_SECONDS = 0.5
# enough examples to meet each notation, framing and size a few times
EXAMPLES = 40
POLICY_TASKS = [name for name in task_names() if isinstance(get_task(name), PolicyTask)]
CRITIC_TASKS = [name for name in task_names() if isinstance(get_task(name), CriticTask)]
VERDICT_READERS: dict[str, Callable] = {"parse_judgement": parse_judgement} | {
    f"{protocol}/{task}": verdict_reader(task, protocol)
    for task in CRITIC_TASKS
    for protocol in PROTOCOL_NAMES
}


@pytest.fixture(scope="session")
def problems(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Problem]]:
    """Every policy task's fixture problems, each task scored once first so that what loads on
    first use (math-verify's grammar) is not timed."""
    data: dict[str, Path] = all_task_data(tmp_path_factory)
    built = {name: built_items(name, data[name]) for name in POLICY_TASKS}
    for name, items in built.items():
        get_task(name).score("The answer is 5.", items[0])
    return built


# Numbers as models write them, of any size.
_MANTISSAS = st.sampled_from(["1", "1.5", "9.99", "2", "-3", "6.02"])
_HUGE_EXPONENTS = st.one_of(
    st.integers(min_value=309, max_value=10**9), st.integers(min_value=-(10**9), max_value=-309)
)
_SCIENTIFIC = st.builds(
    lambda form, mantissa, exponent: form.format(m=mantissa, e=exponent),
    st.sampled_from(
        [
            "{m}e{e}",
            "{m}E+{e}",
            "{m} \\times 10^{{{e}}}",
            "{m} x 10^{e}",
            "{m} × 10^{e}",
            "{m}·10^{{{e}}}",
            "{m} \\cdot 10^{{{e}}}",
            "{m}*10^{e}",
            "10^{{{e}}}",
            "$10^{{{e}}}$",
        ]
    ),
    _MANTISSAS,
    _HUGE_EXPONENTS,
)
_DIGIT_RUN = st.builds(
    lambda digit, count: digit * count, st.sampled_from("1379"), st.integers(1, 12_000)
)
_LONG_FRACTION = st.builds(
    lambda form, digits: form.format(d=digits),
    st.sampled_from(["\\frac{{{d}}}{{7}}", "\\dfrac{{7}}{{{d}}}", "{d}/7", "2 {d}/7", "7/{d}"]),
    _DIGIT_RUN,
)
_THOUSANDS = st.builds(lambda groups: "1," + ",".join(["234"] * groups), st.integers(1, 3_000))
_NUMBERS = st.one_of(_SCIENTIFIC, _DIGIT_RUN, _LONG_FRACTION, _THOUSANDS)
_FRAMES = st.sampled_from(
    [
        "{}",
        "\\boxed{{{}}}",
        "The answer is {}",
        "The answer is {}.",
        "Therefore, the final answer is $\\boxed{{{}}}$.",
        "**{}**",
        "Answer: {}",
        "<think>The value is 3.</think>\\boxed{{{}}}",
        "<answer>{}</answer>",
        '{{"answer": "{}"}}',
        "{}%",
        "${}",
        "There are {} cars, so the answer is B.",
        "Overall Judgment: Answer 1 is better, with a score of {}.",
    ]
)


@st.composite
def hostile_outputs(draw: st.DrawFn) -> str:
    """A number-shaped model output: a framed number, sometimes after another, sometimes with a
    lone surrogate in it."""
    text = draw(_FRAMES).format(draw(_NUMBERS))
    if draw(st.booleans()):
        text = f"{draw(_FRAMES).format(draw(_NUMBERS))}\n{text}"
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        surrogate = chr(draw(st.integers(0xD800, 0xDFFF)))
        text = text[:at] + surrogate + text[at:]
    return text


def _timed(call: Callable[[], object], what: str) -> object:
    """The call's result, asserting the CPU time it took (see `_fastest`) is within bound."""
    start = time.process_time()
    result = call()
    elapsed = time.process_time() - start
    assert elapsed < PER_CALL_SECONDS, f"{what} took {elapsed:.2f}s"
    return result


def _savable(value: object) -> None:
    """What the runner writes for a sample must encode: `json.dumps(ensure_ascii=False)` as
    UTF-8, as the samples file is written."""
    json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")


_HOSTILE = settings(
    max_examples=EXAMPLES,
    deadline=None,  # each call is timed on its own, against PER_CALL_SECONDS
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_HOSTILE
@given(hostile_outputs())
def test_final_answer_reads_hostile_numbers_in_bounded_time(text: str) -> None:
    answer = _timed(lambda: final_answer(text), "final_answer")
    assert isinstance(answer, str)
    assert len(answer) <= MAX_ANSWER_CHARS
    _savable(answer)
    number = _timed(lambda: parse_number(answer), "parse_number")
    assert number is None or abs(number.value) < float("inf")
    _timed(lambda: extract_numbers(answer), "extract_numbers")
    _timed(lambda: answer_span(text), "answer_span")


@pytest.mark.slow  # half a minute of generated outputs through every scorer (in CI)
@_HOSTILE
@given(text=hostile_outputs())
def test_every_policy_task_scores_hostile_numbers_in_bounded_time(
    problems: dict[str, list[Problem]], text: str
) -> None:
    answer = final_answer(text)
    for name, items in problems.items():
        task = get_task(name)
        for problem in items:
            scored = _timed(lambda p=problem, t=task: t.score(answer, p), f"{name} score")
            assert 0.0 <= scored.score <= 1.0
            _savable(scored.parsed)


@_HOSTILE
@given(hostile_outputs())
def test_every_critic_verdict_reader_reads_hostile_numbers_in_bounded_time(text: str) -> None:
    for name, read in VERDICT_READERS.items():
        judgement = _timed(lambda read=read: read(text), name)
        assert judgement.choice in (None, "1", "2", "tie")


@pytest.mark.parametrize(
    "written",
    [
        "1e400",
        "1.5E+99999",
        "-2e309",
        "1e-400",
        "1 \\times 10^{400}",
        "1 x 10^99999999",
        "6.02 × 10^{-99999}",
        "\\boxed{1 \\times 10^{400}}",
        "The answer is 1 x 10^99999999",
    ],
)
def test_a_number_beyond_float_range_is_no_number_in_every_notation(written: str) -> None:
    assert parse_number(written) is None
    assert extract_numbers(written) == []
    assert parse_number(final_answer(written)) is None


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("4.5 × 10^4", 45_000.0),
        ("3 \\times 10^{8}", 3e8),
        ("1.6×10^-19", 1.6e-19),
        ("2.5 × 10³", 2_500.0),
        ("1e308", 1e308),
        ("1,234,567", 1_234_567.0),
        ("\\frac{24}{5}", 4.8),
        ("2 3/4", 2.75),
        ("9" * MAX_DIGITS, float("9" * MAX_DIGITS)),
    ],
)
def test_numbers_within_bounds_read_as_written(written: str, value: float) -> None:
    number = parse_number(written)
    assert number is not None
    assert number.value == pytest.approx(value)


@pytest.mark.parametrize(
    "written",
    [
        "9" * (MAX_DIGITS + 1),
        "\\frac{" + "7" * 5_000 + "}{7}",
        "3" * 5_000 + "/7",
        "2 " + "1" * 5_000 + "/3",
    ],
)
def test_a_numeral_of_too_many_digits_is_no_number(written: str) -> None:
    assert parse_number(written) is None
    assert all(abs(value) < 10 for value in extract_numbers(written))  # its short parts only


def test_scorers_read_a_5000_digit_fraction_as_no_answer() -> None:
    answer = final_answer("The answer is \\frac{" + "7" * 5_000 + "}{7}")
    assert not numeric_match(answer, "5")
    assert not relaxed_match(answer, "5")
    assert not open_match(answer, "5")
    assert not math_equal(answer, "5")


def test_a_lone_surrogate_reads_as_a_replacement_character() -> None:
    assert readable("x = \ud800 5") == "x = \ufffd 5"
    assert readable("\ud83d\ude00") == "\U0001f600"  # a surrogate pair is its character
    answer = final_answer("\\boxed{\udfff 5}")
    assert answer == "\ufffd 5"
    _savable(answer)


def test_json_nested_thousands_deep_is_no_json_answer() -> None:
    assert json_answer('{"answer": ' + "[" * 100_000 + "]" * 100_000 + "}") is None


def test_a_long_answer_is_read_from_its_end() -> None:
    text = "word " * MAX_ANSWER_CHARS + "The answer is 42."
    assert final_answer(text) == "42"


def _read_digits(text: str) -> None:
    answer = final_answer(text)
    parse_number(answer)
    parse_number(text)
    extract_numbers(text)
    answer_span(text)


def _fastest(call: Callable[[], object], repeats: int = 5) -> float:
    """The least CPU time of this process one call took: the time other processes take on a
    busy machine (a parallel test run, a build) is not counted, as wall time would count it."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def _assert_linear(times: list[float]) -> None:
    """Eight times the length: eight times the time if linear, 64 if quadratic. The bound sits
    about a factor of three from both, so a busy machine does not decide the outcome."""
    assert times[1] <= 24 * times[0], f"8x the length took {times[1] / times[0]:.1f}x the time"


@pytest.mark.parametrize("unit", ["9", "12,345,", "1 "])
def test_reading_a_long_digit_answer_takes_linear_time(unit: str) -> None:
    times = []
    for length in (25_000, 200_000):
        text = "The answer is " + unit * (length // len(unit))
        times.append(_fastest(lambda text=text: _read_digits(text)))
    assert times[1] < 2.0, f"200k characters took {times[1]:.2f}s"
    _assert_linear(times)


def test_every_policy_task_scores_a_long_digit_answer_in_linear_time(
    problems: dict[str, list[Problem]],
) -> None:
    def score_all(text: str) -> None:
        answer = final_answer(text)
        for name, items in problems.items():
            get_task(name).score(answer, items[0])

    times = [
        _fastest(lambda length=length: score_all("9" * length), repeats=3)
        for length in (25_000, 200_000)
    ]
    assert times[1] < 2 * len(problems) * PER_CALL_SECONDS, f"200k digits took {times[1]:.2f}s"
    _assert_linear(times)


# lmms-eval vl_rewardbench/utils.py `parse_pred_ans`, as released
_LMMS_EVAL_RULE = re.compile(
    r"(?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*"
    r"(?:the\s*)?(?:slightly\s*)?better",
    re.IGNORECASE,
)
_JUDGMENT_PIECES = st.sampled_from(
    [
        "Overall Judgment: ",
        "overall judgment",
        "Therefore, ",
        "THEREFORE ",
        "Answer 1 is better",
        "Answer 2 is the better",
        "answer 02 is slightly better",
        "Answer 3 is better",
        "Answer12isbetter",
        "Answer 1 is worse",
        "Answer 2 is ",
        "better",
        " - ",
        "  ",
        "it is clear. ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_JUDGMENT_PIECES, max_size=8).map("".join))
def test_overall_judgment_reads_as_lmms_eval_rule(text: str) -> None:
    released = _LMMS_EVAL_RULE.search(text)
    assert overall_judgment(text) == (released.group(1) if released else None)


@pytest.mark.parametrize(
    "unit", ["Therefore ", "Overall Judgment ", "Answer 1 is ", "\\boxed{", "[[A]"]
)
def test_every_critic_verdict_reader_takes_linear_time_on_repeated_phrases(unit: str) -> None:
    def read_all(text: str) -> None:
        for read in VERDICT_READERS.values():
            read(text)

    times = [
        _fastest(lambda count=count: read_all(unit * count), repeats=3)
        for count in (10_000, 20_000)
    ]
    assert times[0] < len(VERDICT_READERS) * PER_CALL_SECONDS, f"took {times[0]:.2f}s"
    assert times[1] <= 2.5 * times[0], f"doubling the length took {times[1] / times[0]:.1f}x"


@pytest.mark.parametrize(
    "written", ["1" * 12_000 + " + x = 3, so x is 3.", "1+" * 6_000 + "x = 3, so x is 3."]
)
def test_an_equation_after_a_long_run_of_digits_reads_in_bounded_time(written: str) -> None:
    # whether an equation computes its value ("14 + 17 = 31") is read from its left side's end
    _timed(lambda: numeric_match(written, "3", question="What is x?"), "numeric_match")


@pytest.mark.parametrize("unit", ["rojo y ", "le plus haut ", "信号は緑色です", "1 "])
def test_reading_a_long_answer_in_another_language_takes_linear_time(unit: str) -> None:
    from mmcritic.reading.statements import english_gloss

    times = []
    for length in (25_000, 200_000):
        text = unit * (length // len(unit))
        times.append(_fastest(lambda text=text: english_gloss(text), repeats=3))
    assert times[1] < 1.0, f"200k characters took {times[1]:.2f}s"
    _assert_linear(times)
