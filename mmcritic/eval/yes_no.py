"""Yes or no, as a careful grader reads the answer to a yes/no question (HallusionBench,
yes/no golds in ChartQA and RealWorldQA)."""

from __future__ import annotations

import re

from mmcritic.eval.answers import EDGE_PUNCTUATION
from mmcritic.reading.language import pattern, words
from mmcritic.reading.markup import MARKUP, fold
from mmcritic.reading.statements import APOLOGY, QUOTED, ordered_content_words
from mmcritic.reading.structure import HEDGE, YES_NO, Reading, reading_of

# an answer opening by saying it cannot tell: "I'm not sure" (matched lower-cased)
_UNCLEAR = re.compile("^" + pattern("unclear_openings"))
# a negated conclusion ("so Tokyo is not"), searched only up to the next conclusion word: that
# one's own search reads the same, and a run of them is not scanned to its end from each
_CONCLUDING = pattern("conclusions")
_NEGATED_CONCLUSION = re.compile(rf"{_CONCLUDING}(?:(?!{_CONCLUDING})[^.;])*?{pattern('denials')}")
# a comparison asked ("Is the left circle larger than ...?") and an answer of sameness
_COMPARATIVE, _SAME = re.compile(pattern("comparatives")), re.compile(pattern("sameness"))
# what frames a question's claim ("really", "in the figure") and what opens it with its source
_FRAMING_WORDS = frozenset(words("framing_words"))
_SOURCE = re.compile(rf"^\s*{pattern('source_openings')}\s+[^,?]{{1,80}},\s*", re.I)
# a sentence that asks the question again rather than answering it
_ASKS_ITSELF = re.compile(rf"\b{pattern('indirect_questions')}\b")
# words that change the claim they are added to: "the second tallest", "almost equal"
_QUALIFIERS = frozenset(words("ranks") + words("qualifiers"))
# "yes and no", "yes or no": both, so neither
_BOTH = "both"
_YES, _NO, _OR, _AND = map(pattern, ("yes_words", "no_words", "or_words", "and_words"))
_BOTH_YES_NO = re.compile(rf"^(?:{_YES}|{_NO})\s+(?:{_AND}|{_OR})\s+(?:{_YES}|{_NO})\b")
_ANY_YES_NO = re.compile(rf"\b(?P<yes>{_YES})\b|(?P<no>\b{_NO}\b|{pattern('denials')})")
# "possibly yes, possibly no", "it may or may not be": both offered, neither chosen
_OR_MAYBE = rf"\W+(?:(?:{_OR}|{pattern('maybe_words')})\s+)+"
_YES_OR_NO = re.compile(
    rf"\b{_YES}{_OR_MAYBE}{_NO}\b|\b{_NO}{_OR_MAYBE}{_YES}\b"
    rf"|\b(?P<modal>{pattern('modals')})\s+{_OR}\s+(?P=modal)\s*{pattern('not_words')}\b"
    rf"|^(?:{pattern('maybe_words')})\W+(?:{_YES}|{_NO})\W*$"  # a closing "Possibly yes."
)
# yes or no opening an answer, in any language read here: "Nein.", "That's correct." (a bare
# Spanish "si" only before punctuation: it is also "if")
_LEADING_YES_NO = re.compile(
    rf"^(?:(?P<no>{pattern('no_openings')})|(?P<yes>{pattern('yes_openings')}))"
)


# a word leaning toward the yes or no right after it: "Probably yes"
_LEANS = re.compile(rf"\b(?:{pattern('leans')})\W*$")
# an answer that opens by saying it was given no figure: its "no" answers nothing
_NO_FIGURE = re.compile(pattern("missing_figures"), re.IGNORECASE)


def yes_no(text: str, question: str = "") -> str | None:
    """`yes`, `no` or `unclear` as a careful grader reads a yes/no answer, or None: after any
    self-correction, `unclear` when it ends on both or unable to tell, else what it settles on
    after a turn, its opening word, the first yes or no, or given the question, sameness (no) or
    the question's claim (yes). docs/scoring.md (the *yes/no* reader) gives each rule."""
    core = reading_of(_answer_core(text))
    last_sentence = re.split(r"(?<=[.!?])\s+", core.text)[-1]
    # a last sentence unable to tell, after naming both yes and no or neither, or after saying
    # it has no figure ("Sorry, but there is no chart provided, so I can't determine ..."), or
    # offering both
    no_figure = _NO_FIGURE.match(APOLOGY.sub("", core.text))
    named_one = len(core.said("yes_no")) == 1 and not no_figure
    unable = not named_one and reading_of(last_sentence).has("cannot_tell")
    if unable or _YES_OR_NO.search(last_sentence):
        return "unclear"  # "It could be yes ..., so it might be no. I can't say for sure."
    if (closing := yes_or_no_alone(last_sentence)) is not None:
        return closing  # "If it were ..., but there is no mark. ... so every angle is 60°. Yes."
    settled = _settled_reading(core, question)
    if settled is not None:  # "I can't see any image, but ...: yes, Sydney is ..."
        return settled
    opening = _opening_reading(core.text)
    if opening is not None:  # unless it concludes the other way: "No. Hmm, ..., so yes."
        return None if opening == _BOTH else _concluded(core) or opening
    if (anywhere := _reading_anywhere(core, question)) is not None:
        return anywhere
    # the question's claim as the answer quotes it: "... the sign does say "STOP"."
    return "yes" if _restates_claim(_answer_core(text, keep_quotes=True), question) else None


