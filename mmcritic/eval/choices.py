"""Which option a multiple-choice answer picks: the one letter reader every task shares.

It follows MMMU's official `parse_multi_choice_response` where that reads answers as a careful
grader does, but never picks a random letter, reads option texts as whole words, and picks none
for a letter that contradicts its option's text, a hedge or a stated inability (docs/scoring.md).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mmcritic.eval.answers import (
    EDGE_PUNCTUATION,
    NUMBER_WORDS,
    SPELLED,
    is_cut_off,
    option_words,
    plain_words,
    sentences_before_cut,
)
from mmcritic.eval.yes_no import yes_no, yes_or_no_alone
from mmcritic.reading.language import pattern, phrases
from mmcritic.reading.markup import CJK, MARKUP, fold, plain_math, without_html
from mmcritic.reading.statements import (
    COPULAS,
    LEADING_ARTICLE,
    english_gloss,
    main_clause,
    sentences,
    settled_part,
)
from mmcritic.reading.structure import HEDGE, reading_of

_OR, _AND, _ARTICLE = map(pattern, ("or_words", "and_words", "articles"))
_LEADING_LETTER = re.compile(
    r"([A-Z])\s*(?=\()|"  # "B（中期）": a letter, then its option's text in brackets
    rf"([A-Z])(?=[{CJK}、])|"  # "Aの葉緑体", "C、ダイヤモンド": a letter, then CJK or Hangul
    r"\(\s*([A-Za-z])\s*\)|([A-Za-z])\s*[.):](?!\w)|([A-Za-z])[ \t]*(?:\n|$)|([A-Z]):(?=\S)"
    r"|([A-HJ-Z])\s+[—–]\s"  # "C — gravity still acts at the top, ...": a capital, then a dash
    # "B, because ...": a capital and a comma before a rejection or a reason
    rf"|([A-Z]),\s*(?=(?:{pattern('rejections')}|{pattern('reason_words')})\b)"
)
# a letter in brackets of any kind is read as one in round brackets ("【B】" as "(B)")
_BRACKETS = str.maketrans("[【〔〖]】〕〗", "(((())))")
_OPTION_NOUN = rf"(?i:{pattern('option_nouns')})"
_NAMED_LETTER = re.compile(rf"({_OPTION_NOUN})\s+\(?([A-Za-z])\)?(?![\w'])")
# an option listed with a tick after it ("B. dog ✓"), and one declared the correct one
_TICKED_OPTION = re.compile(r"^\s*\(?([A-Z])\)?\s*[.:)][^\n]*?[✓✔☑✅]", re.MULTILINE)
_DECLARED_OPTION = re.compile(
    rf"{_OPTION_NOUN}\s*\(?([A-Z])\)?\s+{pattern('declared_right')}", re.IGNORECASE
)
# two letters offered as alternatives anywhere: "(A) Yes or (B) No", "it's between A and B"
_LETTER_ALTERNATIVES = re.compile(
    rf"\(?\b([A-Z])\b\)?(?:\s+[^\s()]{{1,20}})?,?\s+{_OR}\s+(?:{_OPTION_NOUN}\s+)?\(?\b([A-Z])\b\)?"
)
_PAIR = rf"\s+\(?([A-Z])\)?\s+(?i:{_AND})\s+\(?([A-Z])\)?(?!\w)"  # two letters: " A and (B)"
_BETWEEN_LETTERS = re.compile(rf"\b(?i:{pattern('between_words')}){_PAIR}")
_CLOSES = pattern("answer_ends")  # a word closing a stated answer: "정답은 C입니다"
# an answer's label alone, where a response was cut off: "Answer:", "The final answer is"
_ANSWER_LABEL = re.compile(rf"\s*{pattern('answer_phrases')}", re.IGNORECASE)


def _letter_mention(letter: str) -> re.Pattern[str]:
    """A letter named as an option: "(B)", " B ", " B.", " B)", " B:", " B," (line breaks read
    as spaces, as MMMU does), or in a sentence no space delimits ("黒です。D", "图形是A。")."""
    return re.compile(rf"(?<=[\s(。、{CJK}]){re.escape(letter)}(?=[\s.):,。，]|{_CLOSES})")


def _named_letters(text: str, letters: Sequence[str]) -> list[str]:
    """The letters the text names as options, in the order of `letters`."""
    return [x for x in letters if _letter_mention(x).search(f" {text} ")]


# a turn, commitment or conclusion: after an option's text it makes a later letter the pick
# ("..., but I'll go with B"); after a first sentence it voids that sentence's main-clause pick
_TURN_KINDS = ("turns", "concessions", "commitments", "option_nouns", "conclusions")
_TURN_OR_COMMITMENT = re.compile("|".join(map(pattern, _TURN_KINDS)), re.IGNORECASE)
# a capital that names a part of the figure, not an option: "Label B is the blade", "point A"
_DIAGRAM_LABEL = re.compile(rf"((?i:{pattern('figure_labels')})\s+)[A-Z]\b")
# what joins two options offered as alternatives: " or ", ", or (B) ", " or a "
_ALTERNATIVE = re.compile(rf"\W*(?:\(\s*[A-Z]\s*\))?\W*{_OR}\W*(?:{_ARTICLE}\s+)?", re.I)
# what precedes a mention the answer rejects ("not mitosis")
REJECTED_BEFORE = re.compile(
    rf"{pattern('rejections')}\s+(?:{pattern('articles', 'en')}\s+)?(?:{_OPTION_NOUN}\s+)?\(?$",
    re.I,
)
# the most characters a rejection spans ("not to be confused with the option (", whitespace
# runs as `markup.readable` shortens them)
_REJECTION_REACH = 200
# no pick at all: "so it could be either one"
_EITHER_ONE = re.compile(pattern("either_one"), re.IGNORECASE)
# what separates echoed options: punctuation, spaces, "and", "or", a unit ("A:110°\nB:70°")
_ECHO_SEPARATOR = re.compile(rf"[°%\s,;.]*(?:(?:{_AND}|{_OR})\s+)?")
# what follows a mention the answer sets against its pick or rules out: "(C) is incorrect"
_CONTRASTED_AFTER = re.compile(
    rf"\)?\s*(?:\(\s*[A-Z]\s*\))?\s*,?\s*(?:{pattern('contrasts')}|{pattern('ruled_out')})", re.I
)
_BOTH_LETTERS = re.compile(rf"\b(?i:{pattern('both_words')}){_PAIR}")
# a conclusion that no option is right: "none of them fits"
_NONE_FITS = re.compile(pattern("none_fits"), re.IGNORECASE)
# what an answer says it cannot tell: "I can't tell which layer is marked D"
_CAPITAL_LETTER = re.compile(r"\b[A-Z]\b")
_UNTOLD = re.compile(rf"\s+{pattern('embedded_questions')}\b[^,;.!?\n]*", re.IGNORECASE)
# an explanation after the main statement: "... is the grass, because it makes its own food"
_EXPLANATION = re.compile(rf",?\s+{pattern('explanations')}|\s+[—–]\s+", re.IGNORECASE)
# reasoning cut off at its next sentence's or clause's subject: "... background. The second image"
_DETERMINER = pattern("determiners")  # capitalised, or after a comma or a word
_SUBJECT_LEFT_OPEN = re.compile(
    rf"(?:[.!?]\s+(?:{pattern('opening_prepositions')}\s+[^,.!?\n]{{1,40}},\s+)?"
    rf"|,\s+{pattern('clause_joins')}\s+)"
    rf"(?:(?=[A-Z][a-z]*\s)(?i:{_DETERMINER})|(?<=[,a-z]\s){_DETERMINER})(?:\s+[\w'-]+){{1,3}}\s*$"
)
# a list of reasoning broken off at its next item's subject or name: "- ... door.\n- The umbrella"
_ITEM_LEFT_OPEN = re.compile(
    r"^\s*(?:[-*•]|\d[.)])\s[^\n]*[.!?]\s*\n\s*(?:[-*•]|\d[.)])\s+[\w'-]+(?:\s+[\w'-]+){0,3}\s*\Z",
    re.M,
)
_CLOSING_PUNCTUATION = EDGE_PUNCTUATION.replace(":", "").replace(",", "") + "\n\t—–"
# an option named last in a sentence: "so the answer is C"
_LETTER_AT_END = re.compile(rf"(?<![^\W{CJK}])(?<!')\(?([A-Z])\)?[.!。]?$")
# an option that is a value of digits and signs: "2/3", "1.5", "-4"
# the letters of a figure's labels as a range ("labelled A through F", "A–F"), not a path
# ("A-B-D-F"): no pick of either
_LETTER_RANGE = re.compile(
    rf"(?<![–—-])\b(?P<start>[A-Z])\s*(?:(?i:through|thru|{pattern('range_ends')})\s+|[–—-]\s*)"
    r"(?P<end>[A-Z])\b(?![–—-])"
)
# the reasons after an answer, at a line's or sentence's start: "\n\nReasoning: ..."
_REASONS = re.compile(rf"(?:^|(?<=[\n.!])\s*)(?:{pattern('reason_openers')})", re.IGNORECASE)
_NUMERIC = re.compile(r"[-−+]?\d[\d\s.,/:+−×÷*^()-]*%?")
# an option that is a formula, whose signs tell it from the others: "$y=-x^2+1$", "y = x^2 - 1"
_FORMULA = re.compile(r"\$?[\w\s.,/:+−×÷*()-]*[=^][\w\s.,/:+−×÷*^()=-]*\$?")
_BARE_LETTER = re.compile(r"\(?([A-Z])\)?[.)]?")
# the verb of a sentence stating what a label is: "It is the pupa", "Label F points to the liver"
_STATES = re.compile(rf"\s(?:{COPULAS}|{pattern('value_verbs')})\s", re.I)
_Hit = tuple[str, int, int]  # an option's text found in an answer: (letter, start, end)
_SEVERAL_LETTERS = re.compile(
    rf"\(?[A-Z]\)?(?:(?:\s*(?:,|\b(?:{_AND}|{_OR})\b|&|/)\s*|\s+)\(?[A-Z]\)?)+\.?", re.IGNORECASE
)


def option_letters(count: int) -> list[str]:
    """`A`, `B`, ... for `count` options."""
    return [chr(ord("A") + index) for index in range(count)]


@dataclass(frozen=True)
class Choice:
    """What an answer picks: the letter, or None and why (`how`). Only an answer that names nothing
    (`open`) may still state an option's value; a hedge, two options or an inability picks none."""

    letter: str | None
    how: str

    @property
    def open(self) -> bool:
        return self.letter is None and self.how == "none"


