"""Reading a policy's answer: the final answer, an option letter, a number, yes or no.

The think block and the boxes are found with `mmcritic.rewards.parsing` and
`mmcritic.inference.answers`, the modules that also read a critic's verdict and a policy's boxed
answer, so a box means the same thing in training, inference and evaluation.
What is added here is what benchmarks need on top: the option letter in the manner of MMMU's
official parser, numbers written with thousands separators or percent signs, and yes/no.
Nothing here raises on model output.
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from mmcritic.inference.answers import final_boxed
from mmcritic.rewards.parsing import THINK_CLOSE, THINK_OPEN, boxed_contents, normalize_tags

_TEXT_MACRO = re.compile(
    r"\\(?:text|textbf|textit|texttt|textrm|mathrm|mathbf|mathit|operatorname|emph)\s*\{([^{}]*)\}"
)
_ANSWER_PHRASE = re.compile(
    r"(?:final\s+answer|correct\s+answer|best\s+answer|correct\s+option|answer)"
    r"\s*(?:is|should\s+be|would\s+be|=|:)\s*:?\s*",
    re.IGNORECASE,
)
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_FRACTION = re.compile(r"([-+]?\d+)\s*/\s*(\d+)")
_LEADING_LETTER = re.compile(
    r"\(\s*([A-Za-z])\s*\)|([A-Za-z])\s*[.):](?!\w)|([A-Za-z])[ \t]*(?:\n|$)"
)
_UNCLEAR = re.compile(
    r"^(?:i\s+(?:cannot|can't|can\s+not|am\s+unable\s+to|am\s+not\s+able\s+to|don't\s+know)"
    r"|i(?:'m|\s+am)\s+not\s+sure|it(?:'s|\s+is)\s+not\s+possible\s+to|cannot\s+tell"
    r"|it(?:'s|\s+is)\s+(?:unclear|not\s+clear|uncertain|impossible\s+to)|unclear|uncertain|"
    r"not\s+sure|unsure|cannot\s+(?:be\s+)?determine|there\s+is\s+not\s+enough)"
)
_YES_WORDS = r"yes|yeah|yep|correct|true|right|indeed|certainly"
_NO_WORDS = r"no|nope|nah|not|incorrect|false|wrong|isn't|doesn't|don't|aren't|wasn't|cannot"
_LEADING_YES_NO = re.compile(
    rf"^(?:(?:that'?s|that\s+is|it'?s|it\s+is)\s+)?(?:(?P<no>not\s+(?:correct|true|right)|"
    rf"{_NO_WORDS})|(?P<yes>{_YES_WORDS}))\b"
)
_TURNED_YES_NO = re.compile(r"\b(?:but|however)\b[^.;]*?,\s*(?:(?P<yes>yes)|(?P<no>no))\b")
_STATED_YES_NO = re.compile(r"\banswer\s+(?:is|would\s+be|:)\s*:?\s*(?P<w>yes|no)\b")
_ANY_YES_NO = re.compile(r"\b(?:(?P<yes>yes)|(?P<no>no|nope|not|isn't|doesn't|aren't))\b")
_PUNCTUATION = re.compile(r"[^\w\s]")
_CORRECTION = re.compile(r"\b(?:actually|wait|on second thought|correction|no,? sorry)\b", re.I)
_OFFERED_LETTERS = re.compile(r"\(?[A-Z]\)?\s+or\s+\(?[A-Z]\)?\b")
# two letters offered as alternatives anywhere: "either A or B", "(A) Yes or (B) No"
_LETTER_ALTERNATIVES = re.compile(
    r"\(?\b([A-Z])\b\)?(?:\s+[^\s()]{1,20})?,?\s+or\s+\(?\b([A-Z])\b\)?"
)
_LETTER_MENTIONS = ("({})", " {} ", " {}.", " {})", " {}:")
_ALTERNATIVE = re.compile(r"\W*(?:,\s*)?or\W*", re.IGNORECASE)
# what precedes a mention the answer rejects ("not mitosis", "rather than the Renaissance")
REJECTED_BEFORE = re.compile(
    r"(?:\bnot|\brather than|\binstead of|\bnor)\s+(?:the\s+|a\s+|an\s+)?$"
)
_SEVERAL_LETTERS = re.compile(
    r"\(?[A-Z]\)?(?:\s*(?:,|and|or|&|/)\s*\(?[A-Z]\)?)+\.?", re.IGNORECASE
)
_EDGE_PUNCTUATION = ",.!?;:'\" "
_MARKUP = str.maketrans("", "", "*$`")
_MINUS_SIGNS = str.maketrans({"\u2212": "-", "\u2012": "-", "\ufe63": "-"})
_BOLD = re.compile(r"\*\*([^*\n]{1,80})\*\*")
_LATEX_INLINE = re.compile(r"\\[(\[]\s*(.*?)\s*\\[)\]]", re.DOTALL)
# MMMU eval_utils.py `get_key_subresponses`
KEY_INDICATORS = ("could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ")
_TRIVIAL_TAILS = {":", ",", ".", "!", "?", ";", "'"}
_TEXT_KEY_PHRASES = (
    " is ", " was ", " are ", " were ", " to ", " by ", " dated ", " of ", " in ", " on ", " at ",
    " from ",
)  # fmt: skip
_VERB_PHRASE = re.compile(r" (?:is|was|are|were) ", re.IGNORECASE)
_NUMBER_TOKEN = re.compile(r"(?<![\w.,])[$€£]?\d[\d,]*(?:\.\d+)?%?(?![\w])")
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_ABBREVIATION = re.compile(r"\b(?:Inc|Ltd|Co|Corp|Jr|Sr|Dr|Mr|Mrs|Ms|St|No|etc)\.$")
# A trailing condition on a variable ("attained at x = 1", "when t = 2") states no answer.
_CONDITION = re.compile(
    r",?\s*(?:[a-z]+\s+)?(?:at|when|where|for|if|with)\s+[a-z]\s*=\s*[^,;]*$", re.IGNORECASE
)
_ASIDE = re.compile(r"\s*\([^()]*\)")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{1,80})[\"”]")
_SENTENCE = re.compile(r"\.\s+(?=[A-Z])|\n")
NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
    "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15",
    "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
}  # fmt: skip
_SPELLED = {digit: name for name, digit in NUMBER_WORDS.items()}
TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_NUMBER_WORD = re.compile(
    rf"\b(?:(?P<tens>{'|'.join(TENS)})(?:[- ](?P<unit>one|two|three|four|five|six|seven|eight|"
    rf"nine))?|(?P<word>{'|'.join(NUMBER_WORDS)}))\b",
    re.IGNORECASE,
)
_EMPHASIS = str.maketrans("", "", "*`")
# `$x$` around math; a `$` followed by a digit opens no math and closes none: it is currency
_MATH_DOLLARS = re.compile(r"\$([^$]*?)\$(?!\d)")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_JSON_ANSWER_KEYS = {"answer", "final_answer", "final answer", "choice", "option", "result"}


def final_answer(text: str) -> str:
    """The part of a response that states the answer: `stated_answer`, else all of the answer
    text. An unclosed think block is then read as answer text rather than discarded: a policy
    benchmark scores what was said, and lmms-eval's parsers ignore think tags altogether."""
    stated = stated_answer(text)
    if stated is not None:
        return stated
    # bold stays: in a free answer it marks the stated value (`answer_span`)
    return clean_latex(_answer_region(text), keep_bold=True)


