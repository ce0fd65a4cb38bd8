"""MMVU's open-answer rule: yale-nlp/MMVU's rule-based match (lmms-eval's
`evaluate_with_rule_based`), read as a careful grader reads an answer."""

from __future__ import annotations

import re

from mmcritic.eval.answers import number_value, other_number, plain_words
from mmcritic.eval.scorers import math_equal, numeric_match
from mmcritic.reading.markup import plain_math
from mmcritic.reading.statements import english_gloss, settled_part
from mmcritic.reading.structure import HEDGE, reading_of

# a number with at most a short unit: "4 Ω", "25%", "3.5 cm", "3/8", "3 × 10^8 m/s", "5730
# years", "$3000", "50°C"
_QUANTITY_TARGET = re.compile(
    r"[$€£]?-?\d+(?:\.\d+)?(?:\s*/\s*\d+|\s*[×x*]\s*10\^[-+]?\d+)?"
    r"\s*(?:%|[^\W\d_]{1,7}(?:/[^\W\d_]{1,3})?|Ω|°[CF]?)?"
    r"(?:\s+[a-z]{1,10}){0,3}"  # a unit in words: "80 beats per minute"
)
# an exact value with π or a root, and a short unit: "90π cm³", "2√3 m"
_MATH_TARGET = re.compile(r"(\d*(?:π|√\d+)[\dπ√/^()]*)\s*(?:[^\W\d_]{1,5}[²³]?)?")
# a value and its unit: "98 J", "3.2 m/s²", "0.2 mol/L"; none inside "1,234.5 J" or "1,2,3 V"
_VALUE_UNIT = re.compile(r"(?<![\d.,])(\d+(?:\.\d+)?)\s*([A-Za-zΩμ°][\wΩ°·/^²³]*)")
# the quantity a unit symbol measures, any SI prefix before it: "kJ" and "eV" are energy
_PREFIXES = {
    "": 1,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "c": 1e-2,
    "m": 1e-3,
    "μ": 1e-6,
    "n": 1e-9,
    "p": 1e-12,
}
_QUANTITIES = {
    quantity: re.compile(rf"(?P<prefix>[kMGcmμnp]?)(?:{symbols})")
    for quantity, symbols in {
        "energy": "J|eV|cal|Wh",
        "power": "W",
        "force": "N",
        "potential": "V",
        "current": "A",
        "resistance": "Ω",
        "frequency": "Hz",
        "pressure": "Pa|atm|bar",
        "charge": "C",
        "capacitance": "F",
        "concentration": "M|mol/L",
        "speed": "m/s",
        "acceleration": "m/s(?:\\^?2|²)",
        "length": "m",
        "time": "s|min|h",
        "mass": "g",
    }.items()
}
_ASIDE_IN_TARGET = re.compile(r"(.+?)\s+\(([^()]{2,})\)")  # "(H2)", not "(s)"


