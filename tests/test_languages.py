"""The words readers understand come from one data file per language, and every file is read."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

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


def test_every_language_file_lists_only_known_kinds_and_its_patterns_compile() -> None:
    from mmcritic.reading.language import KINDS, phrases

    for code in LANGUAGES:
        kinds = set(_file(code)) - {"language", "number_words", "tens"}
        assert kinds <= set(KINDS), (code, kinds - set(KINDS))
        for kind in kinds:
            for fragment in phrases(code, kind):
                if KINDS[kind].startswith("pattern"):
                    re.compile(fragment.replace("{index}", "1"))
                if kind == "verdict_statements":
                    assert "{index}" in fragment, (code, fragment)


def _file(code: str) -> dict:
    folder = Path(__file__).parents[1] / "mmcritic" / "reading" / "languages"
    return json.loads((folder / f"{code}.json").read_text(encoding="utf-8"))


# A language no file lists, added the way a contributor adds one: its data and nothing else.
ITALIAN = {
    "language": "Italian",
    "number_words": {"uno": 1, "due": 2, "tre": 3},
    "tens": {},
    "answer_phrases": [r"\b(?:la\s+)?risposta\s+(?:corretta\s+)?è\s*:?\s*"],
    "verdict_statements": [r"risposta\s*{index}\s+è\s+(?:la\s+)?migliore"],
    "unclear_openings": [r"non\s+(?:lo\s+)?so\b"],
    "corrections": [r"\banzi\b"],
    "yes_openings": [r"sì\b"],
}
READ_IN_ITALIAN = """
import json, sys
from mmcritic.reading import language
files = language._all()
language._all = lambda: {**files, "it": json.loads(sys.argv[1])}
language.LANGUAGES = tuple(sorted(language._all()))
from mmcritic.eval.answers import final_answer
from mmcritic.eval.yes_no import yes_no
from mmcritic.rewards.parsing import parse_judgement
print(json.dumps([
    final_answer("Guardando il grafico, la risposta corretta è: B"),
    parse_judgement("La risposta due è la migliore.").choice,
    yes_no("Non lo so, l'immagine è troppo scura."),
    yes_no("No, è arancione. Anzi, sì: è rosso."),
]))
"""


def test_a_language_added_as_data_alone_is_read_by_every_stage() -> None:
    done = subprocess.run(
        [sys.executable, "-c", READ_IN_ITALIAN, json.dumps(ITALIAN)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == ["B", "2", "unclear", "yes"]