def stated_answer(text: str) -> str | None:
    """The answer a response marks as such; None when it marks none.

    First the last box after the think block, read exactly as `Answer.final_answer` of
    `mmcritic.inference` reads it; then a box in the answer text; then the `answer` of a JSON
    object; then the text after the last "answer is" / "Answer:" phrase, up to the end of its
    line."""
    boxed = final_boxed(text)
    if boxed is not None:
        return clean_latex(boxed)
    region = _answer_region(text)
    boxes = boxed_contents(region)
    if boxes:
        return clean_latex(boxes[-1])
    stated = json_answer(region)
    if stated is not None:
        return clean_latex(stated)
    phrases = list(_ANSWER_PHRASE.finditer(region))
    if phrases:
        tail = region[phrases[-1].end() :].strip().splitlines()
        if tail and tail[0].strip():
            return clean_latex(tail[0]).rstrip(".")
    return None


def _answer_region(text: str) -> str:
    text = normalize_tags(text)
    close = text.rfind(THINK_CLOSE)
    return text[close + len(THINK_CLOSE) :] if close >= 0 else text.replace(THINK_OPEN, "")


def json_answer(text: str) -> str | None:
    """The answer of a response written as JSON (`{"answer": "A"}`, also inside a ```json
    fence), as models asked for structured output write it; None when it is not such JSON."""
    match = _JSON_OBJECT.search(text)
    if match is None:
        return None
    try:
        value = json.loads(match.group())
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    for key, answer in value.items():
        if str(key).strip().lower() in _JSON_ANSWER_KEYS and isinstance(answer, str | int | float):
            return str(answer)
    return None


