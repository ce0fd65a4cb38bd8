"""What surrounds an answer without being it: a clause that says where a value came from, an
aside, a count of something else, a value told beside a name, a hedge after a turn. Each case
is a phrasing real models write, read as a careful grader reads it."""

from __future__ import annotations

import pytest

from mmcritic.eval.answers import answer_span, is_cut_off, number_word
from mmcritic.eval.choices import read_choice
from mmcritic.eval.scorers import anls, math_equal, numeric_match, relaxed_match
from mmcritic.eval.text_answers import text_answer
from mmcritic.eval.yes_no import yes_no
from mmcritic.rewards.parsing import parse_judgement


@pytest.mark.parametrize(
    ("response", "question", "gold"),
    [
        # a participle clause after the value says where it came from
        (
            "The slope is 2, computed from the two labelled points (0, 3) and (2, 7).",
            "What is the slope of the line?",
            "2",
        ),
        (
            "The perimeter is 24, using the side lengths 5 and 7 marked on the figure.",
            "Find the perimeter of the rectangle.",
            "24",
        ),
        # an aside that holds a bracket of its own
        (
            "So the x-coordinate of the vertex is 2 (the vertex itself is (2, −1)).",
            "Find the x-coordinate of its vertex.",
            "2",
        ),
        # a number word joined to a noun is no number
        (
            "There are 4 cards, so there are 4 × 3 × 2 = 24 different three-digit numbers.",
            "How many three-digit numbers can be made?",
            "24",
        ),
    ],
)
def test_what_trails_a_value_is_not_the_answer(response: str, question: str, gold: str) -> None:
    assert math_equal(response, gold, question)


def test_the_counted_part_answers_only_when_the_question_asks_for_it() -> None:
    bars = "There are 6 bars in the chart, and 2 of them have values smaller than 6."
    assert answer_span(bars, "How many bars have values smaller than 6?") == "2"
    calories = "There are 110 calories per serving, and 45 of them come from fat."
    assert answer_span(calories, "How many calories are there per serving?") == "110"


def test_a_compound_word_keeps_its_number_word() -> None:
    assert number_word("three-digit numbers, one-way street, thirty-five") == (
        "three-digit numbers, one-way street, 35"
    )


def test_a_sum_left_open_is_cut_off_and_picks_no_option() -> None:
    cut = (
        "For a central point load P the maximum moment is PL/4. "
        "Substituting P = 20 kN and L = 4 m, we get M_max = 20 × 4 /"
    )
    options = ["10 kN·m", "20 kN·m", "40 kN·m", "80 kN·m"]
    assert read_choice(cut, list("ABCD"), options).letter is None
    assert is_cut_off("M_max = 20 × 4 /") and is_cut_off("so x = 7 +")
    assert not is_cut_off("The language is C++") and not is_cut_off("Grade: A+")


@pytest.mark.parametrize(
    ("response", "question", "gold"),
    [
        (
            "The 18-29 age group has the lowest approval rating at 31%.",
            "Which age group has the lowest approval rating?",
            "18-29",
        ),
        (
            "2012 and 2016 both have a value of 35.",
            "Which two years have the same value?",
            "2012 and 2016",
        ),
        (
            "Q1 is 12, Q2 is 15, Q3 is 21 and Q4 is 19. The highest is Q3 with 21.",
            "Which quarter had the highest sales?",
            "Q3",
        ),
        (
            "El país con el valor más bajo es Chile.",
            "Which country has the lowest value?",
            "Chile",
        ),
    ],
)
def test_a_text_answer_is_read_without_what_is_told_beside_it(
    response: str, question: str, gold: str
) -> None:
    assert relaxed_match(response, gold, question=question)
    assert not relaxed_match(response, "nothing like it", question=question)


@pytest.mark.parametrize(
    ("response", "question", "read"),
    [
        (
            "The letter is 2 pages long; it is dated August 8, 1979.",
            "What is the date of the letter?",
            "August 8, 1979",
        ),
        ("64% of respondents agreed.", "What percentage of respondents agreed?", "64%"),
        (
            "Row values: Iron 12 mg, Calcium 800 mg. Calcium is 800 mg.",
            "What is the amount of calcium?",
            "800 mg",
        ),
        ("Der Absender ist Dr. Hans Müller.", "Who is the sender?", "Dr. Hans Müller"),
        # a phrase of three words or fewer is the answer as written
        ("5 pages", "How many pages are in the fax?", "5 pages"),
    ],
)
def test_a_document_answer_is_the_value_the_question_asks_for(
    response: str, question: str, read: str
) -> None:
    assert text_answer(response, question) == read
    assert anls(text_answer(response, question), [read]) == 1.0


def test_a_count_beside_the_asked_value_is_not_the_answer() -> None:
    assert numeric_match(
        "There are 6 bars in the chart, and 2 of them have values smaller than 6.",
        "2",
        question="How many bars have values smaller than 6?",
    )


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        ("It may or may not be blocked; the truck could be parked on the shoulder.", "unclear"),
        (
            "Possibly. The left bar might be taller, but they could also be the same height.",
            "unclear",
        ),
        ("It might look taller, but they are the same height.", None),
    ],
)
def test_a_yes_no_answer_that_offers_both_settles_on_neither(answer: str, read: str) -> None:
    assert yes_no(answer) == read


def test_a_range_that_is_an_options_own_text_is_no_hedge() -> None:
    scores = ["2–1.", "3–1.", "3–2.", "1–0."]
    settled = "At the 90th minute the scoreboard shows 3–2."
    assert read_choice(settled, list("ABCD"), scores).letter == "C"
    assert read_choice("It ended 3–2 or 3–1, I cannot tell.", list("ABCD"), scores).letter is None
    times = ["About 10 seconds.", "About 30 seconds.", "About 1 minute.", "About 2 minutes."]
    hedged = "The fireworks begin around 30 seconds or 1 minute into the video."
    assert read_choice(hedged, list("ABCD"), times).letter is None


@pytest.mark.parametrize(
    ("critique", "verdict"),
    [
        (
            "Response 2 names the jersey number more closely. "
            "Response 2 is therefore the better answer.",
            "2",
        ),
        (
            "Response 1 is better.\n\nHowever, looking more closely, the cup holds tea, so "
            "Response 2 is right after all. Final answer: Response 2.",
            "2",
        ),
        (
            "Response 1 is better.\n\nOn reflection, both misidentify the species, so neither "
            "is really better than the other.",
            None,
        ),
        ("Final answer: 12", None),
    ],
)
def test_a_critique_settles_on_its_final_verdict(critique: str, verdict: str | None) -> None:
    assert parse_judgement(critique).choice == verdict
