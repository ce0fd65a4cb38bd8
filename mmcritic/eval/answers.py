"""The span of a free answer that states a value, and numbers as people write them.

Nothing here raises on model output; a numeral beyond `MAX_DIGITS` digits or float range is no
number (`number_value`), so "1e400" never matches as infinity.
"""

from __future__ import annotations

import math
import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import partial

from mmcritic.reading.final import stated_answer
from mmcritic.reading.language import number_words, pattern, tens_words, words
from mmcritic.reading.markup import BOLD, MARKUP, answer_region, clean_latex, fold
from mmcritic.reading.statements import (
    COPULAS,
    EXPLAINS,
    LEADING_ARTICLE,
    LONG_ASIDE,
    RESULT,
    asked_sentence,
    clauses,
    content_words,
    in_english,
    main_clause,
    offers_two_marked,
    open_check,
    restated_complement,
    sentences,
    states_unasked,
    stating_clause,
    subject_restates,
    topic_words,
    without_unasked,
)
from mmcritic.reading.structure import reading_of

# no value of the answer: one set aside after its own ("2, not 3") or a rate's base ("10 per
# 1,000"); no match starts inside a run of whitespace (quadratic time)
_NOT_VALUE = re.compile(
    rf"(?:,|(?<!\s))\s*\b{pattern('not_words')}\s+[$€£]?-?\d[\d.,]*%?"
    rf"|(?<!\s)\s+{pattern('rate_words')}\s+\d[\d,]*"
)
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
# a fraction ending the text, with a mixed number's whole part ("2 3/4"); not in a date or decimal
_ENDING_FRACTION = re.compile(r"(?<![\d./])(?:(-?\d+)\s+)?(-?\d+)\s*/\s*(\d+)\.?$")
# scientific notation after `fold`: "4.5 × 10^4"; no match starts inside a run of digits
_TIMES_TEN = re.compile(
    r"(?<!\d)(\d+(?:\.\d+)?)\s*(?:[×·*x]|\\times|\\cdot)\s*10\s*\^\s*\{?\s*([-+]?\d+)\s*\}?"
)
MAX_DIGITS = 300
_MAX_EXPONENT_DIGITS = 4  # more puts any nonzero value beyond float range
SCALES = {word: float(value) for word, value in words("scales")}  # "1.5 million"
_SCALE = re.compile(rf"({'|'.join(SCALES) or '(?!)'})\b", re.IGNORECASE)
_PUNCTUATION = re.compile(r"[^\w\s]")
_DOTTED = re.compile(r"(?<![\w.])(?:[^\W\d_]\.){2,}")
_NEGATIVE = re.compile(r"(?<![\w.])-(?=\d)")
EDGE_PUNCTUATION = ",.!?;:'\" "
# inline math holding no other opener: one never closed is not read to the end from each opener
LATEX_INLINE = re.compile(r"\\[(\[]\s*((?:(?!\\[(\[]).)*?)\s*\\[)\]]", re.DOTALL)
# a trailing condition on a variable, no answer: "attained at x = 1"; the word before it starts
# at a word's first letter (each start inside one would cost quadratic time)
_CONDITION = re.compile(
    rf"(?i),?\s*(?:(?<![a-z])[a-z]+\s+)?{pattern('variable_conditions')}\s+[a-z]\s*=\s*"
    r"(?:[^,;.]|\.(?=\d))*$"  # within its sentence: not "at x = 3 ... y = 5. So f(3) = 5"
)
ASIDE = re.compile(r"\s*\([^()]*\)")
# English number words, and other languages' from two up: their "one" is also "a" ("una");
# Chinese and Japanese numerals, which no space delimits, are read only as counts (`_CJK_COUNT`);
# a word English spells too ("due") only where it stands alone, as in a verdict box
NUMBER_WORDS = {word: str(value) for word, value in number_words("en").items()}
_ENGLISH_HOMOGRAPHS = frozenset(words("english_homographs"))
_WORD_DIGITS = {
    word: str(value)
    for word, value in number_words().items()
    if value > 1
    and word not in _ENGLISH_HOMOGRAPHS
    and not any("\u3040" <= char <= "\u9fff" for char in word)
} | NUMBER_WORDS
SPELLED = {digit: name for name, digit in NUMBER_WORDS.items()}
TENS = tens_words("en")
_UNITS = [word for word, digits in NUMBER_WORDS.items() if len(digits) == 1 and digits != "0"]
# a letter first: at a digit or a space it fails at once, not on each word of every language
_NUMBER_WORD = re.compile(
    rf"\b(?=[^\W\d_])(?:(?P<tens>{'|'.join(TENS)})(?:[- ](?P<unit>{'|'.join(_UNITS)}))?"
    rf"|(?P<word>{'|'.join(_WORD_DIGITS)}))\b"
    r"(?!-[^\W\d_])",  # not the first part of a compound word: "three-digit", "one-way"
    re.IGNORECASE,
)
# "two hundred fifty", "three hundred and six" once their words are digits ("2 hundred 50")
# English "and" alone: Spanish "y" and Portuguese "e" also name a variable
_AND = pattern("and_words", "en")
AND_SPLIT = re.compile(rf"\s+{_AND}\s+")  # "the side is 8 and its area is 64"
_HUNDREDS = re.compile(
    rf"\b(\d{{1,2}}) {pattern('hundreds')}(?:(?: {_AND})? (\d{{1,2}})(?![\d.,]))?\b", re.I
)
# a decimal comma, as German or French write one: "19,1 %" is 19.1% (not in a list or a point)
_DECIMAL_COMMA = re.compile(r"(?<![\d,.(\[])(\d+),(\d{1,2})(?=\s*%|(?![\d,)\]]))")
# "minus two", "negative 0.4": a sign, unless a number stands before it ("5 minus 3")
_SIGN_WORD = re.compile(rf"(?<![\d.])(?<![\d.]\s)\b{pattern('sign_words')}\s+(?=\d)", re.I)
_CJK_DIGITS = number_words("zh")
_CJK = "".join(_CJK_DIGITS)
# a count in Chinese numerals, read only before a measure word: "两辆自行车"
_CJK_COUNT = re.compile(
    rf"(?<![{_CJK}十百千])(?=[{_CJK}十])(?:(?P<tens>[{_CJK}])?(?P<ten>十))?(?P<units>[{_CJK}])?"
    rf"(?={pattern('measure_words')})"
)
# a number written in myriads, as Chinese and Japanese write large ones: "4億100万" is 401
# million, read in the largest English scale word it reaches
_MYRIADS = dict(words("myriads"))
_ENGLISH_SCALES = [("", 1.0), *map(tuple, words("scales", "en"))]
_MYRIAD = re.compile(rf"(\d+(?:\.\d+)?)({'|'.join(_MYRIADS) or '(?!)'})")
# (from a digit run's start: each start inside a long run would cost quadratic time)
_IN_MYRIADS = re.compile(rf"(?<![\d.])(?:{_MYRIAD.pattern})+(?![\d千百十])")  # not "1億2千万"
_LATEX_FRACTION = re.compile(
    r"\\[dt]?frac\s*\{\s*(-?\d+(?:\.\d+)?)\s*\}\s*\{\s*(\d+(?:\.\d+)?)\s*\}"
)
# a unit's power, not a digit of the number: "25.1 cm²" states 25.1 (NFKC would make it cm2)
_UNIT_POWER = re.compile(r"(?<=[A-Za-z])(?:[²³¹⁴]|\^\{?[234]\}?)")
# the verb after which a sentence states its value, a copula in any language: "was 24.9%"
_COPULA = re.compile(rf"\b(?:{COPULAS}|{pattern('value_verbs')})\b", re.IGNORECASE)
# a number before a word, as a count in any language puts it: "5 Länder", "5个"
_COUNT_BEFORE_WORD = re.compile(r"(?<![\d.,])(\d+)\s*[^\W\d_]")
# a count that is the total: "4 lanes in total, counting the two lanes on the other side"
_IN_TOTAL = re.compile(rf"\s+{pattern('totals')}\b", re.IGNORECASE)
# a total a count sentence ends on: "3 on the left pole and 2 on the right, so 5 in total"
_SUMS_UP = rf"{pattern('conclusions')}|{pattern('results')}|\b{pattern('sum_words')}"
_TOTAL = re.compile(rf"(?:{_SUMS_UP})\s+(\d[\d,]*)\b", re.IGNORECASE)
# a share opening a subject: "About 37.7% of"
_SHARE_OF = re.compile(r"\W*(?:[a-z]+\s+)?(\d+(?:\.\d+)?%)\s+of\s", re.IGNORECASE)
# a computation in brackets after a value, closing its clause: "72 bpm (18 × 4).", not "2(2 + 3)"
_WORKING_ASIDE = re.compile(
    r"(?<=[\w%])\s+\(\s*\d[\d.]*(?:(?:\s*[×*÷+]\s*|\s+[-−x]\s+)\d[\d.]*)+\s*\)(?=[.,;]|\s*$)"
)
# a count before a plural noun, or one before a noun: "2 mirrors", "1 rider"
_OTHER_COUNT = re.compile(
    r"(?<![\w.,/-])(?:\d+\s+(?=(?:[a-z-]+\s+)?[a-z]{2,}s\b)|1\s+(?=[a-z]{3,}\b))"
)
_SUM = re.compile(rf"\b(?:{pattern('sum_words')})\b", re.IGNORECASE)  # "the total is 30"
# a response cut off before its value: it ends on a word left open ("is"), an "=", a dash or
# comma after a label, an operator after a space (not "C++"), or inside a box never closed
_DANGLING = re.compile(
    rf"(?:\b{pattern('dangling_words')}|[=:,–—×÷]|\s[-+*/]|(?-i:\\boxed)\s*\{{[^{{}}]*)$", re.I
)
# an equation as the subject of a verb stating the value: "f(x) = 1 has 3 solutions"
_EQUATION_AS_SUBJECT = re.compile(rf"^.+?\s+{pattern('equation_verbs')}\s+(.+)$", re.IGNORECASE)
# the left side of "14 + 17 = 31", matched reversed so a long run of digits is read once
_ARITHMETIC_REVERSED = re.compile(r"\s*(?:[\d.,]*\d\s*[-+−×÷*/]\s*)+[\d.,]*\d")
# a noun phrase or remark after a stated value: "37, the size with ...", "72, within the range"
_WHAT_IT_IS = re.compile(rf",\s+(?:{pattern('articles', 'en')}|{pattern('value_remarks')})\s")
# a part of a count: "3 of them"; never starting inside a list ("1,2,3"), read from each number
_OF_THEM = re.compile(
    rf"(?i)((?<![\w.])(?<!\d,)\d[\d,]*(?=\s+{pattern('part_counts')}\b)"
    rf"|(?:(?<=, )|(?<=\bonly ))\d[\d,]*(?=\s+{pattern('count_verbs')}\s))"
)
# a paragraph or sentence that checks or adds to the answer: "= 85%. For reference, ... = 90%."
_BEFORE_AFTERTHOUGHT = r"(?:(?<=\S)[ \t]*\n(?:[ \t]*\n)+[ \t]*|(?<=\.)[ \t]+)"
_AFTERTHOUGHT = re.compile(rf"{_BEFORE_AFTERTHOUGHT}(?:{pattern('afterthoughts')})\b[\s\S]*$", re.I)
# a computation from numbers alone said to come to about a value: "36/28 ≈ 1.29"
_COMPUTED_APPROXIMATELY = re.compile(r"(?<![^\s=:])(\d[\d.,]*%?\s*[-+*/×÷−]\s*\d[\d.,]*%?)\s*≈")
# a number as a question names it, after its word: "aged 65", "Angle 2"
_NAMED_NUMBER = re.compile(r"[^\W\d_]+\s+\d[\d.,]*\d|[^\W\d_]+\s+\d")
# a part counted before the whole it is part of: "3 of the 7 bars"
_PART_OF = re.compile(rf"(?<![\w.,])(\d[\d,]*)\s+{pattern('parts_of')}\s+$", re.IGNORECASE)
# where a sentence's clauses meet: "10 years, and sales exceeded 500 in 3 of them"
_JOIN = pattern("clause_joins")
_CLAUSE_BREAK = re.compile(rf"[,;:]\s+(?:{_JOIN}\s+)?|\s+{_JOIN}\s+")
# the counted noun before a verb or comparative ("How many blue cups are ...", "How many points
# higher was ..."), else the word after "how many" ("How many categories exceed 20%?"); none
# where "how many more" asks a difference
_HOW_MANY = re.compile(
    rf"(?i)\b{pattern('how_many')}\s+(?!{pattern('difference_words')}\b)"
    rf"(?:{pattern('partitives')}\s+)?(?:(?:[\w-]+\s+){{0,3}}?"
    rf"(?P<noun>[a-z][\w-]*?)\s+(?:{pattern('comparative_words')}\s+)?{pattern('counted_verbs')}\b"
    r"|(?P<first>[a-z][\w-]*)\s)"
)
# a clause that counts things: "There are 4 bars", "7 line items", "places 10 orders",
# "Of the 6 vehicles"; after a verb of a stated value ("equals 10 units"), a value
_COUNTS_THINGS = re.compile(
    rf"(?i)\b(?:{pattern('existentials')}|{pattern('count_openers')}|{pattern('partitives')}"
    rf"|(?!(?:{COPULAS}|{pattern('value_verbs')}|{pattern('operators')})\b)[a-z]{{3,}}(?:s|ed))"
    rf"\s+(?:{pattern('count_qualifiers')}\s+)?\d+(?:,\d{{3}})*\s+(?:[a-z]+\s+)?"
    rf"(?:[a-z]+s|{pattern('irregular_plurals')})\b"
)
_THOUSANDS_OR_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?:\.\d+)?")
# a value alone, as a first line gives it: "5", "$1,200", "12.5%", "−3"
_BARE_VALUE = re.compile(r"[$€£]?[-−]?\d[\d,]*(?:\.\d+)?%?")
# a value alone opening an answer, then a comma and words about it: "7.8, reached in 2014"
_OPENING_VALUE = re.compile(rf"\s*({_BARE_VALUE.pattern}),\s+(?=[a-z])")
# a conclusion opening an equation's left side: "So x = 30"
_CONCLUDED = re.compile(rf"^{pattern('conclusions')}\W*", re.IGNORECASE)
_MATH_VALUE = re.compile(r"[\dπ√]|\\(?:pi|sqrt|frac)\b")
# endings that leave a word's meaning as an answer: "octagonal" for "octagon"
_INFLECTIONS = frozenset({"", *words("inflections")})
# a plural's ending and its singular's, either way: "mitochondria", "mitochondrion"
_NUMBER_SWAPS = [
    *map(tuple, words("plural_endings")),
    *((b, a) for a, b in words("plural_endings")),
]
# a last line that labels its value: "Intersection: (2, 3)", "Answer: 7"
_LABELLED_VALUE = re.compile(r"^\s*[^\W\d_][^:=\n]{0,40}:\s*([^=]*\d[^=]*)$")
# a spelling read as the language's other one ("colour" as "color"), from the language data
_BRITISH_SPELLINGS = tuple((re.compile(british), other) for british, other in words("spellings"))
_BRITISH = re.compile("|".join(f"(?:{british.pattern})" for british, _ in _BRITISH_SPELLINGS))


