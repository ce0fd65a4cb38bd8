"""Where a free answer states its answer: sentences, main clauses, alternatives, turns."""

from __future__ import annotations

from mmcritic.reading.statements import (
    clauses,
    main_clause,
    sentences,
    settled_part,
    stating_clause,
    subject_answer,
)


def test_an_abbreviation_does_not_end_a_sentence():
    text = "The fax is addressed to Dr. Helen Whittaker at U.S. Steel. It is dated May 3."
    assert sentences(text) == [
        "The fax is addressed to Dr. Helen Whittaker at U.S. Steel.",
        "It is dated May 3.",
    ]


def test_a_semicolon_separates_two_statements():
    text = "The telephone number is (919) 741-5000; the fax number is (919) 741-7411."
    assert sentences(text)[0] == "The telephone number is (919) 741-5000"


def test_a_trailing_comparison_is_context_not_the_main_clause():
    sentence = "In 2013 the rate was 24.9%, rising to 26.5% in 2014."
    assert main_clause(sentence) == "In 2013 the rate was 24.9%"
    assert clauses(sentence)[1].startswith("rising to 26.5%")


def test_a_label_colon_stays_but_a_list_colon_ends_the_clause():
    assert main_clause("Age gap: 7 years") == "Age gap: 7 years"
    assert main_clause("There are three bars above 40: 2017 (45), 2018 (52)") == (
        "There are three bars above 40"
    )


def test_what_follows_a_turn_is_what_the_answer_settles_on():
    text = "It looks like GARDEN, but the first letter is slanted, so the word is WARDEN."
    assert "WARDEN" in settled_part(text) and "GARDEN" not in settled_part(text)


def test_the_clause_restating_the_question_states_the_answer():
    text = "14.5 million in 2019, rising to 16.2 million in 2020."
    question = "How many people, in millions, used the service in 2020?"

    def digit(clause: str) -> bool:
        return any(c.isdigit() for c in clause)

    chosen = stating_clause(text, question, digit, lambda _: 1)
    assert chosen is not None and "16.2" in chosen


def test_the_subject_answers_a_which_question_restated():
    text = "Norway has the highest share at 72%, followed by Sweden at 54%."
    question = "Which country has the highest share of renewable energy?"
    assert subject_answer(text, question) == "Norway"
    assert subject_answer("Sweden is second.", question) is None


def test_a_view_offered_before_the_subject_is_no_part_of_it():
    question = "Which country has the highest value?"
    for opening in ("I think", "It looks like", "It seems that", "So I believe"):
        assert subject_answer(f"{opening} Norway has the highest value.", question) == "Norway"