def choice_letter(text: str, letters: Sequence[str], options: Sequence[str] = ()) -> str | None:
    """The letter of the option an answer picks; None when it picks none."""
    return read_choice(text, letters, options).letter


def read_choice(text: str, letters: Sequence[str], options: Sequence[str] = ()) -> Choice:
    """The option an answer picks, and how it was read (`Choice.how`): the reading after a
    self-correction if that names an option; else a bare letter or option text; none for several
    letters, a hedge, inability or cut-off reasoning; else the opening letter, the first sentence's
    main clause or the last option named; never a random letter, so no score depends on chance."""
    core = without_html(plain_math(fold(text))).translate(MARKUP).translate(_BRACKETS)
    core = _without_untold(core)
    core = _LETTER_RANGE.sub(_spanned_labels, core)
    core = _NAMED_LETTER.sub(  # a letter named as an option in capitals: "choice a" as "choice (A)"
        lambda m: f"{m[1]} ({m[2].upper()})" if m[2].upper() in letters else m[0], core
    )
    options = [plain_math(fold(str(option))) for option in options]  # both in one notation
    if options == list(letters):  # the options are the figure's points: "Point A" names A
        core = _DIAGRAM_LABEL.sub(lambda label: label.group()[-1], core)
    # "The answer is (C). Wait — ... So the correct point is (B).": the reading after it, if any
    corrected = reading_of(core).after_last("correction")
    settled = None if corrected is None else _read(corrected, letters, options)
    return settled if settled and settled.letter else _read(core, letters, options)