def answer_span(response: str, question: str | None = None) -> str:
    """The part of a free numeric or mathematical answer that states it: the marked answer, else
    the last bold span with a digit, the value after the last `=`, the count a "how many" question
    asks for, what follows the verb of a sentence stating a number, or all; "" when cut off."""
    if (stated := stated_answer(response)) is not None:
        return stated
    region = without_unasked(without_afterthought(answer_region(response)), question or "")
    if (alone := _first_line_value(region) or _last_line_value(region)) is not None:
        return alone
    check = open_check(region)  # "There are 6 chairs. Let me double-check by counting: the first"
    region = region[:check] if check and holds_digit(region[:check]) else region
    bold = [span for span in BOLD.findall(region) if re.search(r"\d", fold(span))]
    if bold and not offers_two_marked(region, bold[-1]):
        return clean_latex(bold[-1])
    text = clean_latex(LATEX_INLINE.sub(r"\1", fold(region)))
    text = _COMPUTED_APPROXIMATELY.sub(r"\1 =", text)  # "36/28 ≈ 1.29" computes 1.29
    if is_cut_off(text) and not (text := _answered_before_cut(text, question)):
        return ""  # cut off before the value: "Therefore c equals"
    lines = [_without_condition(line.rstrip(". ")) for line in text.splitlines() if line.strip()]
    equated = [at for at, line in enumerate(lines) if "=" in line]
    labelled = _LABELLED_VALUE.match(lines[-1]) if lines else None
    # "x = 2\ny = 3\nIntersection: (2, 3)", "...\n\nChromatic number: 2": the labelled result
    if labelled and (equated or (len(lines) > 1 and _restates(lines[-1], question))):
        return labelled.group(1).strip()
    if equated:
        # a later statement, or one after "so", states the value ("= π. So the area is 4 − π.")
        parts = [
            (part, index > 0)
            for sentence in [*sentences(lines[equated[-1]]), *lines[equated[-1] + 1 :]]
            for index, part in enumerate(reading_of(sentence).parts("conclusion"))
        ]
        last = max(at for at, (part, _) in enumerate(parts) if "=" in part)
        later = parts[last + 1 :] + _beside_the_equation(parts[last][0], question)
        states = [p for p, so in later if _verb_then_value(p) or (so and holds_digit(p))]
        if not states:
            return _equated_value(parts[last][0], question)
        if any(part in states for part, _ in parts[last + 1 :]):
            lines = [part for part, _ in parts[last + 1 :]]  # "... = 15.5.\n\nThe average is 15.5."
    text = LONG_ASIDE.sub("", "\n".join(lines))  # "About a quarter (23%) said ..." keeps 23%
    text = _WORKING_ASIDE.sub("", text)  # "72 beats per minute (18 × 4)"
    corrected = reading_of(text).after_last("correction")
    if corrected is not None:  # "The area is 2π ≈ 6.28... wait, the radius is 4, so ... 8π."
        text = corrected
    if (counted := stated_count(text, question)) is not None:
        return counted
    if opening := _OPENING_VALUE.match(text):  # "7.8, reached in 2014": a bare value said first
        return opening[1]
    return _stated_value(text, question)