def _answer_core(text: str, keep_quotes: bool = False) -> str:
    """The answer lower-cased in plain words, quotes taken out unless `keep_quotes` (a quoted "No
    Parking" says no "no"), and after a self-correction only what follows it ("Yes. Wait, ... So
    no, it is not.")."""
    unquoted = fold(text) if keep_quotes else QUOTED.sub(" ", fold(text))
    core = " ".join(unquoted.translate(MARKUP).lower().strip(EDGE_PUNCTUATION).split())
    corrected = reading_of(core).after_last("correction")
    return core if corrected is None else corrected.strip(EDGE_PUNCTUATION)


def yes_or_no_alone(text: str) -> str | None:
    """`yes` or `no` where the text is that word alone in a listed language ("Sí.", "Nope")."""
    found = YES_NO.fullmatch(text.strip(EDGE_PUNCTUATION).lower())
    return found.lastgroup if found else None


def _opening_reading(core: str) -> str | None:
    """What the answer's opening says: yes, no or unclear in any language read here, `_BOTH`
    for an answer that says both ("Yes and no"); None when it opens with neither."""
    if _UNCLEAR.match(APOLOGY.sub("", core)):
        return "unclear"
    bare = {yes_or_no_alone(part) for part in re.split(r"[.!?;]", core)}
    if _BOTH_YES_NO.match(core) or {"yes", "no"} <= bare:
        return _BOTH
    leading = _LEADING_YES_NO.match(core)
    if leading is None:
        return None
    # "Yes, in this chart Delhi is at the top, so Tokyo is not ..." is no
    says_yes = leading.group("yes") and not _NEGATED_CONCLUSION.search(core, leading.end())
    return "yes" if says_yes else "no"


def _reading_anywhere(core: Reading, question: str) -> str | None:
    """An answer opening with neither yes nor no: unable to tell, else the one yes or no it
    states, else the first anywhere (a "not" too), else what it says of the question's claim."""
    if core.has("cannot_tell"):
        return "unclear"
    said = core.said("yes_no")
    if len(said) == 1:
        return said.pop()  # "2013 is 40, not the tallest. ... so yes, 2015 is the tallest."
    concluded = _concluded(core)
    if concluded is not None:
        return concluded  # "60? Also no, ... both acute angles are 45, so yes, x = 45."
    anywhere = _ANY_YES_NO.search(core.text)
    if anywhere:
        return "yes" if anywhere.group("yes") else "no"
    if _COMPARATIVE.search(question.lower()) and _SAME.search(core.text):
        return "no"  # "Both circles are the same size." for "Is the left one larger ...?"
    return "yes" if _restates_claim(core.text, question) else None


def _concluded(core: Reading) -> str | None:
    """The yes or no the answer's last conclusion opens with ("..., so yes, x = 45"), when it
    is the answer's last and stands alone ("so no other bar" states no "no")."""
    conclusion, answer = core.last("conclusion"), core.last("yes_no")
    if conclusion is None or answer is None or answer.start < conclusion.end:
        return None
    alone = core.text[answer.end : answer.end + 1] in ",.!;"
    opens = not core.text[conclusion.end : answer.start].strip(" ,")
    return answer.says if alone and opens else None


def _settled_reading(core: Reading, question: str) -> str | None:
    """What an answer settles on after its last turn ("but"): an explicit yes or no, a hedge
    (unclear), or for a comparison that the two are the same (no); else None."""
    turn = core.last("yes_no_turn")
    if turn is None:  # "Probably yes, though ..., so it could also be another word": unclear
        said = core.first("yes_no")
        leaning = said is not None and _LEANS.search(core.text, 0, said.start)
        return "unclear" if leaning and HEDGE.search(core.text, said.end) else None
    explicit = core.first("yes_no", turn.end)
    if explicit:
        return explicit.says
    if HEDGE.search(core.text, turn.end):
        return "unclear"  # "The left bar might be taller, but they could also be the same."
    if _COMPARATIVE.search(question.lower()) and _SAME.search(core.text, turn.end):
        return "no"
    return None


def _restates_claim(answer: str, question: str) -> bool:
    """Whether a sentence of the answer asserts the claim a yes/no question asks about: every
    content word of the question, framing ("in the figure") aside, in the question's order
    ("Samsung shipped more than Apple" does not restate "Did Apple ship more than Samsung?")."""
    claim = _SOURCE.sub("", question)  # "According to the chart, is ...?" asks "is ...?"
    asked = [w for w in _ordered_words(claim) if w not in _FRAMING_WORDS]
    if not asked:
        return False
    for sentence in re.split(r"[.!?;]", answer):
        said = _ordered_words(sentence)
        if _ASKS_ITSELF.search(sentence) or not set(asked) <= set(said):
            continue  # "To determine whether the ball is falling, ..." asserts nothing
        if (set(said) - set(asked)) & _QUALIFIERS:
            continue  # "The red bar is the second tallest." for "Is the red bar the tallest?"
        positions = [said.index(word) for word in asked]
        if positions == sorted(positions):
            return True
    return False


def _ordered_words(text: str) -> list[str]:
    return list(dict.fromkeys(ordered_content_words(text)))