def _without_untold(core: str) -> str:
    """An answer less the letters in what it says it cannot tell: none is a pick ("I can't tell
    which layer is marked D")."""
    for told in reversed(reading_of(core).marks("cannot_tell")):
        if untold := _UNTOLD.match(core, told.end):
            asked = _CAPITAL_LETTER.sub("", untold.group())
            core = core[: untold.start()] + asked + core[untold.end() :]
    return core


def _spanned_labels(found: re.Match[str]) -> str:
    """A range of three or more letters said without them ("A through F" as "labels"); a pair
    ("from A to B") stays, as it may name a path or an option."""
    spanned = ord(found["end"]) - ord(found["start"]) >= 2
    return "labels" if spanned else found.group()


def _read(core: str, letters: Sequence[str], options: Sequence[str]) -> Choice:
    """A bare letter, an option declared correct or named by its text; else the written pick of
    the answer without its echo of the option list."""
    # a trailing colon or comma stays: reasoning that stops on one is cut off ("3. Third image:")
    core = _without_closing_question(core).lstrip(EDGE_PUNCTUATION + "\n\t—–")
    core = core.rstrip(_CLOSING_PUNCTUATION)
    if len(core) == 1 and core.upper() in letters:  # "A" is A, even where C's text is "A"
        return Choice(core.upper(), "letter")
    for marked in (_TICKED_OPTION, _DECLARED_OPTION):  # the ticked ones, else those declared
        declared = {letter.upper() for letter in marked.findall(core)} & set(letters)
        if len(declared) > 1:
            return Choice(None, "several")  # two options ticked
        if declared:  # "Option (B) is correct; (A) ... are not"
            return Choice(declared.pop(), "declared")
    named = _option_by_text(core, letters, options)
    if named is not None:
        return Choice(named, "option_text")
    core = _without_option_echo(core, letters, options)
    return _written_pick(core, letters, options) if core else Choice(None, "option_list")