def _stated_value(text: str, question: str | None) -> str:
    """The value of the clause stating one; else what follows the last sentence's verb, where
    that holds a value with no digit ("... The smallest positive period is π."); else all."""
    clause = stating_clause(text, question, partial(_states_a_value, question), value_strength)
    if clause is not None:
        return _clause_value(number_word(clause), question)
    last = (sentences(text) or [""])[-1]
    return last[_COPULA.search(last).end() :].strip() if _verb_then_value(last) else text.strip()


def _clause_value(clause: str, question: str | None) -> str:
    """What the clause stating the answer gives as its value: after its verb, or its share."""
    # "the change is 6 and ..., so the distance is 10"
    concluded = reading_of(clause).parts("conclusion")[-1]
    clause = concluded if holds_digit(concluded) else clause
    verb = _COPULA.search(clause)
    tail = _stated_before_appositive(clause[verb.end() :]) if verb else clause
    # "the side is 8 and its area is 64": a second statement of what is asked
    asked = AND_SPLIT.split(tail, maxsplit=1)[1:]
    if asked and _verb_then_value(asked[0]) and _names_asked(asked[0], question):
        tail = asked[0][_COPULA.search(asked[0]).end() :]
    # a share as the subject: "37.7% of the population is projected to be 65 or older" (asked)
    share = _SHARE_OF.match(clause[: verb.start()]) if verb else None
    if share and not set(extract_numbers(tail)) - set(extract_numbers(question or "")):
        return share.group(1)
    return tail.strip() if holds_digit(tail) else clause.strip()


