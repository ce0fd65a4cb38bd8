"""Words the readers understand, per language, loaded from `languages/<code>.json`.

Adding a language is adding a data file: it names its language (`language`), lists its number
words (`number_words`: word -> value, `tens`: word -> multiple of ten) and may list any kind in
`kinds.json` (`KINDS`: each kind and what it holds). A kind written as regular-expression
fragments is read in every language that has it.
Readers ask for the languages they read (`number_words("en")`) or for all of them (`LANGUAGES`).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any


def _load(file: Traversable) -> Any:
    """A data file with each key listed once: JSON would keep the second of two lists of one
    kind and drop the first without a word."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if repeated := sorted({key for key in keys if keys.count(key) > 1}):
            raise ValueError(f"{file.name}: listed twice: {', '.join(repeated)}")
        return dict(pairs)

    return json.loads(file.read_text(encoding="utf-8"), object_pairs_hook=unique)


# what a language file may list besides its number words, and what each kind holds
KINDS: dict[str, str] = _load(resources.files(__package__).joinpath("kinds.json"))
# the kinds written as regular-expression fragments, which `pattern` joins
PATTERN_KINDS = tuple(kind for kind, meaning in KINDS.items() if meaning.startswith("pattern"))


@cache
def _all() -> dict[str, dict[str, Any]]:
    folder = resources.files(__package__).joinpath("languages")
    return {
        entry.name.removesuffix(".json"): _load(entry)
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


def places(*codes: str) -> dict[str, int]:
    """Words a critic names a response by its place with ("former" -> 1)."""
    return _merged("verdict_places", codes)


def phrases(code: str, kind: str) -> list[str]:
    """A language's list of words of one kind ("measure_words"); empty where it has none."""
    return list(_all()[code].get(kind, []))


def words(kind: str, *codes: str) -> list[Any]:
    """The words of one kind in the given languages (all of them when none is given); a kind of
    pairs ("spellings": pattern, replacement) gives its pairs."""
    return [word for code in codes or LANGUAGES for word in phrases(code, kind)]


def pattern(kind: str, *codes: str) -> str:
    """One kind's regular-expression fragments in the given languages (all when none is given) as
    one group of alternatives, each once ("ou"); a group that never matches when none has it."""
    fragments = list(dict.fromkeys(words(kind, *codes)))
    return f"(?:{'|'.join(fragments)})" if fragments else "(?!)"


def ordinals(*codes: str) -> list[str]:
    """Each ordinal place in order (first, second, ...) as one pattern of its forms in the given
    languages (all of them when none is given)."""
    places: dict[int, list[str]] = {}
    for code in codes or LANGUAGES:
        for place, fragment in enumerate(phrases(code, "ordinals")):
            places.setdefault(place, []).append(fragment)
    return [f"(?:{'|'.join(dict.fromkeys(forms))})" for _, forms in sorted(places.items())]


def glosses(*codes: str) -> dict[str, str]:
    """Answer words of the given languages and their English ("rouge" -> "red")."""
    return _merged("glosses", codes)


def short_forms(*codes: str) -> dict[str, str]:
    """Words' short forms and the words they stand for ("st" -> "street")."""
    return _merged("short_forms", codes)


def _merged(kind: str, codes: tuple[str, ...]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for code in codes or LANGUAGES:
        merged |= {word.lower(): value for word, value in _all()[code].get(kind, {}).items()}
    return merged
