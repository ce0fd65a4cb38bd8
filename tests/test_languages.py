"""The words readers understand come from one data file per language, and every file is read."""

from __future__ import annotations

import pytest

from mmcritic.reading.language import LANGUAGES, language_name, number_words, tens_words
from mmcritic.rewards.parsing import parse_verdict


def test_each_language_file_names_its_language_and_its_words_for_one_and_two() -> None:
    assert {"en", "zh"} <= set(LANGUAGES)
    for code in LANGUAGES:
        assert language_name(code)
        values = number_words(code)
        assert {1, 2} <= set(values.values()), code
        assert all(isinstance(value, int) for value in {**values, **tens_words(code)}.values())


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_boxed_index_spelled_in_any_listed_language_is_that_verdict(code: str) -> None:
    for word, value in number_words(code).items():
        if value in (1, 2):
            verdict = parse_verdict(f"<think>compared</think>\n\\boxed{{{word}}}")
            assert verdict.choice == str(value), (code, word)


def test_a_spelled_index_named_as_one_of_two_alternatives_is_no_verdict() -> None:
    for code in LANGUAGES:
        words = {value: word for word, value in number_words(code).items()}
        hedge = f"<think>unsure</think>\n\\boxed{{{words[1]} or {words[2]}}}"
        assert parse_verdict(hedge).choice is None, code