def _states_a_value(question: str | None, clause: str) -> bool:
    """Whether a clause holds a number other than as the question names it, with the word before
    it ("adults aged 65+ have the lowest rate" states none for "... of adults aged 65+ ...?";
    "Angle 2 measures forty-five degrees" states 45)."""
    for named in _NAMED_NUMBER.findall(question or ""):
        clause = re.sub(re.escape(named), " ", clause, flags=re.IGNORECASE)
    return holds_digit(number_word(clause))


def without_afterthought(region: str) -> str:
    """The answer text less a closing paragraph or sentence that checks or adds to a value stated
    before it ("V = πr²h = 45π.\n\nFor reference, the lateral surface area is 30π")."""
    kept = _AFTERTHOUGHT.sub("", region)
    return kept if holds_digit(kept) else region


def _answered_before_cut(text: str, question: str | None) -> str:
    """An answer cut off mid-sentence, up to its last whole sentence, when that answers the
    question (restating what is asked or concluding, one number in one clause: "So the
    acceleration is 4.14 m/s². Now, if we also wanted ...") and the cut one revises nothing."""
    complete = sentences_before_cut(text)
    concluded = reading_of(f" {complete[-1]}").parts("conclusion") if complete else [""]
    last = concluded[-1].strip()  # "So arc AB has length 2π. To double-check, ..., which"
    said = restated_complement(last, question or "") or (last if len(concluded) > 1 else "")
    if len(concluded) > 1:  # "so the average = 70 / 3 = 23.33.": the value it concludes with
        said = said.rsplit("=", 1)[-1]
    stated = len(extract_numbers(said)) == 1 and len(AND_SPLIT.split(said)) == 1
    return " ".join(complete) if stated else ""


