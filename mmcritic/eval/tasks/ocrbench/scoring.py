"""OCRBench's rule: the reference contained in the answer, read as a careful grader reads it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mmcritic.eval.answers import (
    holds_digit,
    only_counts,
    plain_words,
    stated_count,
    value_strength,
)
from mmcritic.eval.yes_no import yes_no
from mmcritic.reading.language import pattern
from mmcritic.reading.markup import fold
from mmcritic.reading.statements import (
    COMPARISONS,
    LONG_ASIDE,
    main_clause,
    sentences,
    settled_part,
    states_reading,
    stating_clause,
)
from mmcritic.reading.structure import CANNOT_TELL, HEDGE, HEDGES, reading_of

# a closing sentence that states the reading the question asks for: "The invoice number is X.",
# not a passive that tells more ("The letter is addressed to ...")
_RESTATED_READING = re.compile(
    rf"^{pattern('restatings')}\s+((?:[\w-]+\s+){{1,4}}?){pattern('reading_verbs')}"
    r"\s+(?![a-z]+ed\b)\S",
    re.I,
)
# a later sentence that sets a mention aside: "..., not the laptop"
_NOT, _THE, _DET = pattern("not_words"), pattern("definite_articles"), pattern("noun_openers")
_CONTEXT_AFTER = re.compile(rf",\s+{_NOT}\s+{_DET}\b|\b{_NOT}\s+{_THE}\s+\w+\s*\.?\s*$")
# context after a reading that names the runners-up, what it is not or where it was read:
# "WARDEN, not GARDEN"
_OTHERS_AFTER = re.compile(
    rf",?\s+(?:{COMPARISONS}|{pattern('instead_words')})\s"
    rf"|,\s*{_NOT}\s|,\s*{pattern('source_notes')}\s",
    re.IGNORECASE,
)
# two readings offered: "MARKET" or possibly "MARKETS"; a bare "ohsticf or ohstlcf"
_TWO_READINGS = re.compile(
    rf"{HEDGES}|^\s*[\"']?[^\s\"']+[\"']?\s+(?:{pattern('or_words')}|/)\s+"
    r"[\"']?[^\s\"']+[\"']?\s*\.?\s*$",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;!?\n]")
_CLAUSE_EDGE = re.compile(r"([,.;!?\n—–]+)")
_LATIN = "[a-zà-ÿ]"  # a Latin letter, lower-cased as `_ocr_form` leaves it


def substring_match(
    prediction: str, targets: Sequence[str], ignore_spaces: bool = False, question: str = ""
) -> bool:
    """OCRBench: a target contained in the prediction, both lower-cased with line breaks read as
    spaces; handwritten-formula items (HME100k) compare with all spaces removed and case kept.
    Follows lmms-eval's ocrbench utils, with Unicode compatibility folding added (fullwidth
    `ＳＴＯＰ` is STOP), and read as a careful grader reads it: the target as a whole word
    ("Dreams" is not "Dream"); two readings offered commit to neither; a turn away from a first
    reading is read from the turn on; long asides, others named after the reading ("WARDEN, not
    GARDEN") and a paragraph explaining a first-line reading are context. A yes/no target is
    read as the answer's yes or no; given the question, a "how many" answer as its count of what
    is asked, and a closing restatement of what it asks for as the reading."""
    if all(plain_words(str(target)) in ("yes", "no") for target in targets):
        return yes_no(prediction) in {plain_words(str(target)) for target in targets}
    settled, hedged = _settled(prediction)  # "could be F or P. ... So the word is Fresh."
    # "X or Y (the end is ...)"; "\frac{a}{b}+\sqrt{c} (The last letter could also be an e.)"
    offered_aside = " ".join(aside[0] for aside in LONG_ASIDE.finditer(prediction))
    two = _TWO_READINGS.search(fold(hedged)) or HEDGE.search(fold(offered_aside))
    offers = ("alternatives", "two_readings", "hedged_value")  # "reads 10/22/98, ... might be 96"
    if two or any(reading_of(settled).has(kind) for kind in offers):
        return False  # "It's either DENTIST or DENTAL", "MARKET or possibly MARKETS"
    # a value beside a count is read for a number only: "what is written" asks for no value
    counted = stated_count(prediction, question)
    if not counted and any(holds_digit(str(target)) for target in targets):
        counted = _value_beside_a_count(prediction, question) or _without_counts(prediction)
    prediction = counted or _first_line_reading(prediction)
    read = _settled(prediction)[1]
    first = sentences(read)
    # a last sentence restating what the others or the question name, "the sender is Dennis Lowe."
    restated = _RESTATED_READING.match(first[-1]) if len(first) > 1 else None
    named = restated.group(1).strip().lower() if restated else ""
    if len(first) > 1 and states_reading(first[0]) and _CONTEXT_AFTER.search(" ".join(first[1:])):
        read = first[0]  # "It's a Dell laptop. The Lenovo sticker ... is on the stand, not ..."
    elif named and named in " ".join([*first[:-1], question]).lower():
        read = first[-1]  # "... and invoice number A-4417. The invoice number is A-4417."
    if not ignore_spaces:
        read = _without_others(read)
    predicted = _ocr_form(_without_inability(read), ignore_spaces)
    return any(
        (expected := _ocr_form(str(target), ignore_spaces))
        and (expected in predicted if ignore_spaces else _holds_word(predicted, expected))
        for target in targets
    )


def _settled(text: str) -> tuple[str, str]:
    """What a response settles on: after its last turn ("could be X or Y, but ... it is Z"), and
    its last conclusion when that states a reading ("... 48, 52 and 60 ..., so the tallest is
    60"); and what to read of it: that if it states a reading, else all without long asides."""
    settled = settled_part(text)
    concluded = reading_of(settled).parts("conclusion")[-1]
    settled = concluded if states_reading(concluded) else settled
    return settled, settled if states_reading(settled) else LONG_ASIDE.sub("", text)


def _holds_word(predicted: str, expected: str) -> bool:
    """Whether the reading holds the target not glued to further Latin letters: "Dreams" is
    another word than "Dream", while "STOP!" and "stop sign" read "stop" (CJK text, which no
    space delimits, is read as it is); a number as written from its first digit to its last
    non-zero decimal ("Route 135" is no 35, "17.5" no 17; a digit string read with one more at
    its end, "403120", holds "40312" as OCRBench's containment does)."""
    before = f"(?<!{_LATIN})" if re.match(_LATIN, expected) else ""
    after = f"(?!{_LATIN})" if re.match(_LATIN, expected[-1:]) else ""
    before += r"(?<!\d)(?<!\d[.,])" if expected[:1].isdigit() else ""
    after += r"(?![.,]\d*[1-9])" if expected[-1:].isdigit() else ""
    return re.search(before + re.escape(expected) + after, predicted) is not None


def _value_beside_a_count(text: str, question: str) -> str | None:
    """The clause that states a value when the answer opens by counting things ("There are 12
    countries in the chart, and Germany's value is 8." states 8); None otherwise."""
    if not holds_digit(text) or value_strength(main_clause(text)) > 0:
        return None
    clause = stating_clause(text, question, holds_digit, value_strength)
    return clause if clause is not None and value_strength(clause) == 2 else None


def _without_counts(text: str) -> str | None:
    """The sentences that do not count things, where another states a number: "The player on
    the left wears number 23; there are 7 players visible." reads 23 for "what number ...?"
    (a "how many" question reads its count by `stated_count`); None where none is left out."""
    told = sentences(text)
    kept = [sentence for sentence in told if not only_counts(sentence)]
    return " ".join(kept) if len(kept) < len(told) and holds_digit(" ".join(kept)) else None


def _first_line_reading(text: str) -> str:
    """The reading a response gives alone on its first line, before a paragraph that explains it
    ("clearly\n\nThe first letters could be mistaken for ..."); else, or when the paragraph
    corrects the first line, the whole response."""
    first, _, rest = text.strip().partition("\n\n")
    bare = first.strip().strip("*\"'")
    explains = rest.strip() and not reading_of(rest).has("correction")  # not "Wait, ... it is a Y"
    if explains and 0 < len(bare.split()) <= 3 and not bare.endswith(":"):
        return first
    return text


def _without_others(text: str) -> str:
    """The text without what follows a reading to name others, up to the end of that clause
    ("the United States, followed by Brazil and India."), when the text before it states a
    reading of its own or is a bare one."""
    kept = text
    for other in reversed(list(_OTHERS_AFTER.finditer(text))):
        end = _CLAUSE_END.search(text, other.end())
        before = text[: other.start()]
        if states_reading(before) or 0 < len(before.split()) <= 3:
            kept = kept[: other.start()] + kept[end.start() if end else len(text) :]
    return kept


def _without_inability(text: str) -> str:
    """The text less each clause saying it cannot read or tell: a refusal's words are no
    reading, even where the gold is one of them ("I am unable to read the handwriting" for
    "unable", "Sorry, I can't make out the text" for "can")."""
    parts = _CLAUSE_EDGE.split(text)
    return "".join(" " if CANNOT_TELL.search(part) else part for part in parts)


def _ocr_form(text: str, formula: bool) -> str:
    text = fold(text).strip().replace("\n", " ")
    return text.replace(" ", "") if formula else " ".join(text.lower().split())