def open_match(answer: str, target: str, question: str = "") -> bool:
    """MMVU's rule-based open-answer check (yale-nlp/MMVU; lmms-eval's
    `evaluate_with_rule_based`): equal, either contained in the other, first numbers within
    0.01, or every word of a 2-5 word target in the answer. Read as a careful grader does:
    a number is the one the answer states (`numeric_match`, to 0.01: "Step 3: ... The algorithm
    makes 4 comparisons." is 4, "a four-stroke engine" 4), containment is of whole words ("AND
    gate" is not "NAND gate"), and an answer that offers alternatives ("It could be a
    chloroplast or a mitochondrion") commits to none."""
    if _QUANTITY_TARGET.fullmatch(target.strip()):  # "4", "4 Ω", "25%": the number stated
        if _in_another_unit(answer, target.strip()):
            return False  # "98 W" for "98 J"
        # "50%" is also the fraction 0.5
        share = number_value(target.strip()[:-1]) if target.strip().endswith("%") else None
        fraction = "" if share is None else f"{share / 100:g}"
        return (
            numeric_match(answer, target, precision=2, question=question)
            or bool(fraction and numeric_match(answer, fraction, precision=2, question=question))
            or _last_of_its_quantity(answer, target.strip())
        )
    if exact := _MATH_TARGET.fullmatch(target.strip()):  # "90π ≈ 282.7 cm³" states 90π
        return math_equal(plain_math(answer), exact[1], question)
    named = _ASIDE_IN_TARGET.match(target.strip())  # "Third molar (wisdom tooth)": either name
    if named:
        return any(open_match(answer, name, question) for name in named.groups())
    settled = settled_part(answer)  # "At first glance ... cable-stayed, but ... suspension"
    predicted, expected = plain_words(settled if settled.strip() else answer), plain_words(target)
    if not predicted or reading_of(answer).has("alternatives") or HEDGE.search(answer):
        return False  # also "O(log n) or maybe O(n)"
    forms = "|".join(map(re.escape, {expected, *other_number(expected)}))  # "mitochondria"
    plural = rf"(?<!\w)(?:{forms})(?:e?s)?(?!\w)"  # "chloroplasts" for "Chloroplast"
    spelled_out = plain_words(settled_part(answer, keep_asides=True))  # "KCL (Kirchhoff's ...)"
    glossed = plain_words(english_gloss(answer) or "")  # "因此金属是钠。" names sodium
    if any(re.search(plural, text) for text in (predicted, spelled_out, glossed)):
        return True
    if f" {predicted} " in f" {expected} ":
        return True
    words = {word for word in expected.split() if len(word) > 2}
    return 2 <= len(expected.split()) <= 5 and bool(words) and words <= set(predicted.split())


def _in_another_unit(answer: str, target: str) -> bool:
    """Whether the answer gives the target's value only in another unit: "98 W" is power where
    "98 J" is energy, "20 s" is no "20 ms" ("0.2 mol/L" meets "0.20 M"). A unit not listed in
    `_QUANTITIES` ("joules", "rpm") is not compared."""
    if (gold := _gold_measure(target)) is None:
        return False
    value, measure = gold
    said = {_measure(u) for n, u in _VALUE_UNIT.findall(answer) if number_value(n) == value}
    said.discard(None)
    return bool(said) and measure not in said


def _last_of_its_quantity(answer: str, target: str) -> bool:
    """Whether the last value the answer gives in a unit of the target's quantity, in the
    target's unit ("0.02 s" is "20 ms"), is the target, where it also states values of other
    quantities: "Equivalent resistance: 2 Ω. With the 12 V battery, the total current drawn is
    6 A." answers 2 Ω. Not for an answer that hedges."""
    gold = _gold_measure(target)
    if gold is None or reading_of(answer).has("alternatives") or HEDGE.search(answer):
        return False
    expected, (quantity, scale) = gold
    values = [
        value * measure[1] / scale
        for n, u in _VALUE_UNIT.findall(answer)
        if (value := number_value(n)) is not None
        and (measure := _measure(u))
        and measure[0] == quantity
    ]
    return bool(values) and expected is not None and abs(values[-1] - expected) <= 0.01


def _gold_measure(target: str) -> tuple[float | None, tuple[str, float]] | None:
    """A target that is one value in a listed unit ("98 J"): its value and its unit's measure."""
    gold = _VALUE_UNIT.fullmatch(target)
    measure = _measure(gold[2]) if gold else None
    return None if measure is None else (number_value(gold[1]), measure)


def _measure(unit: str) -> tuple[str, float] | None:
    """The quantity a unit symbol measures and what its SI prefix multiplies by ("ms": time,
    1e-3), or None for one not listed."""
    found = ((name, form.fullmatch(unit)) for name, form in _QUANTITIES.items())
    return next(((name, _PREFIXES[m["prefix"]]) for name, m in found if m), None)