def sentences_before_cut(text: str) -> list[str]:
    """The sentences before a text's last, unless that one corrects or turns from them ("The
    rating was 62%. Wait, I think the label above that")."""
    *complete, cut = sentences(text) or [""]
    revised = reading_of(cut).has("correction") or reading_of(cut).has("turn")
    return [] if revised and open_check(text) is None else complete


def _stated_before_appositive(tail: str) -> str:
    """What a verb states before a noun phrase saying what it is ("37, the size ..."), unless
    that sums up several values before it ("from $618 to $760 billion, an increase of $142")."""
    head, *appositive = _WHAT_IT_IS.split(tail, maxsplit=1)
    several = len(_THOUSANDS_OR_NUMBER.findall(head)) > 1
    return appositive[0] if appositive and several and holds_digit(appositive[0]) else head


def _names_asked(clause: str, question: str | None) -> bool:
    """A subject of only the question's words, no number ("its area is 64", not "in 2020 it")."""
    subject = _COPULA.split(clause, maxsplit=1)[0]
    return not holds_digit(subject) and subject_restates(clause, question or "")


def _restates(line: str, question: str | None) -> bool:
    """A label of only the question's words ("Chromatic number: 2")."""
    label = line.split(":", 1)[0]
    words = topic_words(label)
    return bool(words) and not holds_digit(label) and words <= topic_words(question or "")


def _without_condition(line: str) -> str:
    """Without a trailing condition ("4, attained at x = 1"), unless it is all the line states."""
    kept = _CONDITION.sub("", line)
    return kept if holds_digit(kept) else line


def _first_line_value(region: str) -> str | None:
    """A bare value alone on the first line, before a paragraph that explains it and neither
    corrects it nor concludes anew ("5\n\nThe cones are arranged ...: three near ... and two")."""
    first, _, rest = region.strip().partition("\n\n")
    value = first.strip(" *.")
    if not _BARE_VALUE.fullmatch(value) or not rest.strip():
        return None
    explained = reading_of(rest)
    return None if explained.has("correction") or explained.has("conclusion") else value


def _last_line_value(region: str) -> str | None:
    """A bare value alone as the last paragraph, after the reasoning ("Counting the people in the
    crosswalk: 1, 2, 3. There are also 2 people waiting on the sidewalk.\n\n3")."""
    reasoning, _, last = region.strip().rpartition("\n\n")
    value = last.strip(" *.")
    return value if reasoning and _BARE_VALUE.fullmatch(value) else None


def is_cut_off(text: str) -> bool:
    """Whether a response stops before its value: on "is", "=", "the" ..., or in an open box."""
    return _DANGLING.search(text.strip()) is not None


def _equated_value(sentence: str, question: str | None) -> str:
    """The value after the last `=`, before a trailing clause; of several equations, the last
    whose left side the question's asking sentence names (not a given it states)."""
    equations = [part for part in re.split(r"[,;]\s+", sentence) if "=" in part]
    asking = asked_sentence(question or "")
    given = "".join((question or "").split())  # "f(x) = 3sin(2x)" stated by the question
    asked = [e for e in equations if _names_side(e, asking) and _written(e) not in given]
    chosen = asked[-1] if asked and asked[-1] != equations[-1] else sentence
    value = main_clause(chosen.rsplit("=", 1)[1].strip()).rstrip(".").strip()
    named = _EQUATION_AS_SUBJECT.match(value)  # "the equation f(x) = 1 has 3 solutions"
    return named.group(1).strip() if named and holds_digit(named.group(1)) else value


def _written(equation: str) -> str:
    """An equation's sides where they meet, without spaces: "f(x)=3sin(2x)"."""
    left, right = equation.split("=", 1)
    return f"{(left.split() or [''])[-1]}={(right.split() or [''])[0]}"


