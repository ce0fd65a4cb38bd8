"""Words the readers understand, per language, loaded from `languages/<code>.json`.

Adding a language is adding a data file: each file names its language and lists its number
words (`number_words`: word -> value, `tens`: word -> multiple of ten). Readers ask for the
languages they read (`number_words("en")`) or for all of them (`LANGUAGES`).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

_FOLDER = "languages"


@cache
def _all() -> dict[str, dict[str, Any]]:
    folder = resources.files(__package__).joinpath(_FOLDER)
    return {
        entry.name.removesuffix(".json"): json.loads(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".json")
    }


LANGUAGES: tuple[str, ...] = tuple(sorted(_all()))


def language_name(code: str) -> str:
    """The language a data file describes, in English ("zh" -> "Chinese")."""
    return _all()[code]["language"]


def number_words(*codes: str) -> dict[str, int]:
    """Number words of the given languages (all of them when none is given), lower case."""
    return _merged("number_words", codes)


def tens_words(*codes: str) -> dict[str, int]:
    """Words for multiples of ten ("twenty" -> 20) of the given languages."""
    return _merged("tens", codes)


def phrases(code: str, kind: str) -> list[str]:
    """A language's list of words of one kind ("measure_words"); empty where it has none."""
    return list(_all()[code].get(kind, []))


def _merged(kind: str, codes: tuple[str, ...]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for code in codes or LANGUAGES:
        merged |= {word.lower(): value for word, value in _all()[code][kind].items()}
    return merged
