"""Words the readers understand, per language, loaded from `languages/<code>.json`.

Adding a language is adding a data file: it names its language (`language`), lists its number
words (`number_words`: word -> value, `tens`: word -> multiple of ten) and may list any kind in
`KINDS`. A kind written as regular-expression fragments is read in every language that has it.
Readers ask for the languages they read (`number_words("en")`) or for all of them (`LANGUAGES`).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

_FOLDER = "languages"

# What a language file may list besides its number words, and what each kind holds.
KINDS = {
    "answer_phrases": "pattern: what introduces a stated answer ('the answer is', '答案是')",
    "answer_ends": "pattern: a word that closes a stated answer (Korean '입니다', Japanese 'です')",
    "verdict_statements": "pattern: a response named better; `{index}`, `{letter}` (1, 2, a, b)"
    " or `{place}` where it is named, `{who}` a noun for it, `{better}` its praise",
    "unclear_openings": "pattern: an answer opening by saying it cannot tell ('I'm not sure')",
    "cannot_tell": "pattern: a stated inability to tell, anywhere in an answer",
    "corrections": "pattern: an answer revising what it said before ('wait', 'actually')",
    "verdict_revisions": "pattern: a critic taking back a verdict ('I retract')",
    "hedges": "pattern: a second reading offered after the first ('or possibly')",
    "negations": "pattern: a negated statement ('not', 'never')",
    "denials": "pattern: a negation that answers no to a yes/no question ('not', not 'can't')",
    "turns": "pattern: a turn away from what came before ('but', 'however')",
    "concessions": "pattern: a concession that keeps what came before ('although', 'yet')",
    "conclusions": "pattern: a conclusion drawn from what came before ('so', 'therefore')",
    "summaries": "pattern: a closing summary ('in conclusion', 'overall')",
    "results": "pattern: a clause giving a result of the values before it ('which add up to')",
    "commitments": "pattern: an answer committing to an option ('I'll go with', 'choose')",
    "rejections": "pattern: what precedes a mention an answer rejects ('not', 'rather than')",
    "contrasts": "pattern: what sets a mention against the pick ('by contrast')",
    "ruled_out": "pattern: what rules out the option just named ('is wrong', 'is incorrect')",
    "figure_labels": "pattern: a part of a figure named before its letter ('label', 'point')",
    "either_one": "pattern: an answer that says either option would do ('it could be either')",
    "none_fits": "pattern: a conclusion that no option is right ('none of them fits')",
    "explanations": "pattern: what opens an explanation after a statement ('because')",
    "option_nouns": "pattern: the words for an option of a question ('option', 'choice')",
    "ordinals": "pattern: the ordinals in order, first to eighth ('first', '第一'), one each",
    "yes_openings": "pattern: yes opening an answer ('yes', 'oui', '是')",
    "yes_words": "pattern: yes stated anywhere in an answer ('yes', 'oui' before punctuation)",
    "no_words": "pattern: no stated anywhere in an answer ('no', not 'no longer')",
    "or_words": "pattern: the word joining two alternatives ('or', 'ou', 'oder')",
    "and_words": "pattern: the word joining two things named together ('and', 'et', 'und')",
    "either_words": "pattern: the word opening two alternatives ('either', 'soit')",
    "maybe_words": "pattern: a word offering a value as possible ('maybe', 'peut-être')",
    "approximations": "pattern: what says a value is approximate ('about', 'environ', '约')",
    "comparatives": "pattern: a question comparing two things, lower case ('larger than')",
    "sameness": "pattern: an answer calling two things the same, lower case ('the same', '一样')",
    "possibilities": "pattern: a verb phrase offering a value as possible ('might be')",
    "value_pairs": "pattern: two values as a pair, `{value}` the first ('between {value} and')",
    "no_openings": "pattern: no opening an answer ('nein', '不是')",
    "context_openers": "words: what opens a clause that is context, not the answer",
    "copulas": "words: the verb that joins a subject to what it is ('is', 'est', 'ist')",
    "articles": "words: the articles a noun phrase opens with ('the', 'le', 'der')",
    "value_verbs": "pattern: a verb other than a copula before a stated value ('equals')",
    "sources": "pattern: what opens a clause naming where the answer was read ('as stated in')",
    "totals": "pattern: what says a count is the total ('in total', 'altogether')",
    "passives": "pattern: a passive's participle and preposition ('addressed to', 'adressée à')",
    "agents": "words: what names who did it in a passive sentence ('by', 'par')",
    "dated": "words: what gives a document's date after its verb ('dated', 'daté du')",
    "apologies": "words: an apology opening an answer ('sorry')",
    "measure_words": "words: counters between a number and its noun ('个')",
    "stop_words": "words: function words left out when texts are compared by content words",
    "spellings": "pairs: a spelling's pattern and its other form ('colour' read as 'color')",
    "sentence_verbs": "pattern: a verb that makes a sentence of a phrase ('reads', 'shows')",
    "restating_words": "words: function words a restatement of the question runs over",
    "undecided": "pattern: a critic declining to decide between two answers ('hard to say')",
    "verdict_finals": "pattern: an overall or final verdict, `{index}` etc. as in statements",
    "verdict_losers": "pattern: a response named worse ('Response 1 is worse')",
    "verdict_nouns": "pattern: what a critic calls a response ('response', 'assistant')",
    "verdict_praise": "pattern: what a critic calls the better response ('better', 'closer')",
    "verdict_limits": "pattern: what limits praise to one criterion ('in clarity', 'about')",
    "verdict_ties": "pattern: a verdict box naming neither response better ('tie', '平局')",
    "verdict_denials": "pattern: what denies the verdict stated next ('I don't think')",
    "verdict_places": "places: words naming a response by its place ('former' -> 1)",
    "comparisons": "pattern: what sets a value beside another ('compared with', 'followed by')",
    "leading_context": "pattern: what opens a sentence with its context ('According to', 'Of')",
    "pronoun_closes": "pattern: a closing clause naming the answer by a pronoun (', so he's')",
    "subject_verbs": "pattern: a verb after the subject a chart question asks about ('ranks')",
    "chart_parts": "words: a part of a chart a subject names ('bar', 'slice')",
    "quantifiers": "words: a quantifier after what it counts ('2012 and 2016 both')",
    "months": "pattern: the names of the months",
    "month_abbreviations": "pattern: the months abbreviated with a period ('Sept.')",
    "abbreviations": "pattern: other words abbreviated with a period, no sentence's end ('Dr.')",
    "asking_verbs": "pattern: an imperative that asks for the answer ('Find', 'Calculate')",
    "dangling_words": "pattern: a word a response cut off before its value ends on ('is', 'of')",
    "verdict_correct": "words: a verdict that an answer is right",
    "verdict_incorrect": "words: a verdict that an answer is wrong",
}
# the kinds written as regular-expression fragments, which `pattern` joins
PATTERN_KINDS = tuple(kind for kind, meaning in KINDS.items() if meaning.startswith("pattern"))


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


def places(*codes: str) -> dict[str, int]:
    """Words a critic names a response by its place with ("former" -> 1)."""
    return _merged("verdict_places", codes)


def phrases(code: str, kind: str) -> list[str]:
    """A language's list of words of one kind ("measure_words"); empty where it has none."""
    return list(_all()[code].get(kind, []))


def pairs(kind: str, *codes: str) -> list[tuple[str, str]]:
    """The pairs of one kind ("spellings": pattern, replacement) in the given languages."""
    return [(first, second) for first, second in words(kind, *codes)]


def words(kind: str, *codes: str) -> list[str]:
    """The words of one kind in the given languages (all of them when none is given)."""
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


def _merged(kind: str, codes: tuple[str, ...]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for code in codes or LANGUAGES:
        merged |= {word.lower(): value for word, value in _all()[code].get(kind, {}).items()}
    return merged