def _names_side(equation: str, asking: str) -> bool:
    """Whether an equation's left side ends on a name the asking sentence holds ("AB = 10" for
    "Find AB"), not on a number it gives ("2 × 9.8 = 19.6" for "Taking g = 9.8")."""
    left = equation.split("=", 1)[0].split()
    return bool(left) and left[-1] in asking and not re.fullmatch(r"[\d.,]+", left[-1])


def _beside_the_equation(sentence: str, question: str | None) -> list[tuple[str, bool]]:
    """Clauses of an equation's sentence that may state the answer instead: a result ("..., which
    rounds to 8"); unless it computes from numbers (not to explain), the others if it is not in the
    first ("It is 14π, using C = 2πr"), else those restating the question more."""
    own = clauses(sentence)
    # "..., k = 9" for "k?", "So x = 30, and the angles measure 105° and 75°" for "x?"
    equations = [part for part in re.split(r"[,;]\s+", sentence) if "=" in part]
    solved = _CONCLUDED.sub("", equations[-1].split("=")[0].strip()).split() if equations else []
    if len(solved) == 1 and re.search(
        rf"(?<![\w\\]){re.escape(solved[-1])}(?!\w)", asked_sentence(question or "")
    ):
        return []
    at = next((index for index, clause in enumerate(own) if "=" in clause), 0)
    left = own[at].rsplit("=", 1)[0]
    computes = _ARITHMETIC_REVERSED.match(left[::-1]) and not EXPLAINS.match(own[at])
    asked = topic_words(question or "")
    overlap = [len(asked & topic_words(clause)) for clause in own]
    return [
        (clause, False)
        for index, clause in enumerate(own)
        if "=" not in clause
        and (RESULT.match(clause) or (not computes and (at > 0 or overlap[index] > overlap[at])))
    ]


def holds_digit(text: str) -> bool:
    """Whether the text states a number, in digits or words ("ten units"), not a place ("3rd")."""
    return re.search(r"\d(?!\d*(?:st|nd|rd|th)\b)", number_word(text)) is not None


def _verb_then_value(sentence: str) -> bool:
    """A number or a formula after the verb ("is 4 − π")."""
    verb = _COPULA.search(sentence)
    return verb is not None and _MATH_VALUE.search(sentence[verb.end() :]) is not None


def value_strength(clause: str) -> int:
    """2: a verb followed by a value ("the difference is 14"); 1: a value and no such verb, or a
    list of three or more after the verb; 0: a value only before the verb, or a count of things
    with no copula after it (which `stated_count` reads for a "how many" question)."""
    if only_counts(clause):
        return 0  # "There are 4 bars", not "8 appears three times, so the mode is 8"
    verb = _COPULA.search(clause)
    if verb is None or len(_THOUSANDS_OR_NUMBER.findall(clause[verb.end() :])) > 2:
        return 1  # "The Total column lists 3,920, 4,105, 4,812 and 2,760": a list, not a value
    return 2 if holds_digit(clause[verb.end() :]) else 0


def only_counts(clause: str) -> bool:
    """Whether a clause counts things with no copula stating a value after ("There are 4 bars")."""
    words = number_word(clause)
    count = _COUNTS_THINGS.search(words)
    return bool(count) and not _COPULA.search(re.split(r"[;.]\s", words[count.end() :])[0])


def without_other_counts(text: str, question: str) -> str:
    """For a "how many" question, an answer that names none of its words less the numbers it
    puts before other things: "The motorcycle has 1 rider and 2 mirrors" counts no wheels."""
    if _counted_stem(question) is None:
        return text
    asked = {word[:4] for word in content_words(asked_sentence(question))}
    named = asked & {word[:4] for word in content_words(text)}
    return text if named else _OTHER_COUNT.sub("", text)


def _counted_stem(question: str) -> str | None:
    """What a "how many" question counts, singular ("wheel"); None for another question."""
    asked = _HOW_MANY.search(question)
    return None if asked is None else (asked["noun"] or asked["first"]).lower().removesuffix("s")


def stated_count(text: str, question: str | None) -> str | None:
    """For a "how many X" question, the number the answer puts before X ("There are three bars
    above 40"), from the last sentence that states a number; None otherwise."""
    question = question or ""
    if (stem := _counted_stem(question)) is None:
        return None
    noun = re.escape(stem)
    # "2 1/2 cups", "8-10 hours"; not from inside a number ("1,000,000") or a range
    count = re.compile(
        r"(?<![\w./-])(?<!\d,)(\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+|\s+\d+\s*/\s*\d+|[-–]\d+)?)\s+"
        rf"(?:[a-z-]+\s+){{0,2}}?{noun}(?:e?s)?\b",
        re.IGNORECASE,
    )
    told = [sentence for sentence in sentences(number_word(text)) if holds_digit(sentence)]
    # a value of something else, not a sum, counts nothing: "...; the highest share was 46.2%"
    numbered = [
        x for x in told if count.search(x) or _SUM.search(x) or not states_unasked(x, question)
    ]
    if not numbered:
        return None
    last = numbered[-1]
    found = list(count.finditer(last))
    if not found and len(numbered) > 1 and count.search(numbered[-2]):
        found = list(_OF_THEM.finditer(last))  # "5 bars in total; 3 of them exceed 40"
    if not found:
        # a part counted under another name that the question asks about ("5 people in total,
        # and 2 of them are on the right"), else a total naming no noun ("adding 310 gives 1,560")
        subset = _asked_subset(last, 0, question, stem)
        return subset.group(1) if subset else _lone_count(last, question)
    # the last count, unless the sentence then sums up ("..., so 5 in total") or counts a part
    total = _TOTAL.search(last, found[-1].end()) or _asked_subset(
        last, found[-1].end(), question, stem
    )
    # the count said to be the total, where the question asks for one ("... have in total?")
    asks_total = _IN_TOTAL.search(question) is not None
    totalled = [m for m in found if asks_total and _IN_TOTAL.match(last, m.end())]
    # the count a colon then breaks down: "There are 8 triangles: 4 small ones, ..., and 1 large"
    broken_down = [m for m in found if m.end() <= last.find(": ")]
    chosen = total or (totalled or broken_down or found)[-1]
    part = _PART_OF.search(last[: chosen.start()])  # "3 of the 7 bars" counts 3 of them
    count_text = (part or chosen).group(1)
    # "2 or 3 traffic lights": the sentence offers alternatives, and the span keeps them
    return last if reading_of(last).has("alternatives") else count_text