def _without_closing_question(core: str) -> str:
    """An answer less a question it closes on after a statement ("... not visible in the
    frames. Could you provide more frames from the final laps?"): that asks the user for
    something and picks nothing."""
    said = sentences(core.rstrip())
    if len(said) < 2 or not said[-1].endswith("?"):
        return core
    return core[: core.rstrip().rfind(said[-1])]


def _written_pick(core: str, letters: Sequence[str], options: Sequence[str]) -> Choice:
    """A written answer's leading letter, also before its own option's text ("(A) D B E A C"),
    unless it names several, hedges between two or was cut off; else what its reasoning picks."""
    own = _with_own_text(core, letters, options)
    if own is not None:
        return Choice(own, "leading")
    if _SEVERAL_LETTERS.fullmatch(core) and len(set(re.findall("[A-Z]", core.upper()))) > 1:
        return Choice(None, "several")
    # two letters offered as alternatives, with no letter named after them: "likely either B or D"
    offered = [
        match.end()
        for offer in (_LETTER_ALTERNATIVES, _BETWEEN_LETTERS)
        for match in offer.finditer(core)
        if match[1] != match[2] and {match[1], match[2]} <= set(letters)
    ]
    if offered and not _named_letters(core[max(offered) :], letters):
        return Choice(None, "hedge")
    letter, end = ("", 0) if _weighs_options(core, letters) else _opening_letter(core)
    concluded = _concluded_letter(core, letters, options) if letter else None
    if concluded not in (None, letter):
        return Choice(concluded, "concluded")  # "(A) 1/2 would need ..., so it is 1/4, option C"
    if letter and letter in letters:
        # the words after it are the whole text of another option: "(D) 3" where 3 is option A
        words = option_words(core[end:].split("\n", 1)[0])
        named = [x for x, o in zip(letters, options, strict=False) if words == option_words(o)]
        if words and named and letter not in named:
            return Choice(None, "contradiction")
        return Choice(letter, "leading")
    # two options named at once ("so both A and B are correct"), unless an option says so
    both = _BOTH_LETTERS.search(core)
    if (
        both
        and {both[1], both[2]} <= set(letters)
        and not any(option_words(both[0]) in option_words(o) for o in options)
    ):
        return Choice(None, "several")
    if _cut_off_reasoning(core, letters):
        return _concluded_before_cut(core, letters, options)
    return _reasoned_pick(core, letters, options)


def _concluded_before_cut(core: str, letters: Sequence[str], options: Sequence[str]) -> Choice:
    """The pick the whole sentences of a cut-off answer conclude on, when the cut one revises
    nothing ("15, which corresponds to option B. To double-check, ... 11, 13,"); else none, as
    for "... Now this 6 Ω branch is in parallel with the"."""
    whole = sentences_before_cut(core)
    said = " ".join(whole)
    settled = _read(said, letters, options) if said else None
    labelled = _ANSWER_LABEL.fullmatch(sentences(core)[-1])  # "... gives 2:15. Answer:"
    # a first sentence naming the option's text states it ("It is the pupa (chrysalis). During
    # this stage, ... and", "Label F points to the small intestine, which ... The large"): what
    # follows explains it; not one computing a step ("... in parallel: 6·3/(6+3) = 2 Ω.")
    computes = re.search(r"\d", said) is not None
    named = settled and (
        settled.how == "option_text" or (settled.how == "main_clause" and not computes)
    )
    first = len(whole) == 1 and named
    first = first and _STATES.search(said) is not None  # not "First, the egg hatches."
    concluded = settled and (
        labelled or first or settled.how in ("concluded", "labelled", "declared")
    )
    return settled if concluded else _picked_before_reasons(core, letters, options)


def _picked_before_reasons(core: str, letters: Sequence[str], options: Sequence[str]) -> Choice:
    """The pick an answer states before the reasons for it, when those are cut off ("**Answer: B
    (9:35)**\n\nReasoning: In a mirror image ..., which are"): reasons that break off take back
    nothing; else none."""
    reasons = _REASONS.search(core)
    picked = (
        _read(core[: reasons.start()], letters, options) if reasons and reasons.start() else None
    )
    return picked if picked and picked.letter else Choice(None, "cut_off")


