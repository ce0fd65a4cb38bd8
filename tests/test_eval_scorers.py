"""Answer reading and scoring against hand-computed values, awkward answers included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmcritic.eval import metrics
from mmcritic.eval.answers import Number, number_word, parse_number
from mmcritic.eval.choices import choice_letter
from mmcritic.eval.registry import get_task
from mmcritic.eval.scorers import (
    anls,
    closest_option,
    levenshtein,
    math_equal,
    numeric_match,
    relaxed_match,
)
from mmcritic.eval.tasks import Problem
from mmcritic.eval.tasks.mmmu_val.scoring import open_match
from mmcritic.eval.tasks.ocrbench.scoring import substring_match
from mmcritic.eval.text_answers import text_answer
from mmcritic.eval.yes_no import yes_no
from mmcritic.reading.final import final_answer
from mmcritic.reading.markup import fold
from mmcritic.rewards.parsing import parse_judgement, parse_verdict

LETTERS = ["A", "B", "C", "D"]
OPTIONS = ["Paris", "London", "Berlin", "Madrid"]


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<think>draft \\boxed{1}</think> so \\boxed{B}", "B"),
        ("<think>x</think>\\boxed{\\text{B}}", "B"),
        ("\\boxed{12.0%}", "12.0%"),
        ("<think>a</think>The answer is B.", "B"),
        ("Reasoning first.\nFinal answer: 1,000\nThanks", "1,000"),
        ("<think>x</think> $42$", "42"),
        ("<think>never closed \\boxed{7}", "7"),
        ("  plain words  ", "plain words"),
        ("", ""),
    ],
)
def test_final_answer_prefers_the_box_then_an_answer_phrase(response: str, expected: str) -> None:
    assert final_answer(response) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("B", "B"),
        ("b", "B"),
        ("(B)", "B"),
        ("B.", "B"),
        ("B)", "B"),
        ("**B**", "B"),
        ("The answer is B", "B"),
        ("The answer is (B) London", "B"),
        ("A is wrong, so B", "B"),
        ("London", "B"),
        ("The capital of the United Kingdom is London, not Paris or Berlin", "C"),
        ("I cannot tell", None),
        ("", None),
        ("E", None),
    ],
)
def test_choice_letter_follows_mmmu_steps_without_a_random_fallback(
    answer: str, expected: str | None
) -> None:
    assert choice_letter(answer, LETTERS, OPTIONS) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,000", Number(1000.0)),
        ("12.0%", Number(12.0, percent=True)),
        ("12 %", Number(12.0, percent=True)),
        ("$1.45", Number(1.45)),
        ("3/4", Number(0.75)),
        ("x = 3, so 6", Number(6.0)),
        ("-2.5e3", Number(-2500.0)),
        ("1,234,567.5 units", Number(1234567.5)),
        ("no number", None),
    ],
)
def test_parse_number_reads_separators_percent_and_fractions(
    text: str, expected: Number | None
) -> None:
    assert parse_number(text) == expected


@pytest.mark.parametrize(
    ("prediction", "target", "precision", "expected"),
    [
        ("1,000", "1000", 0, True),
        ("12.46", "12.5", 1, True),
        ("12.44", "12.5", 1, False),
        ("12.0%", "12", 0, True),
        ("0.333", "0.33", 2, True),
        ("7", "7.0", None, True),
        ("seven", "7", 0, True),
    ],
)
def test_numeric_match_rounds_both_sides_to_the_precision(
    prediction: str, target: str, precision: int | None, expected: bool
) -> None:
    assert numeric_match(prediction, target, precision) is expected


@pytest.mark.parametrize(
    ("prediction", "target", "expected"),
    [
        ("104", "100", True),  # 4% off
        ("106", "100", False),  # 6% off
        ("95", "100", True),  # exactly 5% off
        ("1,040", "1000", True),
        ("12.0%", "12", True),  # percent sign on one side only
        ("12%", "0.12", True),  # x% reads as x/100
        ("0", "0", True),  # zero target: exact match
        ("0.01", "0", False),
        ("Yes", "yes", True),
        ("No", "yes", False),
    ],
)
def test_relaxed_match_allows_five_percent_on_numbers_only(
    prediction: str, target: str, expected: bool
) -> None:
    assert relaxed_match(prediction, target) is expected


@pytest.mark.parametrize(
    ("prediction", "targets", "expected"),
    [
        ("Coca Cola", ["Coca-Cola", "coca cola"], 1.0),
        ("1988", ["1998"], 0.75),  # 1 edit over 4 characters
        ("abcdef", ["abcxyz"], 0.5),  # similarity 3/6 is at the threshold: kept
        ("abcdefg", ["abxyzvw"], 0.0),  # similarity 2/7 is below it
        ("abcdefg", ["abcdxyz"], 1 - 3 / 7),
        ("  TOBACCO   institute ", ["Tobacco Institute"], 1.0),
        ("", [""], 1.0),
    ],
)
def test_anls_zeroes_similarities_below_one_half(
    prediction: str, targets: list[str], expected: float
) -> None:
    assert anls(prediction, targets) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("left", "right", "distance"),
    [("kitten", "sitting", 3), ("", "abc", 3), ("same", "same", 0), ("ab", "ba", 2)],
)
def test_levenshtein_counts_unit_edits(left: str, right: str, distance: int) -> None:
    assert levenshtein(left, right) == distance


def _dynamic_programming_distance(left: str, right: str) -> int:
    """The textbook edit distance ANLS is defined with, the oracle for the C implementation."""
    previous = list(range(len(right) + 1))
    for row, left_char in enumerate(left, start=1):
        current = [row]
        for column, right_char in enumerate(right, start=1):
            cost = previous[column - 1] + (left_char != right_char)
            current.append(min(previous[column] + 1, current[column - 1] + 1, cost))
        previous = current
    return previous[-1]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=24), st.text(max_size=24))
def test_levenshtein_equals_the_textbook_distance_on_any_text(left: str, right: str) -> None:
    assert levenshtein(left, right) == _dynamic_programming_distance(left, right)


@pytest.mark.parametrize(
    ("prediction", "target", "expected"),
    [
        ("16.0", "16", True),
        ("the area is 1,000 square units", "1000", True),
        ("3.14159", "3.14", True),
        ("It is mitochondria.", "Mitochondria", True),
        ("b", "['a', 'b']", True),
        ("a cat", "c", False),  # a one-letter target must be a word
        ("17", "16", False),
    ],
)
def test_open_match_follows_mmmu_eval_open(prediction: str, target: str, expected: bool) -> None:
    assert open_match(prediction, target) is expected


@pytest.mark.parametrize(
    ("prediction", "target", "expected"),
    [
        ("0.5", "\\frac{1}{2}", True),
        ("\\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt{3}}{2}", True),
        ("2\\sqrt{3}", "\\sqrt{12}", True),
        ("3.46", "2\\sqrt{3}", False),
        ("Yes", "yes", True),
        ("", "1", False),
    ],
)
def test_math_equal_uses_mathematical_equivalence(
    prediction: str, target: str, expected: bool
) -> None:
    assert math_equal(prediction, target) is expected


def test_a_gold_read_once_still_judges_each_answer_on_its_own() -> None:
    """A gold's math-verify reading is kept and compared with answer after answer: each
    comparison must leave it as it was, right and wrong answers in turn."""
    answers = ["0.5", "1/3", "\\frac{2}{4}", "0.6", "It is \\frac{3}{6} of the area.", "0.5"]
    expected = [True, False, True, False, True, True]
    assert [math_equal(answer, "\\frac{1}{2}") for answer in answers] == expected
    assert [math_equal(answer, "\\frac{1}{2}") for answer in reversed(answers)] == expected[::-1]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Yes", "yes"),
        ("no.", "no"),
        ("No, yes", "no"),
        ("Nope", "no"),
        ("Not really.", "no"),
        ("It is not the tallest building.", "no"),
        ("**Correct.**", "yes"),
        ("The answer is no.", "no"),
        ("I cannot tell from the image.", "unclear"),
        ("Not sure.", "unclear"),
        ("yesterday", None),
        ("", None),
    ],
)
def test_yes_no_reads_the_committed_answer(answer: str, expected: str | None) -> None:
    assert yes_no(answer) == expected


def test_substring_match_ignores_spaces_only_for_formula_items() -> None:
    assert substring_match("x^{2}", ["x ^ { 2 }"], ignore_spaces=True)
    assert not substring_match("x^{2}", ["x ^ { 2 }"])
    assert substring_match("The word is STOP.", ["stop"])


def test_closest_option_is_the_smallest_edit_distance() -> None:
    assert closest_option("8/12", ["3/11", "8/11", "6/11"]) == "8/11"


def _records(*rows: tuple[float, str]) -> list[dict]:
    return [{"score": score, "meta": {"category": group}} for score, group in rows]


def test_macro_average_weighs_each_category_equally() -> None:
    records = _records((1, "a"), (0, "a"), (1, "a"), (1, "b"))

    result = metrics.accuracy_by("category", macro_name="average")(records)

    assert result == pytest.approx(
        {"accuracy": 0.75, "average": (2 / 3 + 1) / 2, "accuracy/a": 2 / 3, "accuracy/b": 1.0}
    )


def _verdicts(*rows: tuple[bool, bool, bool]) -> list[dict]:
    return [
        {"correct": first, "swapped_correct": swapped, "position_consistent": same, "meta": {}}
        for first, swapped, same in rows
    ]


def test_critic_metrics_over_both_orders() -> None:
    records = _verdicts((True, True, True), (True, False, False), (False, True, False))

    result = metrics.critic_metrics()(records)

    assert result == pytest.approx(
        {
            "accuracy": 2 / 3,
            "accuracy_swapped": 2 / 3,
            "accuracy_order_mean": 2 / 3,
            "consistent_accuracy": 1 / 3,
            "position_consistency": 1 / 3,
        }
    )


def test_acc_plus_needs_every_pair_of_a_question_right() -> None:
    records = [
        {"correct": ok, "meta": {"category": "mcq", "pair_group": group}}
        for ok, group in ((True, "q1"), (True, "q1"), (True, "q2"), (False, "q2"), (True, "q3"))
    ]

    result = get_task("mm_rlhf_rewardbench").aggregate(records)

    assert result["accuracy"] == pytest.approx(0.8)
    assert result["acc_plus"] == pytest.approx(2 / 3)
    assert result["acc_plus/mcq"] == pytest.approx(2 / 3)


def test_scaling_curves_score_each_strategys_pick_and_the_oracle() -> None:
    from mmcritic_dev.scaling import scaling_curves

    records = [
        {"scores": [0.0, 1.0, 0.0, 1.0], "picks": {"knockout": {"1": 0, "2": 1, "4": 3}}},
        {"scores": [1.0, 0.0, 0.0, 0.0], "picks": {"knockout": {"1": 0, "2": 1, "4": 2}}},
    ]

    curves = scaling_curves(records, (1, 2, 4), ("knockout",))

    assert curves == {
        "knockout": {"1": 0.5, "2": 0.5, "4": 0.5},
        "oracle": {"1": 0.5, "2": 1.0, "4": 1.0},
    }


# The classes of misreading a careful grader would not make, one case or more each.
LETTER_CASES = [
    ("The correct choice is:\n\n**A**", ["cat", "dog", "bird", "fish"], "A"),
    ("B\nBecause the dog is on the left.", ["cat", "dog", "bird", "fish"], "B"),
    ("D. A and B", ["A only", "B only", "neither", "A and B"], "D"),
    (
        "C\nBecause both the red one and the blue one are round.",
        ["the red one", "the blue one", "both", "neither"],
        "C",
    ),
    ('{"answer": "A"}', ["yes", "no", "maybe", "unknown"], "A"),
    ('```json\n{"answer": "C"}\n```', ["yes", "no", "maybe", "unknown"], "C"),
    ("I cannot determine the weather from this image at all.", ["yes", "no"], None),
    ("The answer is: Is it raining?", ["Is it raining?", "Is it sunny?"], "A"),
    ("Ｂ", ["cat", "dog"], "B"),
]


@pytest.mark.parametrize(("response", "options", "expected"), LETTER_CASES)
def test_letter_reader_reads_the_committed_option(response, options, expected) -> None:
    letters = [chr(ord("A") + i) for i in range(len(options))]
    assert choice_letter(final_answer(response), letters, options) == expected


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("There are 16 bars in the chart, the value asked for is 14.", "16", False),
        ("There are 16 bars in the chart, the value asked for is 14.", "14", True),
        ("The height is 16 m.\nSo the answer is 14", "16", False),
        ("The compound is sodium chloride, which dissolves.", "sodium chloride", True),
        ("12.5", "12.50", True),
    ],
)
def test_mmmu_open_answers_match_the_stated_answer_only(response, gold, expected) -> None:
    assert open_match(final_answer(response), gold) is expected


def test_docvqa_keeps_currency_signs_and_divides_by_raw_lengths() -> None:
    assert anls(final_answer("$25.00"), ["$25.00"]) == 1.0
    assert anls("The total is $25.00.", ["$25.00"]) == 0.0  # the official rule, raw strings
    assert text_answer("The total is $25.00.") == "$25.00"  # what mmcritic scores
    assert text_answer("Total due: $25.00") == "$25.00"
    assert text_answer("It is addressed to Dr. J. H. Smith.") == "Dr. J. H. Smith"
    # the official script: distance on collapsed strings, length of the raw strings
    assert anls("a  b", ["a b"]) == 1.0
    assert anls("ab  c", ["abc"]) == pytest.approx(1 - 1 / 5)


def test_ocrbench_folds_fullwidth_text_and_keeps_formula_case() -> None:
    assert substring_match("ＳＴＯＰ", ["STOP"])
    assert substring_match("The sign says\nSTOP", ["stop"])
    assert not substring_match("x^2+1", ["X^2+1"], ignore_spaces=True)
    assert substring_match("X ^ 2 + 1", ["X^2+1"], ignore_spaces=True)


def test_chartqa_reads_a_boxed_latex_percent() -> None:
    assert relaxed_match(final_answer("<think>x</think>\\boxed{23\\%}"), "23")


def test_anls_keeps_half_credit_at_the_threshold_as_the_official_script_does():
    """The RRC DocVQA script zeroes a similarity only below 0.5: "35" for "25" is 0.5."""
    assert anls("35", ["25"]) == 0.5
    assert anls("1957", ["1975"]) == 0.5
    assert anls("357", ["25"]) == 0.0


@pytest.mark.parametrize(
    ("response", "options", "expected"),
    [
        # a self-correction after the stated answer: what follows it is the pick
        (
            "The answer is (C). Wait — point C is on the left wing. So the correct point is (B).",
            ["Point A", "Point B", "Point C", "Point D"],
            "B",
        ),
        # a rejected letter is no pick; the letter before the comma is
        ("A, not B (right) or the other options", ["left", "right", "up", "down"], "A"),
        ("B, because the arrow points right.", ["left", "right", "up", "down"], "B"),
        # an echo of the options in one sentence picks nothing
        (
            "The options are A. Adiabatic, B. Isobaric, C. Isochoric, D. Isothermal.",
            ["Adiabatic", "Isobaric", "Isochoric", "Isothermal"],
            None,
        ),
        # a second option allowed beside the first is a hedge
        (
            "A is darker, although it might be the shadow, so they could also be about the same.",
            ["A is darker", "B is darker", "About the same"],
            None,
        ),
        # an option's value in LaTeX names the option written in Unicode, not its prefix "2"
        ("The side is 4/2 = 2 ... Therefore, $x = 2\\sqrt{3}$.", ["2", "2√3", "4", "4√3"], "B"),
        # a range in the reasoning is no hedge between options
        (
            "The hour hand is between 9 and 10. The real time is 2:40, option **B**.",
            ["9:20", "2:40", "3:40", "8:20"],
            "B",
        ),
    ],
)
def test_the_letter_reader_reads_what_the_answer_settles_on(response, options, expected):
    assert choice_letter(response, LETTERS[: len(options)], options) == expected


@pytest.mark.parametrize(
    ("response", "question", "expected"),
    [
        ("The agreement was signed on Sept. 22, 1998.", "When was the agreement signed?",
         "Sept. 22, 1998"),
        ("The company was founded in 1957.", "When was the company founded?", "1957"),
        ("The meeting is held in the Board Room on the 4th floor.", "Where is the meeting held?",
         "Board Room on the 4th floor"),
        ("根据文档，报告由 Marketing Research Department 编写。", "Which department prepared it?",
         "Marketing Research Department"),
    ],
)  # fmt: skip
def test_text_answers_keep_what_the_question_asks_for(response, question, expected):
    assert text_answer(response, question) == expected


def test_a_conclusion_states_the_number_over_an_earlier_equation_or_sentence():
    question = "Find the maximum value of f(x)."
    assert numeric_match("f(x) = −(x − 2)² + 4, so the maximum value is 4, at x = 2.", 4, None,
                         question)  # fmt: skip
    derived = "The area of △ABD is 6. So △BED is half of △ABD. Therefore the area is 3."
    assert numeric_match(derived, 3, question="Find the area of △BEC.")
    assert not numeric_match(derived, 6, question="Find the area of △BEC.")


def test_open_answers_read_number_words_and_the_stated_count():
    assert open_match("The polyhedron is a cube, which has twelve edges.", "12")
    assert relaxed_match("The orange segments represent 'Disapprove'.", "Orange",
                         question="Which color represents 'Disapprove'?")  # fmt: skip


@pytest.mark.parametrize(
    ("response", "options", "expected"),
    [
        # a second option allowed as equally likely, in words that say it cannot tell
        (
            "Both the second and the third image look similar; it's hard to tell which is closer.",
            ["The second image", "The third image"],
            None,
        ),
        # reasoning cut off mid-sentence has committed to nothing ...
        (
            "3 Ω and 6 Ω in parallel give 2 Ω. With 4 Ω in series, 6 Ω. It is in parallel with the",
            ["2 Ω", "4 Ω", "6 Ω", "8 Ω"],
            None,
        ),
        # ... while an answer repeated until the limit has, and so has a final letter
        ("A is the answer. A is the answer. A is the answer. A is the", ["x", "y"], "A"),
        ("He has his arm drawn back, so he will throw the ball. **A**", ["throw", "run"], "A"),
        # an option set against the pick is no pick
        (
            "This is the Lachman test (B). The McMurray test (A), by contrast, rotates the tibia.",
            ["McMurray test", "Lachman test"],
            "B",
        ),
        # yes/no options read by the yes/no reader, ordinals by a Chinese answer's ordinal
        ("是的，Arizona 的数值在美国是最低的。", ["yes", "no"], "A"),
        ("第四张图片最有可能是真实照片。", ["the first image", "the second image",
                                         "the third image", "the fourth image"], "D"),
    ],
)  # fmt: skip
def test_the_letter_reader_knows_what_an_answer_has_not_committed_to(response, options, expected):
    assert choice_letter(response, LETTERS[: len(options)], options) == expected


def test_yes_no_reads_a_need_to_see_the_data_and_not_the_question_asked_again():
    question = "According to the sequence, is the ball falling?"
    assert yes_no("I would need to see the table to answer that.") == "unclear"
    assert yes_no("To determine whether the ball is falling, I look at the first frame. In the",
                  question) is None  # fmt: skip
    assert yes_no("The ball is falling.", question) == "yes"


def test_ocr_reads_the_reading_and_not_the_others_it_names():
    runners_up = "The country with the most cases is the United States, followed by Brazil."
    assert not substring_match(runners_up, ["Brazil"])
    corrected = "LIBERTV\n\nWait, the last letter has a tail, so it is a Y, not a V. It is LIBERTY."
    assert substring_match(corrected, ["LIBERTY"])


def test_an_aside_that_offers_another_value_is_a_hedge():
    assert not relaxed_match("3.1 (or 3.7 if the question means the darker bar)", "3.1")
    assert relaxed_match("About a quarter (23%) said so.", "23")


def test_a_street_address_is_read_whole():
    question = "What is the street address of the Washington office?"
    said = text_answer("The Washington office is located at 1875 Eye Street.", question)
    assert said == "1875 Eye Street"


def test_yes_no_reads_a_missing_figure_and_an_adverb_that_corrects_nothing():
    assert yes_no("I'm unable to see any map. Please upload the image so I can check.") == "unclear"
    assert yes_no("不能确定，因为没有提供地图。") == "unclear"
    assert yes_no("No, they are actually parallel; the tiles make them look tilted.") == "no"


def test_two_readings_are_no_reading():
    assert not substring_match('It reads "MARKET" or possibly "MARKETS".', ["MARKET"])
    assert not substring_match("ohsticf or ohstlcf", ["ohsticf"])
    assert not substring_match("house / horse", ["house"])
    assert substring_match("house", ["house"]) and substring_match("1/2", ["1/2"])


def test_a_conclusion_or_a_labelled_result_after_the_equations_is_the_answer():
    assert numeric_match("450° = 360° + 90°, so it turns a quarter more and points at 3.", 3)
    assert numeric_match("The graph crosses at x = −2, x = 0 and x = 2, so it has 3 zeros.", 3)
    assert math_equal("x + 1 = −x + 5\n2x = 4\nx = 2\ny = 3\nIntersection: (2, 3)", "(2,3)")
    assert not math_equal("∠ABC = 180° − 50° = 130°.\nSo ∠ABC is 50° or 130°.", "130")


def test_docvqa_reads_a_number_with_the_asked_word_before_it_as_either_gold_writes_it():
    task = get_task("docvqa_val")
    answer = "The building has 4 floors; the meeting room is Room 210."
    for gold in ("Room 210", "210"):
        problem = Problem("What is the room number?", [gold], question="What is the room number?")
        assert task.score(answer, problem).score == 1.0


def test_realworldqa_reads_no_word_an_answer_negates():
    task = get_task("realworldqa")
    question = "What vehicle is in front of the car?"
    problem = Problem(question, "bus", meta={"letters": []}, question=question)
    assert task.score("A school bus.", problem).score == 1.0
    assert task.score("It is not a school bus.", problem).score == 0.0


def test_mathvision_scores_a_letter_that_contradicts_its_value_as_no_pick():
    task = get_task("mathvision_testmini")
    options = ["10", "15", "30", "31", "60"]
    problem = Problem("What is the volume?", "C", meta={"options": options, "subject": ""})
    assert task.score("The volume is 2 × 3 × 5 = 30 cubic units. (D)", problem).score == 0.0
    assert task.score("The volume is 2 × 3 × 5 = 30 cubic units.", problem).score == 1.0


def test_docvqa_keeps_an_amount_with_its_scale_and_a_count_in_words_as_written():
    question = "How much was spent on advertising in 1979?"
    said = text_answer("In 1979, $1.2 million was spent on advertising.", question)
    assert said == "$1.2 million"
    counted = text_answer(
        "Two hundred forty participants were enrolled.", "How many were enrolled?"
    )
    assert anls(counted, ["240"]) == 0.0


@pytest.mark.parametrize(
    ("response", "options", "expected"),
    [
        # letters in brackets of any kind, and named as an option in lower case
        ("【C】", OPTIONS, "C"),
        ("The answer is [B].", OPTIONS, "B"),
        ("choice a", OPTIONS, "A"),
        # a dash before a digit is a minus sign, not a list marker
        ("-1/2", ["-2", "-1/2", "1/2", "2"], "B"),
        # a few words that only one option holds in a row ...
        ("Center pivot", ["Drip irrigation", "Flood irrigation", "Center-pivot irrigation"], "C"),
        # ... but not words every option holds, nor letters inside an option's text
        ("irrigation", ["Drip irrigation", "Flood irrigation", "Center-pivot irrigation"], None),
        ("A and B", ["snails", "algae", "both a and b", "neither a nor b"], None),
        # options the answer rules out are no pick
        ("Option B is correct; A is wrong because it opens in white light, and C is wrong too.",
         ["At the start.", "When the actor enters.", "At the end."], "B"),
        # an answer cut off mid-count, or one that concludes no option fits, picks none
        ("I count the motorcycles along the curb: 1, 2, 3, 4, 5, and then", ["2", "5"], None),
        ("Box A is slightly too large and Box B slightly too small, so neither is clearly better.",
         ["Box A", "Box B"], None),
    ],
)  # fmt: skip
def test_the_letter_reader_reads_brackets_parts_of_options_and_rejections(
    response, options, expected
):
    assert choice_letter(response, LETTERS[: len(options)], options) == expected


def test_yes_no_reads_weighing_both_then_giving_up_and_a_lack_of_information():
    hedge = "It could be yes, since March is high, so it might be no. I can't say for sure."
    assert yes_no(hedge) == "unclear"
    assert yes_no("I don't have enough information to answer this with certainty.") == "unclear"
    assert yes_no("No. I can't say more than that without the data.") == "no"


def test_a_heading_marks_the_final_answer_and_kimi_think_tags_are_think_tags():
    reasoning = "The sides are 5, 5 and 8. Hmm, let me check the base... yes, it is 8, not 5."
    assert final_answer(f"{reasoning}\n\n**Final Answer**\n\nNo, it is not equilateral.") == (
        "No, it is not equilateral"
    )
    kimi = "◁think▷It lists Robert L. Hughes, Chairman.◁/think▷Robert L. Hughes"
    assert text_answer(kimi, "Who is the chairman?") == "Robert L. Hughes"
    # a critic's draft verdict inside its family's think block is no verdict
    assert parse_judgement("◁think▷Draft: \\boxed{1}◁/think▷\\boxed{2}").choice == "2"
    assert parse_judgement("◁think▷So Response 2 is better.\n\\boxed{2}").choice is None
    assert final_answer("### Final Answer\n**Acme Laboratories, Inc.**") == (
        "Acme Laboratories, Inc."
    )


@pytest.mark.parametrize(
    ("response", "question", "expected"),
    [
        # what a self-correction settles on
        ("The invoice number is 47-1129. Wait, the last two digits are 9 then 2, so it is "
         "47-1192.", "What is the invoice number?", "47-1192"),
        # a code joined by a hyphen is read whole, not as its number
        ("Actually, the last digit is a 1, so the lot number is B-0451.",
         "What is the lot number?", "B-0451"),
        # a markdown table's row, and the sentence that answers after a list
        ("| Field | Value |\n|---|---|\n| Report date | May 5, 1994 |",
         "What is the date of the report?", "May 5, 1994"),
        ("The document mentions two cities:\n- Chicago (venue)\n- Boston (registration)\n\n"
         "The conference is held in Chicago.", "In which city is the conference held?",
         "Chicago"),
        # two readings are none
        ('The subject reads either "Project Greenleaf" or "Project Greenfield"; I cannot say.',
         "What is the project's name?", ""),
    ],
)  # fmt: skip
def test_text_answers_read_corrections_tables_lists_and_codes(response, question, expected):
    assert text_answer(response, question) == expected


def test_counts_in_chinese_numerals_and_values_on_separate_lines():
    assert numeric_match("图中有两辆自行车。", "2", question="How many bicycles are there?")
    assert not relaxed_match("2016\n2017", "2017")
    assert relaxed_match("**Step 2: Read the value.** It reads 27%.\n\n*Answer*: 27%", "27")
    assert not substring_match('It appears to be "quickly", though it might also be "quietly".',
                               ["quickly"])  # fmt: skip


@pytest.mark.parametrize(
    ("critique", "expected"),
    [
        ("### Verdict\n\n**Response 1** is better.", "1"),
        ("第一个回答把狐狸认成了狼。\n\n我更倾向于第二个回答。", "2"),
        ("Answer 2 is more helpful overall. Which one is better depends on what the user values;"
         " either could reasonably be preferred.", None),
    ],
)  # fmt: skip
def test_a_critic_verdict_in_words_is_read_through_markup_chinese_and_hedges(critique, expected):
    assert parse_judgement(critique).choice == expected
    assert parse_verdict(critique).choice is None  # the training reward reads boxes only


def test_math_answers_match_a_gold_with_units_and_a_named_point():
    assert math_equal("60", "60 cm^3")
    assert not math_equal("61", "60 cm^3")
    assert math_equal("Set x - 1 = -x + 3, so x = 2 and y = 1.\n\nThe point is P(2, 1).", "(2,1)")
    assert not math_equal("The point is P(2, 2).", "(2,1)")


def test_a_length_in_inches_is_not_cut_off_before_its_value():
    assert math_equal("The side is 12 in", "12")
    assert not math_equal("Using the formula, the side is found in", "12")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<answer>C</answer>", "C"),
        ("<think>The skull encloses the brain.</think><answer>D</answer>", "D"),
        ("<b>B</b>", "B"),
        ("The answer is <strong>A</strong>.", "A"),
    ],
)
def test_html_answer_tags_and_bold_hold_the_answer(response, expected):
    assert choice_letter(final_answer(response), LETTERS, OPTIONS) == expected


@pytest.mark.parametrize(
    ("critique", "expected"),
    [
        ('{"reason": "Answer 1 misnames the owl.", "better": "Answer 2"}', "2"),
        ("Answer 2.", "2"),
        ("1", "1"),
        ("R1 sums wrong. R2 cites both rows.\n\nBetter: Response 2.", "2"),
        ("Both are fine, R1 is terser.\n\nPick: Response 1.", "1"),
        ("Overall Judgment: Answer 2 is better.\n\nUpon closer inspection, the stamp reads 12 May,"
         " as Answer 1 says. I retract my earlier judgment: Answer 1 is better.", "1"),
        ("Response 1 is better. Response 2 is better.", None),
        ("## Evaluation\n- **Response 1:** reads 42.\n\n## Verdict\nResponse 2", "2"),
        ("### Verdict\n**Response 1** — it reads the slogan exactly.", "1"),
        ("Response 2 better.", "2"),
        ("Is Response 1 better? It is longer, but its count of 7 windows is wrong.", None),
        ("Is Response 1 better? No: its count is wrong. Response 2 is better.", "2"),
    ],
)  # fmt: skip
def test_a_critic_verdict_is_read_from_a_label_a_bare_index_and_a_retraction(critique, expected):
    assert parse_judgement(critique).choice == expected
    assert parse_verdict(critique).choice is None  # the training reward reads boxes only


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so the ratio is 1/2.", 0.5),
        ("The card lists 2 3/4 cups", 2.75),
        ("-1/2", -0.5),
        ("signed on 3/4/2020", 2020.0),
        ("The highest value is 4.5 × 10^4.", 45000.0),
        ("T = 2.5 × 10³ N·m", 2500.0),
        ("c = 3 \\times 10^{8} m/s", 3e8),
        ("q = 1.6×10⁻¹⁹ C", 1.6e-19),
    ],
)
def test_numbers_are_read_in_the_forms_people_write_them(text, expected):
    assert parse_number(text).value == pytest.approx(expected, rel=1e-12)


def test_a_scale_word_matches_the_full_value_and_a_chart_in_millions():
    assert parse_number("About 1.5 million people.") == Number(1.5, scale=1e6)
    assert relaxed_match("About 1.5 million people.", "1500000")
    assert relaxed_match("About 1.5 million people.", "1.5")
    assert not relaxed_match("About 2.5 million people.", "1500000")


def test_written_numbers_reach_every_numeric_reader():
    flour = "How many cups of flour does the recipe card call for?"
    assert open_match("T = F × r = 5000 N × 0.5 m = 2.5 × 10³ N·m", "2500")
    assert numeric_match("The card lists 2 1/2 cups of flour.", "2.5", question=flour)
    assert not numeric_match("The card lists 2 1/2 cups of flour.", "2", question=flour)
    assert fold("10³ and x²") == "10^3 and x^2"  # a superscript is a power: 10³ is not 103


def test_a_value_hedged_after_it_is_stated_is_no_answer():
    hedged = ("Based on their appearance, the age gap is 6 years. However, the man on the left "
              "could also be around 10 years older, so it might be 10.")  # fmt: skip
    question = "What is the age gap between these two people in image?"
    assert not numeric_match(hedged, "6", question=question)
    assert numeric_match("Based on their appearance, the age gap is 6 years.", "6",
                         question=question)  # fmt: skip


def test_yes_no_reads_never_and_an_answer_that_offers_both():
    assert yes_no("The red line stays below the blue line, so it never exceeds it.") == "no"
    assert yes_no("In 2015 it stays below. However, I'm not sure whether the lines cross in "
                  "2016, so it could be either yes or no.") == "unclear"  # fmt: skip
    assert relaxed_match("The red line stays below the blue line, so it never exceeds it.", "No")


def test_an_abbreviation_matches_with_or_without_its_dots():
    assert relaxed_match("US", "U.S.")
    assert relaxed_match("U.S.", "US")
    assert not relaxed_match("UK", "U.S.")


@pytest.mark.parametrize(
    ("response", "targets", "expected"),
    [
        ("Yes. The cover shows a cross and the title 'Daily Devotions for Knowing God'.",
         ["No"], False),
        ("No, it is a cookbook.", ["No"], True),
        ('clearly\n\nThe first letters could be mistaken for a "d" (giving "dearly"), but the '
         'ascender is separate from the bowl, so it is "cl".', ["clearly"], True),
        ("LIBERTV\n\nWait, the last letter has a descender, so it is a Y. The word is LIBERTY.",
         ["LIBERTY"], True),
        ("GARDEN or GARDENS (the end is occluded)", ["garden"], False),
    ],
)  # fmt: skip
def test_ocr_reads_yes_no_a_first_line_reading_and_two_readings_with_an_aside(
    response, targets, expected
):
    assert substring_match(response, targets) is expected


@pytest.mark.parametrize(
    ("response", "question", "expected"),
    [
        ('The address line reads P.O. Box 2595... wait, re-checking the digits, the last two are'
         ' "59", so the box number is 2959.', "What is the P.O. Box number?", "2959"),
        ("P.O. Box 1487\nRichmond, VA 23261", "What is the mailing address given for returns?",
         "P.O. Box 1487 Richmond, VA 23261"),
        ("The box next to Renewal has an X mark, so the answer is Yes. ✅",
         "Is the box for 'Renewal' checked?", "Yes"),
        ("4 pages", "How many pages are in the fax?", "4 pages"),
        ("### Answer\n**248** participants", "How many participants were enrolled?", "248"),
    ],
)  # fmt: skip
def test_text_answers_read_conclusions_addresses_emoji_and_bare_counts(
    response, question, expected
):
    assert text_answer(final_answer(response), question) == expected


def test_math_reads_the_one_number_of_a_worded_span():
    answer = "Figure n has 3n + 1 matchsticks, so figure 10 has 3 × 10 + 1 = 31 matchsticks."
    question = "How many matchsticks are in the 10th figure?"
    assert math_equal(answer, "31", question=question)
    assert not math_equal(answer, "30", question=question)


def test_an_option_named_then_labelled_by_its_letter_is_the_pick():
    answer = (
        "The larva develops into the pupa, which is option B. Option C (adult) only emerges"
        " after the pupa stage, and option D (nymph) belongs to incomplete metamorphosis."
    )
    assert choice_letter(answer, LETTERS, ["egg", "pupa", "adult", "nymph"]) == "B"


@pytest.mark.parametrize(
    ("answer", "target", "expected"),
    [
        ("The arrow points to the left.", "Left", 1.0),
        ("The arrow points to the right.", "Left", 0.0),
        ("A school bus.", "Bus", 1.0),
        ("A pickup truck.", "Bus", 0.0),
        ("Not a bus, a tram.", "Bus", 0.0),
    ],
)
def test_realworldqa_reads_a_text_answer_in_a_sentence_or_a_noun_phrase(answer, target, expected):
    row = {"question": "Which direction does the arrow point or vehicle is it?\n"
           "Please answer directly with a single word or number.", "answer": target,
           "image": None}  # fmt: skip
    task = get_task("realworldqa")
    assert task.score(answer, task.problem(row)).score == expected


def test_ocr_reads_a_closing_sentence_that_picks_one_of_the_readings_named():
    answer = ("The document shows order number A-4471 and invoice number A-4417. "
              "The invoice number is A-4417.")  # fmt: skip
    assert not substring_match(answer, ["A-4471"])
    assert substring_match(answer, ["A-4417"])
    assert substring_match("The number is 80417, not 80477; the fourth digit is a 1.", ["80417"])


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("A. Paris ✗\nB. London ✓\nC. Berlin ✗\nD. Madrid ✗", "B"),
        ("A. Paris ✓\nB. London ✓\nC. Berlin ✗", None),
        ("Option (C) is correct; (A), (B) and (D) are not.", "C"),
        ("Option (C) is not correct.", None),
        ("Paris is the capital. \\boxed{A} or \\boxed{B}", None),
        ("Draft \\boxed{A}. Wait, it is London: \\boxed{B}", "B"),
        ("La respuesta es: B", "B"),
        ("首都はロンドンです。答え：B", "B"),
        ("피타고라스 정리에 의해 ... 정답은 B입니다.", "B"),
    ],
)
def test_ticks_declarations_offered_boxes_and_foreign_answer_markers(response, expected):
    assert choice_letter(final_answer(response), LETTERS, OPTIONS) == expected


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Sí, «Matar a un ruiseñor» fue escrito por Harper Lee.", "yes"),
        ("Si el cielo está nublado, es difícil saberlo.", None),
        ("Oui, Avatar était le film le plus rentable.", "yes"),
        ("Nein, der Ball bewegt sich weg.", "no"),
        ("はい、これは日本の国旗です。", "yes"),
        ("아니요, 공은 골대에서 멀어지고 있습니다.", "no"),
        ("It's hard to say; it could just be shadows. Possibly yes, possibly no.", "unclear"),
    ],
)
def test_yes_no_in_other_languages_and_both_offered(response, expected):
    assert yes_no(response) == expected


@pytest.mark.parametrize(
    ("critique", "expected"),
    [
        ("1. Precisión: ...\n\nVeredicto final: la Respuesta 2 es mejor.", "2"),
        ("Conclusion : la réponse 1 est meilleure.", "1"),
        ("Fazit: Antwort 2 ist besser.", "2"),
        ("総合的に見て、回答1の方が優れています。", "1"),
        ("따라서 답변 2가 더 낫습니다.", "2"),
        ("回答1：4分。\n回答2：9分。\n\n回答2明显更好。", "2"),
        ("The better answer is not Answer 1 but Answer 2.", "2"),
        ("Answer 2 is more accurate, but either answer could be preferred.", None),
    ],
)
def test_a_critic_verdict_in_other_languages_and_a_contrast(critique, expected):
    assert parse_judgement(critique).choice == expected


def test_sign_words_and_a_conclusion_state_the_value():
    assert number_word("The slope is minus two.") == "The slope is -2."
    assert number_word("5 minus 3 is 2") == "5 minus 3 is 2"
    assert math_equal("so the distance between the two points is ten units.", "10")
    assert math_equal("V = πr²h = π · 2² · 5 = 20π cubic centimetres.", "20π")
    assert open_match("c² = 6² + 8² = 36 + 64 = 100, so the hypotenuse is ten units long.", "10")
    assert not open_match("c² = 6² + 8² = 36 + 64 = 100, so the hypotenuse is ten units long.",
                          "100")  # fmt: skip


def test_a_box_cut_off_and_a_value_set_aside_are_read_as_such():
    cut = "We complete the square: y = -(x-2)^2 + 5. Therefore the maximum value is $\\boxed{"
    assert not math_equal(cut, "5")
    question = "How many triangles are there?"
    said = "Counting carefully, the answer is 2, not 3 — the third shape is a trapezoid."
    assert numeric_match(said, "2", question=question)
    assert not numeric_match(said, "3", question=question)


@pytest.mark.parametrize(
    ("answer", "target", "expected"),
    [("USD 3,000", "$3000", 1.0), ("USD 3,500", "$3000", 0.0),
     ("\\boxed{50\\,^\\circ\\mathrm{C}}", "50°C", 1.0), ("\\boxed{60^\\circ C}", "50°C", 0.0),
     # an exact value and its rounding state the exact one
     ("V = \\pi r^2 h = 90\\pi \\approx 282.7\\ cm^3", "90π cm³", 1.0),
     ("V = \\pi r^2 h = 30\\pi \\approx 94.2\\ cm^3", "90π cm³", 0.0),
     # a number's base as a subscript after it, dropped
     ("Reading the remainders from bottom to top gives **101101₂**.", "101101", 1.0),
     ("Reading the remainders from bottom to top gives **101001₂**.", "101101", 0.0),
     # a share as its fraction
     ("η = 1 − 300 K / 600 K = 0.5", "50%", 1.0), ("η = 1 − 300 K / 500 K = 0.4", "50%", 0.0),
     # a unit of another quantity is another answer; another symbol of the same is not
     ("The block gains 98 W of potential energy.", "98 J", 0.0),
     ("The block gains 98 J of potential energy.", "98 J", 1.0),
     ("The speed is 9.8 m/s².", "9.8 m/s", 0.0), ("0.2 mol/L", "0.20 M", 1.0),
     ("It gains 98 joules.", "98 J", 1.0),
     # a number written with separators beside the value is read, not parsed as a unit's value
     ("Of the readings 1,2,3 V, the drop is 2 V.", "2 V", 1.0),
     ("It releases 1,234.5 J in all, so 98 W.", "98 J", 0.0)],
)  # fmt: skip
def test_mmvu_reads_quantities_with_a_currency_degrees_or_pi(answer, target, expected):
    row = {"question": "What is it?", "answer": target, "choices": {},
           "question_type": "open-ended", "video": "v.mp4"}  # fmt: skip
    task = get_task("mmvu")
    assert task.score(answer, task.problem(row)).score == expected


@pytest.mark.parametrize(
    ("response", "question", "expected"),
    [
        ("The note is signed 'Rob'.", "Who wrote the handwritten note?", "Rob"),
        ("배치 번호는 B-2291입니다.", "What is the batch number?", "B-2291"),
    ],
)
def test_text_answers_read_a_closing_single_quote_and_latin_text_in_korean(
    response, question, expected
):
    assert text_answer(response, question) == expected
    assert relaxed_match("The 'Online' category is shown in orange.", "orange")


@pytest.mark.parametrize(
    "answer",
    [
        "The table doesn't give enough information to say whether sales rose.",
        "The graph shows no labels for the years, so this cannot be determined.",
    ],
)
def test_an_answer_that_cannot_tell_is_unclear_not_no(answer):
    assert yes_no(answer) == "unclear"
    assert not relaxed_match(answer, "No")


def test_saying_it_cannot_be_determined_picks_an_option_that_says_so():
    options = ["He is happy", "He is tired", "It cannot be determined from the image"]
    answer = "His face is turned away, so it cannot be determined from the image."
    assert choice_letter(answer, ["A", "B", "C"], options) == "C"
    assert choice_letter(answer, LETTERS, OPTIONS) is None


def test_a_critic_that_rates_both_about_the_same_names_no_verdict():
    critique = (
        "Answer 1 is more accurate on the value, but Answer 2 explains the trend. "
        "I would rate them about the same."
    )
    assert parse_judgement(critique).choice is None
    assert parse_judgement("Answer 2 is better. They are about the same length.").choice == "2"


@pytest.mark.parametrize(
    ("response", "target", "expected"),
    [
        ("The area of the sector is 4π (≈ 12.57).", "4\\pi", True),
        ("The area of the sector is 4π (≈ 12.57).", "12.57", True),
        ("The area of the sector is 4π (approximately 12.57).", "3\\pi", False),
        ("The area of the sector is 4π (approximately 12.57).", "12.57", True),
        ("L'aire du secteur est 4π (environ 12.57).", "12.57", True),
        ("Die Fläche des Sektors ist 4π (etwa 12.57).", "12.57", True),
        ("Die Fläche des Sektors ist 4π (etwa 12.57).", "4\\pi", True),
    ],
)
def test_a_decimal_approximation_beside_the_value_does_not_hide_it(response, target, expected):
    assert math_equal(response, target) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("two hundred fifty", "250"), ("three hundred and six cars", "306 cars"),
     ("twelve hundred", "1200"), ("One hundred.", "100.")],
)  # fmt: skip
def test_hundreds_in_words_are_one_number(text, expected):
    assert number_word(text) == expected


@pytest.mark.parametrize(
    ("gold", "right", "wrong"),
    [
        ("Face-centered cubic", "FCC (face-centred cubic)", "Body-centred cubic"),  # spelling
        ("Mitochondrion", "The mitochondria.", "The chloroplasts."),  # a plural with no ending
        ("Hydrogen gas (H2)", "Hydrogen (H₂).", "Oxygen (O₂)."),  # a formula in brackets
    ],
)
def test_mmvu_reads_another_form_of_the_gold_as_the_gold(gold, right, wrong):
    row = {"question": "Which one is shown?", "answer": gold, "choices": {},
           "question_type": "open-ended", "video": "v.mp4"}  # fmt: skip
    task = get_task("mmvu")
    assert task.score(right, task.problem(row)).score == 1.0
    assert task.score(wrong, task.problem(row)).score == 0.0


@pytest.mark.parametrize(
    ("response", "question", "expected"),
    [
        ("Samsung led the market in 2019 with 31.2%. Apple (24%) came second.",
         "Which company led the market in 2019?", "Samsung"),
        ("The date at the top appears to be 3/9/88.", "What is the date on the memo?", "3/9/88"),
        ("Adding the sales tax of $18.40, the invoice shows a total of $248.40.",
         "What is the total amount including tax?", "$248.40"),
        ('The initials look like "R. K. Tanner" or "R. H. Tanner".', "Who signed it?", ""),
        ("Plan A: $40\nPlan B: $55\n\nPlan B", "Which plan costs more?", "Plan B"),
    ],
)  # fmt: skip
def test_text_answers_read_the_subject_the_later_verb_and_the_closing_line(
    response, question, expected
):
    assert text_answer(response, question) == expected


def test_chartqa_reads_an_answer_named_as_subject_or_after_the_verb():
    question = "Which region recorded the largest drop?"
    assert relaxed_match(
        "Europe recorded the largest drop, from 40% to 22%.", "Europe", question=question
    )
    assert not relaxed_match(
        "Europe recorded the largest drop, from 40% to 22%.", "Asia", question=question
    )
    question = "Which sector had the highest growth?"
    assert relaxed_match(
        "The sector with the highest growth is Retail (+9%).", "Retail", question=question
    )
    assert relaxed_match(
        "The highest share is 41%, among those aged 65+.",
        "41",
        question="What is the highest share?",
    )


def test_reasoning_broken_off_at_a_subject_picks_no_option():
    options = ["the left photo", "the right photo"]
    cut = "Both photos show a beach at sunset. The lighting in the first is warmer. The right photo"
    assert choice_letter(cut, ["A", "B"], options) is None
    assert (
        choice_letter(
            "The lighting is warmer on the right.\n\nThe right photo", ["A", "B"], options
        )
        == "B"
    )


def test_round_l_readings_of_abbreviations_hedged_years_and_restated_claims():
    assert (
        text_answer('{"answer": "Philip Morris U.S.A."}', "Who sent it?") == "Philip Morris U.S.A."
    )
    hedged = "It is dated either 1984 or 1985: the seal says 1984 but the memo says 1985."
    assert text_answer(hedged, "In what year was it dated?") == ""
    question = "Was the share in 2018 lower than in 2017?"
    assert relaxed_match("The share in 2018 (12%) is indeed lower than in 2017 (15%).", "Yes",
                         question=question)  # fmt: skip
    assert yes_no("The blue bar is the third tallest.", "Is the blue bar the tallest?") is None


def test_the_value_after_the_asked_sentence_and_an_equation_named_as_subject():
    question = "In the figure, AB = 6 and M is the midpoint of AB. What is the length of CM?"
    answer = (
        "Since M is the midpoint of AB, AM = 3. Triangle CMB is right-angled at M, so\n\n"
        "CM = \\sqrt{4^2 + 3^2} = \\sqrt{25} = 5\n\nThe length of CM is 5."
    )
    assert math_equal(answer, "5", question)
    assert not math_equal(answer, "3", question)
    counted = (
        "The line y = 2 meets the curve at four points, so the equation g(x) = 2 has 4 solutions."
    )
    assert math_equal(counted, "4")
    assert not math_equal(counted, "2")


def test_critics_and_yes_no_answers_that_end_undecided():
    critique = (
        "Answer 2 is more precise on the count, while Answer 1 is more fluent. "
        "The choice depends on the reader."
    )
    assert parse_judgement(critique).choice is None
    answer = (
        "The left circle looks bigger, but it may be the Ebbinghaus illusion and they could be "
        "the same size. Without measuring I can't tell."
    )
    assert yes_no(answer, "Is the left circle bigger than the right circle?") == "unclear"