def _lone_count(sentence: str, question: str) -> str | None:
    """The one count a sentence puts before a word, the question's own numbers aside, in an
    answer in another language ("Es gibt 5 Länder mit einem Wert über 20", "有5个国家")."""
    if in_english(sentence):
        return None
    asked = set(extract_numbers(question))
    counts = [m for m in _COUNT_BEFORE_WORD.finditer(sentence) if number_value(m[1]) not in asked]
    others = set(extract_numbers(sentence)) - asked - {number_value(m[1]) for m in counts}
    return counts[0][1] if len(counts) == 1 and not others else None


def _asked_subset(sentence: str, after: int, question: str, counted: str) -> re.Match[str] | None:
    """A part of the things counted that the sentence goes on to count ("and sales exceeded 500
    in 3 of them"), when the question asks about that part's clause more than the whole's, the
    thing `counted` aside ("6 cars in total, and 2 of them are red" for "How many cars are
    red?")."""
    subset = _OF_THEM.search(sentence, after)
    if subset is None:
        return None
    breaks = list(_CLAUSE_BREAK.finditer(sentence, after, subset.start()))
    split = breaks[-1].end() if breaks else subset.start()
    # the question's threshold too: "exceed 500"
    asked = {word for word in content_words(question) if not word.startswith(counted)}
    restated = len(asked & content_words(sentence[split:]))
    return subset if restated > len(asked & content_words(sentence[:split])) else None


def number_word(text: str) -> str:
    """Number words as digits ("two hundred fifty" is 250), a sign word as a minus where no
    number stands before it, and a Chinese count before its measure word."""
    digits = _CJK_COUNT.sub(_cjk_digits, _NUMBER_WORD.sub(_digits, _IN_MYRIADS.sub(_scaled, text)))
    digits = _HUNDREDS.sub(lambda m: str(int(m.group(1)) * 100 + int(m.group(2) or 0)), digits)
    return _SIGN_WORD.sub("-", digits)


def _scaled(match: re.Match) -> str:
    value = sum(float(digits) * _MYRIADS[unit] for digits, unit in _MYRIAD.findall(match[0]))
    word, scale = max((ws for ws in _ENGLISH_SCALES if ws[1] <= value), key=lambda ws: ws[1])
    return f"{value / scale:.15g} {word} ".replace("  ", " ")


def _cjk_digits(match: re.Match) -> str:
    tens, ten, units = match.group("tens", "ten", "units")
    return str((_CJK_DIGITS.get(tens, 1) * 10 if ten else 0) + _CJK_DIGITS.get(units, 0))


def _digits(match: re.Match) -> str:
    word, tens, unit = match.group("word", "tens", "unit")
    if word:
        return _WORD_DIGITS[word.lower()]
    return str(TENS[tens.lower()] + (int(NUMBER_WORDS[unit.lower()]) if unit else 0))


def latex_fractions(text: str) -> str:
    """Numeric LaTeX fractions as plain ones: `\\frac{24}{5}` is `24/5`."""
    return _LATEX_FRACTION.sub(r"\1/\2", text)


def option_words(text: str) -> str:
    """`plain_words` with number words as digits: the form option texts compare in."""
    return " ".join(NUMBER_WORDS.get(word, word) for word in plain_words(text).split())


def same_words(answer: str, target: str) -> bool:
    """Whether an answer says the target's words, up to case, punctuation, a leading article,
    number words and inflection ("circular" for "circle")."""
    said = LEADING_ARTICLE.sub("", option_words(answer)).split()
    wanted = LEADING_ARTICLE.sub("", option_words(target)).split()
    return bool(wanted) and len(said) == len(wanted) and all(map(_same_word, said, wanted))


def inflects(word: str, stems: set[str]) -> bool:
    """Whether a word is one of `stems` with an ending ("represents" of "represent")."""
    return any(word[len(stem) :] in _INFLECTIONS for stem in stems if word.startswith(stem))


