"""Reading a critic's answer: the think block, the boxed verdict and the format check.

Rewards, inference and evaluation all parse through this module, so a completion is read the
same way in training and in evaluation. It runs on raw model output: no input may raise, and
nothing may take more than linear time on long garbage (tens of thousands of characters).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal, get_args

from mmcritic.patterns import anchored
from mmcritic.reading.final import final_answer
from mmcritic.reading.language import (
    LANGUAGES,
    number_words,
    ordinals,
    pattern,
    phrases,
    places,
    words,
)
from mmcritic.reading.markup import (
    BOX_OPEN,
    MARKUP,
    STYLE_MACROS,
    THINK_CLOSE,
    THINK_OPEN,
    boxed_contents,
    macro_pattern,
    normalize_tags,
    think_tags,
)

# Verdicts are short; a long box is a formula or an essay, and refusing it bounds all later work.
MAX_VERDICT_CHARS = 64

# a verdict wrapped in a style macro or a second box reads as the verdict
_WRAPPING_MACRO = macro_pattern((*STYLE_MACROS, "boxed", "fbox"))
_WRAPPERS = {"[]", "()", "{}", '""', "''", "<>"}

# what a critic calls a response ("Assistant") and the article before it, in every language
_NOUN, _THE = pattern("verdict_nouns"), pattern("definite_articles")
# "one" and "two" in every language the readers know ("Response two")
_INDEX_WORDS = {word: str(value) for word, value in number_words().items() if value in (1, 2)}
_INDEX_WORD = "|".join(sorted(_INDEX_WORDS, key=len, reverse=True))
_INDEX = re.compile(rf"(?:{_THE}\s+)?(?:{_NOUN}\s*)?(?:#\s*)?(?P<i>[12ab]|{_INDEX_WORD})\)?")
# "the second one", "la deuxième réponse", "第二个回答": a place in any language, its counter
_PLACES = ordinals()
_FIRST, _SECOND = "|".join([*_PLACES[:1], "1st"]), "|".join([*_PLACES[1:2], "2nd"])
_COUNTER = "|".join(words("measure_words"))
_ORDINAL = re.compile(
    rf"(?:{_THE}\s+)?(?:(?P<first>{_FIRST})|{_SECOND})"
    rf"(?:\s*(?:{_COUNTER}))?(?:\s*(?:{_NOUN}|{pattern('ones')}))?"
)
# a box naming two responses as alternatives is a hedge, whatever it says of one of them
_ALTERNATIVES = re.compile(rf"\b(?:{pattern('or_words')}|{pattern('and_words')})\b|/")
_NUMERIC_INDEX = re.compile(r"\+?0*(?P<i>[12])(?:\.0*)?")
_TIE = re.compile(rf"c|{pattern('verdict_ties')}")  # C: the arena's tie letter
_INDEX_MEANING = {"1": "1", "a": "1", "2": "2", "b": "2", **_INDEX_WORDS}
_INDEX_MEANING |= {word: str(value) for word, value in places().items()}

Reason = Literal[
    "ok", "no_box", "box_only_in_think", "unclosed_think", "conflicting_boxes", "unrecognised"
]
REASONS: tuple[Reason, ...] = get_args(Reason)


# what a critic writes its verdict with (a box, a think tag, a bracketed or stated verdict):
# text shown to a critic must not carry one, or it could write the judge's verdict for it
VERDICT_MARKER = anchored(
    r"\\<\[tof",
    r"\\boxed\s*\{|<\s*/?\s*think\s*>|\[\[\s*(?:[ABC12]|tie)\s*(?:[<>=]{1,2}\s*[AB12]\s*)?\]\]"
    r"|\bthe\s+better\s+response\s*(?:is\s*)?:|\b(?:overall|final)\s+judge?ment\s*:",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    """The outcome of parsing one answer; `reason` says why there is no verdict, so training can
    count the ways a policy fails the format instead of seeing only zeros."""

    choice: str | None
    raw: str | None
    reason: Reason

    @property
    def ok(self) -> bool:
        return self.choice is not None


def normalize_choice(raw: str) -> str | None:
    """Maps a box's content to `"1"`, `"2"` or `"tie"`; anything else or ambiguous is None, so
    a policy cannot hedge its way to a reward.

    Case, spacing, `$`, `*`, backticks, a trailing period, font macros, `\\boxed{}`, `\\fbox{}`
    and enclosing brackets, braces, `<>` or quotes are peeled off, repeatedly. What remains is 1
    or 2 in any notation or known language (`+02.0`, `deux`), an index (`the Assistant #B)`), an
    ordinal (`the 2nd response`), a tie word (`C`, the arena's tie letter; `it's a draw`, `both
    equally good`) or a verdict stated in words, read as after a box (`Response 1 is better`).
    Naming both responses (`12`, `1,2`, `1 or 2`, `1/2`), praise on one criterion only or a box
    over `MAX_VERDICT_CHARS` is None: a hedge is never a verdict.
    """
    if len(raw) > MAX_VERDICT_CHARS:
        return None
    # peeled repeatedly, as models stack them: `$\boxed{\textbf{[[B]]}}$.`; fullwidth ２ is 2
    core, previous = unicodedata.normalize("NFKC", raw), None
    while core != previous:
        previous = core
        core = _WRAPPING_MACRO.sub(r"\1", core).translate(MARKUP)
        core = " ".join(core.split()).lower().rstrip(".").strip()
        if len(core) >= 2 and core[0] + core[-1] in _WRAPPERS:
            core = core[1:-1].strip()
    for form in (_NUMERIC_INDEX, _INDEX):
        if match := form.fullmatch(core):
            return _INDEX_MEANING[match.group("i")]
    if match := _ORDINAL.fullmatch(core):
        return "1" if match.group("first") else "2"
    if _TIE.fullmatch(core):
        return "tie"
    return None if _ALTERNATIVES.search(core) else _stated_verdict(core)


def parse_verdict(text: str) -> Verdict:
    """The critic's verdict: the box after the think block.

    The think block ends at its first `</think>`; boxes in it, or in a later complete think
    block, are drafts and never count, and a later stray `</think>` is text. An unclosed think
    block has no verdict. A box that is no verdict (a count) is passed over; two different
    verdicts, or a box offering alternatives ("\\boxed{1 or 2}"), are a hedge and give none;
    repeating one verdict is fine."""
    parts = _answer_and_thinking(text)
    if parts is None:
        return Verdict(None, None, "unclosed_think")
    boxes = boxed_contents(parts[0])
    if not boxes:
        return Verdict(None, None, "box_only_in_think" if boxed_contents(parts[1]) else "no_box")
    verdicts = [(box, choice) for box in boxes if (choice := normalize_choice(box)) is not None]
    if len({choice for _, choice in verdicts}) > 1:
        return Verdict(None, boxes[-1], "conflicting_boxes")
    if not verdicts or any(  # a box naming two or more verdicts as alternatives: "1 or 2"
        sum(normalize_choice(part) is not None for part in _ALTERNATIVES.split(box)) >= 2
        for box in boxes
    ):
        return Verdict(None, boxes[-1], "unrecognised")
    raw, choice = verdicts[-1]
    return Verdict(choice, raw, "ok")


def _answer_and_thinking(text: str) -> tuple[str, str] | None:
    """(answer, thinking): the text after the first `</think>` with later complete think blocks
    cut out, and the text before it; None for a think block opened and never closed."""
    text = normalize_tags(text)
    close = text.find(THINK_CLOSE)
    if close < 0:
        return None if THINK_OPEN in text else (text, "")
    kept, position = [], close + len(THINK_CLOSE)
    while (start := text.find(THINK_OPEN, position)) >= 0:  # one pass: linear time
        end = text.find(THINK_CLOSE, start)
        if end < 0:
            break
        kept.append(text[position:start])
        position = end + len(THINK_CLOSE)
    return "".join([*kept, text[position:]]), text[:close]


def has_think_box_format(text: str) -> bool:
    """Whether `<think>.*</think>.*\\boxed\\{.*\\}.*` (dot matching newline) fully matches the
    tag-normalised, stripped text. Each piece's earliest occurrence leaves the most room for the
    next: the same texts pass in linear time; the backtracking regex is quadratic on repeats."""
    text = normalize_tags(text).strip()
    close = text.find(THINK_CLOSE, len(THINK_OPEN)) if text.startswith(THINK_OPEN) else -1
    box = text.find(BOX_OPEN, close + len(THINK_CLOSE)) if close >= 0 else -1
    return box >= 0 and text.find("}", box + len(BOX_OPEN)) >= 0


# Verdicts stated in words, in every language, as judge prompts ask for them (VL-RewardBench's
# "Overall Judgment: Answer X is better", MT-Bench's and Multimodal RewardBench's "[[A]]").
_WHO = rf"{_NOUN}\s*#?\s*"
# praise of a response ("is better"), not on one criterion only ("better in completeness")
_BETTER = rf"{pattern('verdict_praise')}(?!\s+{pattern('verdict_limits')})"
# each role's group prefix: a final verdict settles what came before it, a loser names the worse
_ROLES = {"f": "verdict_finals", "w": "verdict_statements", "l": "verdict_losers"}
_SLOT = re.compile(r"\{(index|letter|place)\}")
# verdicts in a judge prompt's brackets or in JSON ({"winner": "B"}); the prompt's own
# instruction "[[A]] if Assistant A is better" states none
_MARKED_VERDICTS = (
    rf"\[\[\s*(?P<w_c>[12ab])\s*\]\](?!\s*{pattern('condition_words')}\b)"
    r"|\[\[\s*(?P<w_gt>[ab])\s*>>?\s*[ab]\s*\]\]|\[\[\s*[ab]\s*<<?\s*(?P<w_lt>[ab])\s*\]\]"
    rf"|[\"']{pattern('verdict_keys')}[\"']"
    rf"\s*:\s*[\"']?\s*(?:{_WHO})?(?P<w_json>[12ab])\b"
)


def _stated_verdicts() -> str:
    """Each language's verdict statements as alternatives, each slot a named group
    `<role>_<language><number>_<slot>`: `{index}` a digit, a/b or the language's words for one
    and two, `{letter}` a digit or a/b, `{place}` its words for first and second."""
    statements = []
    for code in LANGUAGES:
        words = [word for word, value in number_words(code).items() if value in (1, 2)]
        slots = {
            "index": "|".join(["[12ab]", *sorted(words, key=len, reverse=True)]),
            "letter": "[12ab]",
            "place": "|".join(sorted(places(code), key=len, reverse=True)) or "(?!)",
        }
        for role, kind in _ROLES.items():
            for number, statement in enumerate(phrases(code, kind)):
                pieces = _SLOT.split(statement.replace("{who}", _WHO).replace("{better}", _BETTER))
                for n in range(1, len(pieces), 2):  # text, slot, text, ..., slot, text
                    pieces[n] = f"(?P<{role}_{code}{number}_{n // 2}>{slots[pieces[n]]})"
                statements.append("".join(pieces))
    return "|".join(statements) or "(?!)"


_PHRASED_VERDICTS = re.compile(f"{_MARKED_VERDICTS}|{_stated_verdicts()}", re.IGNORECASE)
# a word settling on the later of two different stated verdicts ("wait"); else neither counts
_REVISION = re.compile(rf"\b{pattern('verdict_revisions')}\b", re.IGNORECASE)
_SETTLES = re.compile(
    "|".join([_REVISION.pattern, pattern("turns"), pattern("conclusions"), pattern("summaries")]),
    re.IGNORECASE,
)

# "... if Assistant A is better": a condition, not a verdict.
_CONDITION = re.compile(rf"\b{pattern('condition_words')}\s+(?:{_THE}\s+)?$", re.IGNORECASE)
# "I don't think Response 2 is better": denied, not stated.
_DENIED = re.compile(pattern("verdict_denials"), re.IGNORECASE)
# A closing refusal to decide takes back what came before it: "or maybe Response 2",
# "ou peut-être la réponse 2", a response named in any language.
_OR_MAYBE = rf"\b{pattern('or_words')}\s+{pattern('maybe_words')}\s+(?:{pattern('articles')}\s+)?"
_UNDECIDED = re.compile(
    rf"{pattern('undecided')}|{_OR_MAYBE}(?:[^\W\d_]+\s*#?\s*)?[12ab]\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Judgement:
    """A critic's verdict read for evaluation, and how: `box` (the training format), `phrase`
    (a verdict stated in words where no box is given) or `official` (a benchmark's own rule,
    `mmcritic.eval.protocols.verdicts`); `reason` as `Verdict`'s."""

    choice: str | None
    source: Literal["box", "phrase", "official"] | None
    reason: Reason


def parse_judgement(text: str) -> Judgement:
    """The verdict of a critic under evaluation.

    The box exactly as the training reward reads it (`parse_verdict`), or, with no box after the
    think block, the last verdict stated in words ("Overall Judgment: Answer 1 is better").
    Boxes or words that disagree give none unless a revision word ("wait") settles on the later
    one. Drafts inside a think block, in any model family's tags, never count."""
    text = think_tags(text)
    verdict, parts = parse_verdict(text), _answer_and_thinking(text)
    if parts is None:
        return Judgement(None, None, "unclosed_think")
    answer, stated = parts[0], _stated_verdict(unicodedata.normalize("NFKC", parts[0]))
    if verdict.reason == "conflicting_boxes" and (revised := _revised_box(answer)):
        return Judgement(revised, "box", "ok")  # "\\boxed{1} Wait, I made an error ... \\boxed{2}"
    if verdict.choice is None and stated and verdict.reason != "conflicting_boxes":
        return Judgement(stated, "phrase", "ok")  # "\\boxed{11} players ... Response 2 is better"
    if verdict.choice is None:
        reason = "no_box" if verdict.reason == "box_only_in_think" else verdict.reason
        return Judgement(None, None, reason)
    if {verdict.choice, stated} == {"1", "2"}:  # the box and the words name different responses
        box_at = answer.rfind("\\boxed")
        if _REVISION.search(answer, box_at):  # "\\boxed{1} On second thought, 2"
            return Judgement(stated, "phrase", "ok")
        said = [match.end() for match in _PHRASED_VERDICTS.finditer(answer, 0, box_at)]
        if said and _REVISION.search(
            answer, said[-1], box_at
        ):  # "2 is better. Wait, ... \\boxed{1}"
            return Judgement(verdict.choice, "box", "ok")
        return Judgement(None, None, "conflicting_boxes")
    return Judgement(verdict.choice, "box", "ok")


def _revised_box(answer: str) -> str | None:
    """The verdict of the last box when a revision marker stands between it and the last box
    of another verdict; None otherwise."""
    spans = [  # each box's start and the verdict it holds, in order
        (match.start(), choice)
        for match in re.finditer(r"\\boxed\s*\{", answer)
        if (contents := boxed_contents(answer[match.start() :]))
        and (choice := normalize_choice(contents[0])) in ("1", "2")
    ]
    last_at, last = spans[-1] if spans else (0, None)
    earlier = [at for at, choice in spans if choice != last]
    return last if earlier and _REVISION.search(answer, earlier[-1], last_at) else None


def _stated_verdict(answer: str) -> str | None:
    """The verdict stated in words, "1" or "2": the whole answer when it is an index alone, else
    the last statement, when every earlier one agrees or a `_SETTLES` word follows the last
    disagreeing one, and nothing `_UNDECIDED` follows it; None otherwise. Conditions and denials
    ("[[A]] if Assistant A is better") state nothing."""
    text = answer[-20_000:].translate(MARKUP)  # "**Response 1** is better"
    # its final statement outside any box, which is read as a box: "Answer: Response 2", tags
    for said in (text, "" if "\\boxed" in text else final_answer(text)):
        if bare := _INDEX.fullmatch(said.strip().rstrip(".!").strip().lower()):
            return _INDEX_MEANING[bare.group("i")]  # the answer is an index: "2", "Answer 2."
    stated = [
        (match, *_meaning(match))
        for match in _PHRASED_VERDICTS.finditer(text)
        if not _CONDITION.search(text, max(0, match.start() - 8), match.start())
        and not _DENIED.search(text, max(0, match.start() - 40), match.start())
        and not _UNDECIDED.search(text, _sentence_start(text, match.start()), match.start())
    ]
    if not stated:
        return None
    last, role, choice = stated[-1]
    rivals = [match for match, _, meaning in stated if meaning != choice]
    # "Overall Judgment: ..." settles on itself
    if rivals and role != "f" and not _SETTLES.search(text, rivals[-1].end(), last.start() + 1):
        return None
    return None if _UNDECIDED.search(text, last.end()) else choice


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding `at` starts, so a sentence undecided from its start ("It's hard
    to say which one is better: Response 1 is ...") states nothing."""
    return max(text.rfind(mark, 0, at) for mark in ".!?\n") + 1


def _meaning(match: re.Match[str]) -> tuple[str, str]:
    """(role, verdict) of a statement: its first group's role and the response it names, the
    other one for a loser."""
    name, word = next((key, value) for key, value in match.groupdict().items() if value)
    index = _INDEX_MEANING[word.lower()]
    return name[0], ("2" if index == "1" else "1") if name[0] == "l" else index