def clean_latex(text: str, keep_bold: bool = False) -> str:
    """Drops `\\text{}`-style wrappers, math `$...$` delimiters, `*` and backticks, LaTeX's
    `\\%` and outer whitespace. A `$` before a number is a currency sign and stays: `$25.00`
    is DocVQA's answer as printed."""
    previous = None
    while previous != text:
        previous, text = text, _TEXT_MACRO.sub(r"\1", text)
    text = _MATH_DOLLARS.sub(r"\1", text).replace("\\%", "%").replace("\\$", "$")
    if keep_bold:
        return text.replace("`", "").strip()
    return text.translate(_EMPHASIS).strip()


def fold(text: str) -> str:
    """Unicode compatibility folding: fullwidth `ＳＴＯＰ`, `Ｂ` and `６` read as `STOP`, `B` and
    `6`, and the minus sign `−` as `-`."""
    return unicodedata.normalize("NFKC", text).translate(_MINUS_SIGNS)


def answer_span(response: str) -> str:
    """The part of a free answer that states it, for numeric and mathematical answers: the
    answer the response marks (box, JSON, "answer is"); else its last bold span holding a digit
    ("... = **27.8**"); else the value after the last `=` of its last line that has one (an
    approximation after `≈` included; a condition such as ", attained at x = 1" is not one);
    else the last of MMMU's key tails (the text after "is",
    "so", ...) that holds a digit; else the whole answer."""
    stated = stated_answer(response)
    if stated is not None:
        return stated
    region = _answer_region(response)
    bold = [span for span in _BOLD.findall(region) if re.search(r"\d", fold(span))]
    if bold:
        return clean_latex(bold[-1])
    text = clean_latex(_LATEX_INLINE.sub(r"\1", fold(region)))
    lines = [_CONDITION.sub("", line.rstrip(". ")) for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if "=" in line:
            return line.rsplit("=", 1)[1].strip().rstrip(".").strip()
    text = _ASIDE.sub("", "\n".join(lines))
    tails = [tail for tail in key_tails(text) if re.search(r"\d", tail)]
    return tails[-1] if tails else text.strip()


def text_answer(response: str) -> str:
    """The short text answer a response states, unwrapped as a careful grader reads it: the
    marked answer (box, JSON, "answer is"); else a bold or quoted span; else the value after a
    label ("Total due: $25.00", "Date:\\nMarch 14, 1996"); else, in a sentence, what follows
    its key phrase ("The total is $25.00." -> "$25.00"; "It is addressed to Dr. J. H. Smith." ->
    "Dr. J. H. Smith", without a leading article); else the first line. Wrapping quotes and a
    final full stop (not an abbreviation's) are dropped."""
    stated = stated_answer(response)
    if stated is not None:
        return _trimmed(stated)
    answer = clean_latex(_answer_region(response), keep_bold=True)
    plain = clean_latex(_LATEX_INLINE.sub(r"\1", answer))
    lines = [line.strip() for line in plain.splitlines() if line.strip()]
    if not lines:
        return ""
    marked = [span for span in _BOLD.findall(answer) if not span.rstrip().endswith(":")]
    marked = marked or _QUOTED.findall(plain)
    if marked:
        return _trimmed(marked[-1])
    if lines[0].endswith(":") and len(lines) > 1:
        return _trimmed(lines[1])
    if ":" in lines[0] and len(lines[0].split(":", 1)[0].split()) <= 3:
        return _trimmed(lines[0].split(":", 1)[1])
    numbers = _NUMBER_TOKEN.findall(lines[0])
    if len(numbers) == 1 and len(lines[0].split()) > 3:
        return numbers[0]  # "A total of 240 participants were enrolled."
    if not (_VERB_PHRASE.search(f" {lines[0]} ") or len(lines[0].split()) >= 5):
        return _trimmed(lines[0])  # a bare phrase such as "Summary of Results"
    tail = _after_key_phrase(lines[0])
    return _trimmed(_ARTICLE.sub("", tail) if tail != lines[0] else tail)


def _after_key_phrase(sentence: str) -> str:
    """The shortest tail after the first occurrence of any key phrase in a sentence."""
    lowered = f" {sentence.lower()}"
    tails = [
        sentence[at + len(word) - 1 :]
        for word in _TEXT_KEY_PHRASES
        if (at := lowered.find(word)) >= 0
    ]
    return min(tails, key=len) if tails else sentence


def _trimmed(span: str) -> str:
    span = span.strip().strip("\"'“”*").strip()
    if span.endswith(".") and not _ABBREVIATION.search(span):
        span = span[:-1]
    return span.strip()


def key_tails(text: str) -> list[str]:
    """MMMU's `get_key_subresponses` per sentence (`shortest_key_tail`). Sentences are split
    before lower-casing, so the split MMMU intends (`. ` before a capital) takes effect."""
    tails = []
    for sentence in _SENTENCE.split(text.strip()):
        tail = shortest_key_tail(sentence.strip().strip(".").lower())
        if tail is not None:
            tails.append(tail)
    return tails


def shortest_key_tail(lowered: str, indicators: tuple[str, ...] = KEY_INDICATORS) -> str | None:
    """MMMU's key part of one lower-cased sentence: the text after the key phrase ("is ", "so ",
    "therefore ", ...) that leaves the shortest tail; None when no phrase leaves a real one."""
    tails = [lowered.split(word)[-1].strip() for word in indicators if word in lowered]
    tails = [tail for tail in tails if tail and tail not in _TRIVIAL_TAILS]
    return min(tails, key=len) if tails else None


def number_word(text: str) -> str:
    """Number words as digits: `Three` is 3, `Two lanes.` is `2 lanes.`, `Thirty-five` 35."""
    return _NUMBER_WORD.sub(_digits, text)


def _digits(match: re.Match) -> str:
    if match.group("word"):
        return NUMBER_WORDS[match.group("word").lower()]
    unit = match.group("unit")
    return str(TENS[match.group("tens").lower()] + (int(NUMBER_WORDS[unit.lower()]) if unit else 0))


def option_letters(count: int) -> list[str]:
    """`A`, `B`, ... for `count` options."""
    return [chr(ord("A") + index) for index in range(count)]


def choice_letter(text: str, letters: Sequence[str], options: Sequence[str] = ()) -> str | None:
    """The option an answer picks; None when it picks none.

    After folding fullwidth forms and dropping markup, in order:
    1. the whole answer is a letter (any case), or an option's whole text ("A and B" when that
       is option D; "five" for an option "5");
    2. several bare letters ("A, C") are two answers to a one-answer question, and two letters
       offered as alternatives with none named after them ("either B or D", "(A) Yes or (B)
       No"): none;
    3. the answer opens with a letter marked as one: `B.`, `(B)`, `B)`, `B:`, or `B` alone on
       its first line ("C\\nBecause both the red one ...") — so "D. A and B" is D;
    4. otherwise the option mentioned last, by letter or by its text: letters as MMMU's
       `parse_multi_choice_response` finds them (`(B)`, ` B `, ` B.`, ` B)`, ` B:`, line breaks
       read as spaces), option texts as whole words in an answer of more than five words.
       A letter inside a quoted option text does not count ("A and B have the same ..." picks
       that option, not B), nor does an option the answer rejects ("not mitosis", "rather than
       the Renaissance").
    Unlike MMMU, which draws a random letter when nothing matches, no match is None, so a score
    never depends on chance. See https://github.com/MMMU-Benchmark/MMMU/blob/main/eval/eval_utils.py.
    """
    core = fold(text).translate(_MARKUP).strip(_EDGE_PUNCTUATION + "\n\t")
    if len(core) == 1 and core.upper() in letters:
        return core.upper()
    named = _option_named(core, letters, options)
    if named is not None:
        return named
    if _SEVERAL_LETTERS.fullmatch(core):
        return None
    if _OFFERED_LETTERS.match(core) or _ends_offering_two(core, letters):
        return None  # "A or B, it is hard to tell", "likely either B or D": no pick
    leading = None if _CORRECTION.search(core) else _LEADING_LETTER.match(core)
    letter = next((group for group in leading.groups() if group), "") if leading else ""
    if letter.upper() in letters:
        return letter.upper()
    long_answer = len(option_words(core).split()) > 5
    text_hits = _option_text_hits(core, letters, options) if long_answer else []
    if _hedged(core, text_hits):
        return None
    padded = f" {' '.join(_blanked(core, text_hits).split())} "
    hits = {}
    for pattern in _LETTER_MENTIONS:
        for letter in letters:
            at = padded.rfind(pattern.format(letter))
            if at >= 0:
                hits[letter] = max(hits.get(letter, -1), at / len(padded))
    for letter, start, _ in text_hits:
        hits[letter] = max(hits.get(letter, -1), (start + 1) / len(padded))
    if hits:
        return max(hits, key=hits.__getitem__)
    return _only_option_covered(option_words(core), letters, options) if long_answer else None


def _ends_offering_two(core: str, letters: Sequence[str]) -> bool:
    """Whether the answer's last word on the letters offers two of them as alternatives, with
    no letter named after it."""
    offered = [m for m in _LETTER_ALTERNATIVES.finditer(core) if _two_letters(m, letters)]
    if not offered:
        return False
    after = f" {' '.join(core[offered[-1].end() :].split())} "
    return not any(pattern.format(x) in after for pattern in _LETTER_MENTIONS for x in letters)


def _two_letters(match: re.Match, letters: Sequence[str]) -> bool:
    first, second = match.group(1), match.group(2)
    return first != second and first in letters and second in letters


def _option_named(core: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    answer = option_words(core)
    for letter, option in zip(letters, options, strict=False):
        if answer and answer == option_words(str(option)):
            return letter
    return None


def _option_text_hits(
    core: str, letters: Sequence[str], options: Sequence[str]
) -> list[tuple[str, int, int]]:
    """(letter, start, end) in the answer of the last mention of each option's text as whole
    words (case, punctuation and number words aside), leaving out mentions it rejects."""
    hits = []
    for letter, option in zip(letters, options, strict=False):
        words = plain_words(str(option)).split()
        if not words or len(" ".join(words)) == 1:
            continue  # an option that is itself a letter is read by the letter patterns
        pattern = r"\W+".join(_word_pattern(word) for word in words)
        found = [
            match
            for match in re.finditer(rf"(?<!\w){pattern}(?!\w)", core, re.IGNORECASE)
            if not REJECTED_BEFORE.search(core[: match.start()].lower())
        ]
        if found:
            hits.append((letter, found[-1].start(), found[-1].end()))
    return hits


def _hedged(core: str, hits: list[tuple[str, int, int]]) -> bool:
    """Whether the answer offers two options as alternatives ("either increase or decrease")."""
    spans = sorted((start, end) for _, start, end in hits)
    return any(
        _ALTERNATIVE.fullmatch(core[end:start])
        for (_, end), (start, _) in itertools.pairwise(spans)
    )


def _word_pattern(word: str) -> str:
    digits = NUMBER_WORDS.get(word)
    spelled = _SPELLED.get(word)
    forms = [re.escape(word), *(re.escape(form) for form in (digits, spelled) if form)]
    return f"(?:{'|'.join(forms)})"


def _blanked(core: str, hits: list[tuple[str, int, int]]) -> str:
    """The answer with the option texts it quotes blanked, so a capital letter inside one
    ("A and B have the same ...") is not read as a pick."""
    for _, start, end in hits:
        core = core[:start] + " " * (end - start) + core[end:]
    return core


def _only_option_covered(words: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The one option all of whose words a long answer uses, when exactly one is."""
    used = set(words.split())
    texts = [option_words(str(option)).split() for option in options]
    covered = [
        letter for letter, text in zip(letters, texts, strict=False) if text and set(text) <= used
    ]
    return covered[0] if len(covered) == 1 else None


def option_words(text: str) -> str:
    """`plain_words` with number words as digits: the form option texts compare in."""
    return " ".join(NUMBER_WORDS.get(word, word) for word in plain_words(text).split())


def plain_words(text: str) -> str:
    """Lower-cased words without punctuation: the form answer and option texts compare in."""
    return " ".join(_PUNCTUATION.sub(" ", fold(text).lower()).split())


@dataclass(frozen=True)
class Number:
    """A number read from text; `percent` records a trailing `%`."""

    value: float
    percent: bool = False


def parse_number(text: str) -> Number | None:
    """The last number in a short answer: `1,000` is 1000, `12.0%` is 12 with `percent` set,
    `3/4` is 0.75, `$1.45` is 1.45. None when the text holds no number."""
    cleaned = _THOUSANDS.sub(lambda match: match.group().replace(",", ""), fold(text).strip())
    cleaned = number_word(cleaned).translate(_MARKUP)
    fraction = _FRACTION.fullmatch(cleaned.rstrip(". "))
    if fraction and int(fraction.group(2)):
        return Number(int(fraction.group(1)) / int(fraction.group(2)))
    matches = list(_NUMBER.finditer(cleaned))
    if not matches:
        return None
    last = matches[-1]
    try:
        value = float(last.group())
    except ValueError:
        return None
    return Number(value, cleaned[last.end() :].lstrip().startswith("%"))


def yes_no(text: str) -> str | None:
    """`yes`, `no` or `unclear` as a careful grader reads a yes/no answer; None for none.

    The opening word decides ("Nope", "Not really", "Correct.", "That's incorrect", "No, it is
    not ... yes") unless the answer turns it round ("Yes, in reality ..., but in the chart,
    no"); then
    a stated "the answer is yes/no"; then a stated inability to tell (`unclear`); then the
    first yes or no word anywhere ("It is not the most populous" is no)."""
    core = " ".join(fold(text).translate(_MARKUP).lower().strip(_EDGE_PUNCTUATION).split())
    if _UNCLEAR.match(core):
        return "unclear"
    leading = _LEADING_YES_NO.match(core)
    if leading:
        turned = _TURNED_YES_NO.search(core, leading.end())
        if turned:  # "Yes, in reality ..., but according to the chart, no"
            return "yes" if turned.group("yes") else "no"
        return "yes" if leading.group("yes") else "no"
    stated = _STATED_YES_NO.search(core)
    if stated:
        return stated.group("w")
    anywhere = _ANY_YES_NO.search(core)
    if anywhere:
        return "yes" if anywhere.group("yes") else "no"
    return None


def extract_numbers(text: str) -> list[float]:
    """Every number in the text, thousands separators removed (MMMU's `extract_numbers`)."""
    cleaned = _THOUSANDS.sub(lambda match: match.group().replace(",", ""), fold(text))
    numbers = []
    for match in _NUMBER.finditer(cleaned):
        try:
            numbers.append(float(match.group()))
        except ValueError:
            continue
    return numbers