def _same_word(said: str, wanted: str) -> bool:
    return any(
        (longer.startswith(shorter) and longer[len(shorter) :] in _INFLECTIONS)
        or (shorter.endswith("le") and longer == shorter[:-2] + "ular")  # circle, circular
        for longer, shorter in ((said, wanted), (wanted, said))
    ) or said in other_number(wanted)


def other_number(word: str) -> set[str]:
    """A word's plural or singular where the plural adds no ending ("mitochondrion",
    "mitochondria"), from the language data's `plural_endings`."""
    ends = [(end, other) for end, other in _NUMBER_SWAPS if word.endswith(end) and len(word) > 5]
    return {word[: -len(end)] + other for end, other in ends}


def plain_words(text: str) -> str:
    """Lower-cased words without punctuation, the form answer and option texts compare in: a
    minus before a number stays a word ("-2" is not "2"), a dotted abbreviation is one word,
    accents are dropped ("Dalí" is "dali") and British spelling reads as American."""
    text = _DOTTED.sub(lambda match: match.group().replace(".", ""), fold(text))
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    signed = _NEGATIVE.sub(" minus ", bare.lower())
    return " ".join(american_spelling(word) for word in _PUNCTUATION.sub(" ", signed).split())


def american_spelling(word: str) -> str:
    """A lower-cased word in American spelling ("colour" is "color"); one search passes most."""
    if _BRITISH.search(word) is None:
        return word
    for british, american in _BRITISH_SPELLINGS:
        word = british.sub(american, word)
    return word


@dataclass(frozen=True)
class Number:
    """A number read from text; `percent` records a trailing `%`, `scale` a scale word after it
    (1e6 for "1.5 million")."""

    value: float
    percent: bool = False
    scale: float = 1.0

    @property
    def readings(self) -> tuple[float, float]:
        """As written and scaled: "$2 million" is 2 on a chart in millions, and 2000000."""
        return self.value, self.value * self.scale


def parse_number(text: str) -> Number | None:
    """The last number in a short answer as a person reads it (`written_numbers`), a fraction or
    mixed number whole (not a date's) and a value set aside dropped ("2, not 3" is 2); a scale
    word after it goes in `scale`. None when there is none, or the last is of no usable size."""
    cleaned = values_only(number_word(written_numbers(text)).translate(MARKUP)).strip()
    if not (matches := list(_NUMBER.finditer(cleaned))):
        return None
    last = matches[-1]
    fraction = _ENDING_FRACTION.search(cleaned[: last.end()])
    if fraction and not cleaned[last.end() :].startswith("/"):  # not in a date: "3/4/2020"
        whole, num, den = (integer_value(part or "0") for part in fraction.groups())
        if None in (whole, num, den):
            return None
        if den:
            sign = -1 if whole < 0 or fraction.group(2).startswith("-") else 1
            return Number(sign * (abs(whole) + abs(num) / den))
    if (value := number_value(last.group())) is None:
        return None
    after = cleaned[last.end() :].lstrip()
    scale = _SCALE.match(after)
    return Number(value, after.startswith("%"), SCALES[scale.group(1).lower()] if scale else 1.0)


def values_only(text: str) -> str:
    """The text without the numbers that state no value of the answer (`_NOT_VALUE`)."""
    return _NOT_VALUE.sub("", text)


def written_numbers(text: str) -> str:
    """Numbers as plain digits: folded, LaTeX fractions as `a/b`, scientific notation as its
    value, a decimal comma as a point, thousands separators and unit powers (`cm²`) dropped."""
    text = _DECIMAL_COMMA.sub(r"\1.\2", fold(latex_fractions(text)))
    text = _UNIT_POWER.sub("", _TIMES_TEN.sub(_scientific, text))
    return _THOUSANDS.sub(lambda match: match.group().replace(",", ""), text)


def _scientific(match: re.Match[str]) -> str:
    """`4.5 × 10^4` as `45000`; of no usable size it stays `1e400`, not computed as 10 ** 400."""
    numeral = f"{match.group(1)}e{match.group(2)}"
    return numeral if (value := number_value(numeral)) is None else f"{value:.15g}"


def extract_numbers(text: str) -> list[float]:
    """Every number of usable size in the text as `written_numbers` reads it (MMMU's)."""
    values = (number_value(match.group()) for match in _NUMBER.finditer(written_numbers(text)))
    return [value for value in values if value is not None]


def number_value(numeral: str) -> float | None:
    """A numeral's value (`_NUMBER`); None beyond `MAX_DIGITS` digits before its exponent or
    beyond float range (infinity or zero), checked on the text so no huge number is built."""
    mantissa, _, exponent = numeral.lower().partition("e")
    digits = sum(char.isdigit() for char in mantissa)
    if digits > MAX_DIGITS or len(exponent.lstrip("+-").lstrip("0")) > _MAX_EXPONENT_DIGITS:
        return None
    value = float(numeral)
    if not math.isfinite(value) or (abs(value) < sys.float_info.min and mantissa.strip("+-.0")):
        return None
    return value


def integer_value(digits: str) -> int | None:
    """An integer numeral's value; None beyond `MAX_DIGITS` digits (Python refuses past 4,300)."""
    return int(digits) if sum(char.isdigit() for char in digits) <= MAX_DIGITS else None