def _concluded_letter(core: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The letter a closing conclusion ends on ("A. Hmm, the arrow bends left, so B."), if any."""
    parts = reading_of(core).parts("conclusion")
    if len(parts) < 2:
        return None
    bare = _BARE_LETTER.fullmatch(parts[-1].strip(EDGE_PUNCTUATION))
    return bare[1] if bare and bare[1] in letters else _closing_letter(parts[-1], letters, options)


def _closing_letter(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The letter a closing statement ends on, alone or with its own text ("this is B. Body-centered
    cubic."), if it is the only letter named, not rejected nor negated, and not all it says."""
    text = text.rstrip(_CLOSING_PUNCTUATION)
    for letter, option in zip(letters, options, strict=False):
        own = re.search(rf"\(?{letter}\)?[.:)]?\s*{re.escape(option)}$", text, re.I)
        text = text[: own.start()] + letter if own else text
    last = _LETTER_AT_END.search(text)
    if last is None or not text[: last.start()].strip() or rejected_before(text, last.start()):
        return None  # a letter alone after a statement may contradict it: "... left. (B)"
    negation = reading_of(text).last("negation")  # "so it cannot be A", not "not used"
    if negation is not None and len(text[negation.end : last.start()].split()) <= 2:
        return None
    named = _named_letters(text, letters)
    return last.group(1) if named == [last.group(1)] else None


def _reasoned_pick(core: str, letters: Sequence[str], options: Sequence[str]) -> Choice:
    """The option a reasoned answer settles on: for the options yes and no, when it names no
    letter, the yes/no reader's ("Yes, the graph has no breaks" is yes); none where it hedges
    or gives up; else the labelled one, its main clause's, or its last mention."""
    # each option's yes or no in any language, as written ("Sí"; its plain words drop the accent)
    said_by = [yes_or_no_alone(option) for option in options]
    if sorted(map(str, said_by)) == ["no", "yes"] and not _named_letters(core, letters):
        said = yes_no(core)  # "是的，...", options "Oui" and "Non"
        if said in said_by:
            return Choice(letters[said_by.index(said)], "yes_no")
    last = (sentences(core) or [""])[-1]
    concluded = _concluded_letter(core, letters, options) or _closing_letter(last, letters, options)
    if concluded is not None:
        return Choice(concluded, "concluded")  # "Removing 1, 3, 5 or 7 ... So it is 4, option C"
    long_answer = len(option_words(core).split()) > 5
    text_hits = _option_text_hits(core, letters, options) if long_answer else []
    spans = itertools.pairwise(sorted((start, end) for _, start, end in text_hits))
    if (
        # two options' texts offered as alternatives: "either increase or decrease"
        any(_ALTERNATIVE.fullmatch(core[end:start]) for (_, end), (start, _) in spans)
        or _offers_two(core, letters, options)
        # two options named and another allowed as well: "..., so B could also work"
        or (HEDGE.search(core) and len(_mentions(core, letters, text_hits)) > 1)
        or _EITHER_ONE.search(core)
    ):
        return Choice(None, "hedge")
    if _ends_unable(last, letters, options):
        return Choice(None, "unable")
    # a letter alone on the last line after reasoning through the options by their letters
    reasoning, _, closing_line = core.rstrip(_CLOSING_PUNCTUATION).rpartition("\n")
    closing = _BARE_LETTER.fullmatch(closing_line.strip())
    if closing and closing[1] in letters and len(set(_named_letters(reasoning, letters))) > 1:
        return Choice(closing[1], "closing")  # "... overcast (B), but ... that is fog.\n\n**D**"
    picked = _labelled_pick(core, letters, options)
    picked = picked or (_main_clause_pick(core, letters, options) if long_answer else None)
    return picked or _last_mention(core, letters, options, text_hits)


def _ordinal_option(core: str, letters: Sequence[str], options: Sequence[str]) -> Choice | None:
    """Of options that differ only by an ordinal ("the first image"), the one the answer names."""
    said = reading_of(core).said("ordinal")
    readings = [reading_of(option_words(option)) for option in options]
    places = {tuple(reading.parts("ordinal")) for reading in readings}
    if len(said) != 1 or len(places) != 1 or len(places.pop()) != 2:
        return None  # "Perfect fifth or octave": the ordinal is part of an option's name
    named = [x for x, r in zip(letters, readings, strict=False) if r.said("ordinal") == said]
    return Choice(named[0], "ordinal") if len(named) == 1 else None


def _last_mention(
    core: str, letters: Sequence[str], options: Sequence[str], text_hits: list[_Hit]
) -> Choice:
    """The option the answer names last, by letter or text, unless the one option whose text it
    names before that is another ("moving left ... (B)" where left is option A); with none named,
    the one option all of whose words a long answer uses, or the one it names by its ordinal."""
    hits = _mentions(core, letters, text_hits)
    if not hits:
        used = option_words(core).split()
        texts = [set(option_words(option).split()) for option in options]
        covered = [x for x, text in zip(letters, texts, strict=False) if text and text <= set(used)]
        if len(used) > 5 and len(covered) == 1:
            return Choice(covered[0], "covered")
        return _ordinal_option(core, letters, options) or Choice(None, "none")
    picked = max(hits, key=hits.__getitem__)
    named = {
        letter
        for letter, _, end in text_hits
        if not _TURN_OR_COMMITMENT.search(core[end : max(end, hits[picked])])
    }
    if len(named) == 1 and picked not in named:
        return Choice(None, "contradiction")
    return Choice(picked, "mention")


def _mentions(core: str, letters: Sequence[str], text_hits: list[_Hit]) -> dict[str, int]:
    """Where the answer last names each option it names, by letter or by text, leaving out
    quoted option texts, diagram labels and rejected letters ("A, not B (right)")."""
    padded = f" {_blanked(core, text_hits)} "  # positions in the answer's own coordinates
    hits: dict[str, int] = {}
    for letter in letters:
        for m in _letter_mention(letter).finditer(padded):
            if not (rejected_before(padded, m.start()) or _CONTRASTED_AFTER.match(padded, m.end())):
                hits[letter] = m.start() - 1
    for letter, start, _ in text_hits:
        hits[letter] = max(hits.get(letter, -1), start)
    return hits


def _without_option_echo(core: str, letters: Sequence[str], options: Sequence[str]) -> str:
    """The answer without an echo of the option list: two or more options in their order, each
    as its letter and its whole text ("A: cooking\nB: painting a wall")."""
    labelled = [
        re.compile(rf"\(?{letter}\s*[.:)]\s*{_text_pattern(option)}(?![\w-])", re.I)
        for letter, option in zip(letters, options, strict=False)
        if plain_words(option)
    ]
    echoes: list[tuple[int, int]] = []
    for first, label in enumerate(labelled):
        for start in label.finditer(core):
            if any(a <= start.start() < b for a, b in echoes):
                continue  # inside an echo that began with an earlier option
            end = start.end()
            for following in labelled[first + 1 :]:
                nxt = following.match(core, _ECHO_SEPARATOR.match(core, end).end())
                if nxt is None:
                    break
                end = nxt.end()
            if end > start.end():  # the next option followed
                echoes.append((start.start(), end))
    for start, end in sorted(echoes, reverse=True):
        core = core[:start] + core[end:]
    return core.strip()


def _option_by_text(core: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The option an answer names by its text: the whole text, after an article or not ("The
    troposphere", not "A. ..."); else, in an answer that opens with no letter, of five words or
    fewer the one option whose whole text it holds ("third quarter moon"), of three or fewer words
    the one whose text holds them in a row, not after a value, ("Center pivot" for "Center-pivot
    irrigation")."""
    said = option_words(core)
    bare = option_words(LEADING_ARTICLE.sub("", core.strip()))
    for letter, option in zip(letters, options, strict=False):
        if _FORMULA.fullmatch(option.strip()):  # by its signs too: "y = -x^2 + 1"
            if _written(option) == _written(core):
                return letter
        elif said and option_words(option) in (said, bare):
            return letter
    words = said.split()
    if _LEADING_LETTER.match(core):
        return None
    gloss = None if _named_letters(core, letters) else english_gloss(core)  # "nach rechts"
    glossed = [
        x
        for x, o in zip(letters, options, strict=False)
        if gloss and f" {option_words(gloss)} " in f" {option_words(o)} "  # "Turn left"
    ]
    if len(glossed) == 1:
        return glossed[0]
    # a hedge ("Transpiration or respiration") and a letter ("Hydrogen (A)", not "Label A") are
    # read elsewhere
    short = 0 < len(words) <= 5 and not any(re.fullmatch(_OR, word) for word in words)
    hits = {x for x, _, _ in _option_text_hits(core, letters, options)} if short else set()
    if len(hits) == 1 and not _named_letters(_blanked(core, []), letters):
        return hits.pop()
    part = LEADING_ARTICLE.sub("", said)
    if any(word.upper() in letters for word in words) or not part or len(part.split()) > 3:
        return None
    holding = [
        letter
        for letter, option in zip(letters, options, strict=False)
        if f" {part} " in f" {option_words(option)} "
        # a value is no part of a sum: "2π" names no "16-2π"
        and not re.search(rf"[\dπ√] {re.escape(part)} ", f" {option_words(option)} ")
    ]
    return holding[0] if len(holding) == 1 else None


def _offers_two(core: str, letters: Sequence[str], options: Sequence[str]) -> bool:
    """Whether what the answer settles on offers alternatives in a sentence's main clause that
    name an option or hold an option's value ("roughly 8, or maybe 9" with 8 an option); a range
    in reasoning or in a clause of context, or one that is an option's own text, offers none."""
    values = {plain_words(option) for option in options} - {""}
    for sentence in sentences(settled_part(core)):
        hits = _option_text_hits(sentence, letters, options)
        offered = [
            mark
            for mark in reading_of(main_clause(sentence)).marks("alternatives")
            if not any(start <= mark.start and mark.end <= end for _, start, end in hits)
        ]
        holds_value = any(values & set(plain_words(mark.text).split()) for mark in offered)
        if offered and (holds_value or _mentions(sentence, letters, hits)):
            return True
    return False


def _main_clause_pick(core: str, letters: Sequence[str], options: Sequence[str]) -> Choice | None:
    """The one option the first sentence's main clause names if no turn or conclusion follows."""
    parts = sentences(core)
    if (
        not parts
        or _TURN_OR_COMMITMENT.search(core)
        or _weighs_options(core, letters)  # "A: ... C: ... so B"
        or reading_of(parts[0]).has("negation")
        or _BARE_LETTER.fullmatch(parts[-1].strip(EDGE_PUNCTUATION))  # "...\n\nA": its pick
        or _with_own_text(parts[-1].strip(EDGE_PUNCTUATION), letters, options)  # "(B) Point B"
    ):
        return None
    clause = main_clause(_EXPLANATION.split(parts[0], maxsplit=1)[0])
    text_hits = _option_text_hits(clause, letters, options)
    hits = {letter for letter, _, _ in text_hits}
    hits |= set(_named_letters(_blanked(clause, text_hits), letters))
    return Choice(hits.pop(), "main_clause") if len(hits) == 1 else None


def _labelled_pick(core: str, letters: Sequence[str], options: Sequence[str]) -> Choice | None:
    """The one option the answer names by its text and then its own letter ("into the pupa, which
    is option B", "A-B-D-F (option A)"), rejected and contrasted mentions aside."""
    labelled = {
        letter
        for letter, _, end in _text_mentions(core, zip(letters, options, strict=False))
        if re.match(
            rf"\s*\(\s*(?:{_OPTION_NOUN}\s+\(?)?{letter}\s*\)|,?\s*{pattern('naming_clauses')}\s+{_OPTION_NOUN}\s+"
            rf"\(?{letter}\b",
            core[end:],
        )
    }
    return Choice(labelled.pop(), "labelled") if len(labelled) == 1 else None


def _cut_off_reasoning(core: str, letters: Sequence[str]) -> bool:
    """Whether the answer is reasoning cut off mid-sentence ("... in parallel with the") or at the
    next sentence's or item's subject; not a final letter, an answer repeated to the limit nor one
    cut off as it repeats a sentence."""
    parts = sentences(core)
    if len(parts) < 2 or core.split()[-1].strip(EDGE_PUNCTUATION) in letters:
        return False
    repeated = max(parts.count(part) for part in parts)
    looped = any(part.startswith(parts[-1]) for part in parts[:-1])  # "... is metamor"
    left_open = _SUBJECT_LEFT_OPEN.search(core.rstrip().splitlines()[-1])
    cut = is_cut_off(core) or bool(left_open or _ITEM_LEFT_OPEN.search(core))
    return cut and repeated < 3 and not looped


def _weighs_options(core: str, letters: Sequence[str]) -> bool:
    """Whether the answer corrects itself or its sentences open with two or more options' letters
    in turn ("A (9) would be 3 cuts. C (15) is 5 cuts. ..."): its first letter is no pick."""
    opened = {_opening_letter(sentence)[0] for sentence in sentences(core)}
    return reading_of(core).has("correction") or len(opened & set(letters)) > 1


def _opening_letter(core: str) -> tuple[str, int]:
    """The letter an answer opens with, marked as one (`B.`, `(B)`, `B:`), in capitals, and
    where its mark ends; ("", 0) when it opens with none."""
    leading = _LEADING_LETTER.match(core)  # one group matches, the last to close
    return (leading[leading.lastindex].upper(), leading.end()) if leading else ("", 0)


def _ends_unable(last: str, letters: Sequence[str], options: Sequence[str]) -> bool:
    """Whether an answer's last sentence says it cannot tell ("I cannot determine which one is
    correct."), or that no option is right, and names no option after that; unless an option is
    itself "cannot be determined": saying so may choose it."""
    if any(reading_of(option.lower()).has("cannot_tell") for option in options):
        return False
    told = reading_of(last.lower()).first("cannot_tell")
    none_fits = _NONE_FITS.search(last)
    end = told.end if told else (none_fits.end() if none_fits else None)
    return end is not None and not _named_letters(last[end:], letters)


def _with_own_text(core: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The letter an answer opens with when the rest is that option's whole text."""
    letter, end = _opening_letter(core)
    if not letter or letter not in letters or len(options) < len(letters):
        return None
    own = option_words(options[list(letters).index(letter)])
    return letter if own and option_words(core[end:]) == own else None


def _option_text_hits(core: str, letters: Sequence[str], options: Sequence[str]) -> list[_Hit]:
    """(letter, start, end) of the last mention of each option's text, leaving out one inside a
    longer option's ("2" inside "2√3"), one that two options' texts both match (texts that differ
    only in a sign) and single-character options (the letter patterns read those)."""
    named = [(x, o) for x, o in zip(letters, options, strict=False) if len(plain_words(o)) > 1]
    found = _text_mentions(core, named)
    last: dict[str, _Hit] = {}
    for hit in found:
        inside = any(a <= hit[1] and hit[2] <= b and b - a > hit[2] - hit[1] for _, a, b in found)
        shared = any(x != hit[0] and (a, b) == hit[1:] for x, a, b in found)
        if not inside and not shared:
            last[hit[0]] = hit
    return list(last.values())


def _text_mentions(core: str, named: Iterable[tuple[str, str]]) -> list[_Hit]:
    """Every mention of an option's text as whole words (case, punctuation and number words
    aside) that the answer neither rejects ("not mitosis") nor sets against its pick."""
    return [
        (letter, match.start(), match.end())
        for letter, option in named
        if plain_words(option)
        # not "three-pointers"
        for match in re.finditer(rf"(?<!\w){_text_pattern(option)}(?!\w|-\w)", core, re.I)
        if not (rejected_before(core, match.start()) or _CONTRASTED_AFTER.match(core, match.end()))
    ]


def rejected_before(text: str, at: int) -> bool:
    """Whether the text rejects what it names at `at` ("not mitosis"). Only the last
    `_REJECTION_REACH` characters before it are searched, so an answer that names an option
    thousands of times is read in linear time, not from its start for each mention."""
    return REJECTED_BEFORE.search(text, max(0, at - _REJECTION_REACH), at) is not None


def _written(formula: str) -> str:
    return "".join(formula.split()).strip("$.")


def _text_pattern(option: str) -> str:
    """An option's text as a pattern of its words: any punctuation or spacing between them, the
    last word also in the plural ("bevel gears" names "Bevel gear"), and a leading "the" or "an"
    of a longer text as any article or none (a leading "a" stays: "A" may be a letter). A value
    of digits and signs, or a formula, is its own signs ("2/3" is not "2 × 3", "y=-x^2+1" not
    "y=x^2-1")."""
    if _NUMERIC.fullmatch(option.strip()) or _FORMULA.fullmatch(option.strip()):
        return r"\s*".join(re.escape(char) for char in option.strip("$ ") if not char.isspace())
    said = plain_words(option).split()
    article = len(said) > 1 and len(said[0]) > 1 and said[0] in phrases("en", "articles")
    forms = [(word, NUMBER_WORDS.get(word), SPELLED.get(word)) for word in said[article:]]
    words = [f"(?:{'|'.join(re.escape(form) for form in each if form)})" for each in forms]
    if words and said[-1].isalpha():
        words[-1] += "(?:e?s)?"
    return (rf"(?:{pattern('articles', 'en')}\W+)?" if article else "") + r"\W+".join(words)


def _blanked(core: str, hits: list[_Hit]) -> str:
    """The answer, its length kept, with the option texts it quotes and the letters of diagram
    labels ("Label A: anther") blanked, so a capital in one ("A and B have ...") is no pick."""
    for _, start, end in hits:
        core = core[:start] + " " * (end - start) + core[end:]
    return _DIAGRAM_LABEL.sub(lambda m: m.group(1) + " ", core)
