"""Where a free-text answer states its answer: which sentence, which clause, whether it commits.

A careful grader reads the value the main clause states, what trails it ("..., rising to 26.5%
in 2014") as context, and of several sentences the one restating the question. An answer that
offers alternatives or turns from a first reading commits to what it settles on, or to nothing.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable

from mmcritic.reading.language import glosses, pattern, short_forms, words
from mmcritic.reading.markup import CJK
from mmcritic.reading.structure import HEDGE, reading_of

# the copulas of every language ("is", "est"); one with spaces around it ends a clause's subject
COPULAS = "|".join(re.escape(copula) for copula in words("copulas"))
_COPULA_SPLIT = re.compile(rf"\s(?:{COPULAS})\s")
# what sets a value beside another: "compared with 2019", "followed by Spain"
COMPARISONS = pattern("comparisons")
# a clause that adds context after the main one: ", rising to 26.5% ..." (`context_openers`);
# not the last value of a list: "are 45, 30, and 25, so ..."
_OPENERS = "|".join(opener.replace(" ", r"\s+") for opener in words("context_openers"))
_CONTEXT_CLAUSE = re.compile(
    rf",\s*(?!{pattern('and_words')}\s+[$€£]?-?\d[\d.,]*%?\s*(?:[,.;]|$))(?:{_OPENERS})\b"
    rf"|\s+{COMPARISONS}\s",
    re.IGNORECASE,
)
# context set between a subject and its verb, which ends no clause: "The letter, dated 1982, is"
_ENCLOSED_CONTEXT = re.compile(rf",\s*(?:{_OPENERS})\b[^,;:]{{1,40}},\s+(?=(?:{COPULAS})\s)", re.I)
# a phrase that opens a sentence with its context: "According to the chart, ...", "Of the 6
# samples listed, ..."; a gerund opens one with its object or a preposition ("Adding the tax"),
# not as a noun that is the subject ("Spending rose from ...")
_LEADING_CONTEXT = re.compile(
    rf"^{pattern('leading_context')}\b"
    r"(?:[^,;:.]|(?<=\d)[.,](?=\d)){1,80},\s+(?=\S)"
)
# a category's label holding digits: "18-29", "65+", "Q3", not a plain number or "2019"
_DIGIT_LABEL = re.compile(r"(?<![\w.,])(?:\d+(?:[-–/]\d+|\+)|[A-Z]+\d+)(?![\w.,%]|[-–/]\d)")
# a verb that says what follows its colon: "The subject line reads: Budget Revision"
_SAYS_WHAT_FOLLOWS = re.compile(rf"\s(?:{COPULAS}|{'|'.join(words('answer_leads'))})$", re.I)
_SHORT_FORMS = short_forms()
_SHORT_FORM = re.compile(rf"\b({'|'.join(map(re.escape, _SHORT_FORMS))})\b\.?", re.IGNORECASE)
_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=[\"'“(]?[A-Z0-9\u4e00-\u9fff])|(?<=[。！？；])|\s*;\s+|\n+"
)
# words whose abbreviation ends with a period ("Dr.", "Inc.", "Sept."), and an initial (not a
# code's last letter: "Job No. 4471-B. This number ..."), which end no sentence
MONTH_ABBREVIATIONS = pattern("month_abbreviations")
_ABBREVIATIONS = rf"(?:{pattern('abbreviations')}|{MONTH_ABBREVIATIONS})"
_ABBREVIATED = re.compile(rf"(?:(?<![\w-])[A-Z]|\b{_ABBREVIATIONS})\.$")
# a day written as an ordinal before its month, which ends no sentence: "der 3. Februar 1982"
_DAY_NUMBER, _MONTH_FIRST = re.compile(r"\b\d{1,2}\.$"), re.compile(rf"^(?:{pattern('months')})\b")
# "no." before a number is its sign, not the answer "no" ending a sentence: "Item no. 3 costs"
_NUMBER_SIGN = re.compile(r"\bno\.$", re.IGNORECASE)
# a word abbreviation or initials whose period belongs to an answer: "Acme Laboratories, Inc.",
# "Washington, D.C."
_OWN_PERIOD = re.compile(rf"\b{_ABBREVIATIONS}\.$|(?<![\w.])(?:[A-Za-z]\.){{2,}}$", re.I)
# a parenthetical aside of several words, maybe holding a bracket: "(the vertex is (2, −1))";
# not one that offers another answer ("3.1 (or 3.7 if ...)"), which is a hedge
LONG_ASIDE = re.compile(
    rf"\s*(?<!\\)\((?!\s*(?:{pattern('or_words')}|{pattern('maybe_words')})\b)(?=[^()]*\s[^()]*\s)"
    r"(?:[^()]|\([^()]*\)){8,}\)",
    re.I,
)
# a closing clause naming the answer by a pronoun: ", so he's the sender", ", which is the total"
_PRONOUNS = frozenset(words("pronouns"))
_PRONOUN_CLOSE = re.compile(rf",?\s+{pattern('pronoun_closes')}\s+(?P<rest>[^,;]*?)[.!]?$", re.I)
# an imperative that asks: "Find the length of AB."
_ASKS = re.compile(rf"\s*{pattern('asking_verbs')}\b", re.IGNORECASE)
_ASKS_WHICH = re.compile(
    rf"^\s*(?:{pattern('which_words')}|{pattern('who_words')}|{pattern('what_words')})\b", re.I
)
_SUBJECT_VERB = re.compile(rf"\s+{pattern('subject_verbs')}\b", re.IGNORECASE)
# the part of a chart a subject names with its colour or label: "The orange segments"
_CHART_PART = re.compile(rf"\s+(?:{'|'.join(words('chart_parts'))})s?$", re.I)
# a quantifier after what it counts: "2012 and 2016 both have ..."
_FLOATING_QUANTIFIER = re.compile(rf"\s+(?:{'|'.join(words('quantifiers'))})$", re.I)
# a trailing clause naming where the answer was read: ", according to the label on the bar"
_SOURCE_CLAUSE = re.compile(rf"\s*[,;(—–]\s*(?:{pattern('sources')})\b.*$", re.I | re.S)
# a source set off inside a clause that goes on: "and, according to the cover sheet, it has 3"
_SOURCE_ASIDE = re.compile(
    rf"\b({pattern('clause_joins')})\s*,\s*(?:{pattern('sources')})\b[^,;.]*,\s*", re.I
)
# a check of an answer stated before it, and a doubt that makes it revise that answer
_CHECK = re.compile(rf"(?:^|(?<=[.!?\n]))\s*(?:{pattern('checks')})\b", re.I)
_DOUBT = re.compile(  # an "or" in lower case: "O" names a point
    rf"\b(?:(?i:{pattern('maybe_words')}|{pattern('possibilities')}|{pattern('suppositions')})"
    rf"|{pattern('or_words')})\b"
)
_SENTENCE_CLOSED = re.compile(r"[.!?。！？)\]\"'”]\s*$")
# a sentence that opens by concluding: "Therefore ..."
_CONCLUDES = re.compile(rf"\s*(?:{pattern('conclusions')}|{pattern('summaries')})", re.I)
# what opens a subject before the answer it names: "So", "It looks like" (Norway has ...)
_SUBJECT_LEADS = re.compile(rf"(?:\s*(?:{_CONCLUDES.pattern}|{pattern('opinions')})[\s,]*)+", re.I)
# a clause that gives a result of what its sentence lists: "8% and 9%, which add up to 17"
RESULT = re.compile(pattern("results"), re.IGNORECASE)
# an explanation of a statement: "because ...", ", as the boundary is made up of 12 sides"
EXPLAINS = re.compile(pattern("explanations"), re.IGNORECASE)
# an apology opening an answer says nothing yet: "Sorry, I do not know which is correct."
APOLOGY = re.compile(rf"^\s*{pattern('apologies')}\b[,.!]?\s*(?:{pattern('turns')}\s+)?", re.I)
LEADING_ARTICLE = re.compile(rf"^{pattern('articles', 'en')}\s+", re.IGNORECASE)
_ANY_ARTICLE = re.compile(rf"^{pattern('articles')}\s+", re.IGNORECASE)
# an article only another language has: a sentence in that language ("hat mit 31 % den ...")
_OTHER_ARTICLES = sorted(set(words("articles")) - set(words("articles", "en")))
_OTHER_ARTICLE = re.compile(rf"\b(?:{'|'.join(_OTHER_ARTICLES)})\b", re.IGNORECASE)
# quoted text ('No Parking'), but not apostrophes inside words ("can't")
QUOTED = re.compile(r"[\"“][^\"”\n]{1,80}[\"”]|(?<!\w)['‘][^'’\n]{1,80}['’](?!\w)")
_CAPITALISED = re.compile(r"[A-Z][\w-]*")
STOP_WORDS = frozenset(words("stop_words"))
_RANKS = frozenset(words("ranks"))
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
YEAR = re.compile(r"(?:1[5-9]|20)\d\d")
# the letters a clause restates a question's word by: "approval" restates "approved"
_STEM = 6
# where a subject ends and the value it is said to have begins: "AB = 10", "the total is 36 m"
_VALUE_SPLIT = re.compile(rf"\s(?:{COPULAS})\s|=")
# the words an answer names itself by: "The answer is 12", "Result: 12"
_ANSWER_NAMES = frozenset(words("answer_keys"))


def sentences(text: str) -> list[str]:
    """The sentences of a text, split at a sentence end, a semicolon or a line break; an
    abbreviation ("Dr.") ends none (looked for in the last piece alone: linear time), nor does a
    full stop inside a quote ('The heading is "Table 3. Nicotine Content by Brand".')."""
    groups: list[list[str]] = []
    for piece in filter(None, (piece.strip() for piece in _unquoted_split(text.strip()))):
        last = groups[-1][-1] if groups else ""
        numbered = _NUMBER_SIGN.search(last) and piece[:1].isdigit()
        dated = _DAY_NUMBER.search(last) and _MONTH_FIRST.match(piece)
        if _ABBREVIATED.search(last) or numbered or dated:
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return [" ".join(group) for group in groups]


def _unquoted_split(text: str) -> list[str]:
    """The text split at each sentence end outside a quote (`QUOTED`)."""
    quotes = iter(match.span() for match in QUOTED.finditer(text))
    quote, pieces, start = next(quotes, None), [], 0
    for end in _SENTENCE_END.finditer(text):
        while quote and quote[1] <= end.start():
            quote = next(quotes, None)
        if not (quote and quote[0] < end.start()):
            pieces.append(text[start : end.start()])
            start = end.end()
    return [*pieces, text[start:]]


def without_source(sentence: str) -> str:
    """The sentence without a trailing clause naming where its answer was read ("Susan Blake, as
    given under "Contact" at the bottom"): such a clause never states the answer."""
    # not context set between a subject and its verb: "The department, printed under the title, is"
    sentence = _ENCLOSED_CONTEXT.sub(" ", _SOURCE_ASIDE.sub(r"\1 ", sentence))
    source = _SOURCE_CLAUSE.search(sentence)
    return sentence[: source.start()] if source and source.start() > 0 else sentence


def without_restatement(sentence: str, question: str) -> str:
    """The sentence without a closing clause that only restates the question about its answer
    by a pronoun ("J. T. Winebrenner, so he's the sender" for "Who is the sender?")."""
    close = _PRONOUN_CLOSE.search(sentence)
    restates = close and close.start() and content_words(close["rest"]) <= content_words(question)
    return sentence[: close.start()] if restates else sentence


def offers_two_marked(text: str, span: str) -> bool:
    """Whether the last sentence holding a marked (bold) span offers it as one of two readings
    ("the **50-64** or the **65+** group", "**T. S. Osdene**, or possibly H. Wakeham"): then it
    is no answer."""
    sentence = next((part for part in reversed(sentences(text)) if span in part), "")
    hedged = HEDGE.search(sentence, sentence.find(span)) is not None
    return hedged or reading_of(sentence).has("two_readings")


def main_clause(sentence: str) -> str:
    """The sentence up to its first clause of context (`clauses`)."""
    return clauses(sentence)[0]


def clauses(sentence: str) -> list[str]:
    """A sentence cut where a clause adds context, main clause first, leading phrases of context
    last (innermost first). A colon after more than three words ends the main clause too; a
    label's colon ("Age gap: 7") does not."""
    openers, sentence = [], _ENCLOSED_CONTEXT.sub(" ", sentence)
    # "Adding the tax of $252.00, the invoice shows a total of $4,452.00"
    while (opener := _LEADING_CONTEXT.match(sentence)) is not None:
        openers.append(sentence[: opener.end()].strip(" ,"))
        sentence = sentence[opener.end() :]
    cuts = [match.start() for match in _CONTEXT_CLAUSE.finditer(sentence) if match.start() > 0]
    parts = [sentence[a:b].strip(" ,;") for a, b in itertools.pairwise([0, *cuts, len(sentence)])]
    label, colon, rest = parts[0].partition(": ")
    # a ratio's colon, spaced ("42 : 12"), ends no clause; a list's ("above 40: 2017, ...") does
    ratio = re.search(r"\d\s$", label) and rest[:1].isdigit()
    if colon and len(label.split()) > 3 and not ratio:
        # a verb before the colon says what follows: "The subject line reads: Budget Revision"
        parts[0:1] = [rest, label] if _SAYS_WHAT_FOLLOWS.search(label) else [label, rest]
    return [*([part for part in parts if part] or [sentence.strip()]), *reversed(openers)]


def stating_clause(
    text: str,
    question: str | None,
    states: Callable[[str], bool],
    strength: Callable[[str], int],
    whole_sentences: bool = False,
) -> str | None:
    """The clause (or with `whole_sentences` the sentence) that states the answer, of those
    `states` holds for: an explanation ("because ...") last, else by `strength`, then concluding
    ("Therefore ...") or giving a result ("which add up to 17"), then restating the question,
    then later sentence, then earlier clause; None when none states anything."""
    question = question or ""
    wanted = {word[:_STEM] for word in topic_words(asked_sentence(question))}
    ranked = []
    for at, sentence in enumerate(sentences(text)):
        concludes = _CONCLUDES.match(sentence) is not None
        sentence = without_source(sentence)
        for index, clause in enumerate([sentence] if whole_sentences else clauses(sentence)):
            if not states(clause):
                continue
            power = strength(clause)  # a count of things only ("shows 6 countries") last
            cue = concludes or (index > 0 and RESULT.match(clause) is not None)
            explains = index > 0 and EXPLAINS.match(clause) is not None
            overlap = len(wanted & {word[:_STEM] for word in topic_words(clause)})
            restates = subject_restates(clause, question)
            rank = (power > 0, not explains, power, cue, restates, overlap, at, -index)
            ranked.append((rank, clause))
    return max(ranked, key=lambda pair: pair[0], default=(None, None))[1]


def subject_restates(clause: str, question: str) -> bool:
    """Whether a clause's subject, before its copula, is only words of the question ("the
    perimeter is 28" for "Find the perimeter of the square.")."""
    return restated_complement(clause, question) is not None


def restated_complement(clause: str, question: str) -> str | None:
    """What a clause says after its copula where its subject restates the question ("28" of
    "the perimeter is 28"); None where it does not."""
    subject = _COPULA_SPLIT.split(clause, maxsplit=1)
    said = content_words(subject[0])
    return subject[1] if len(subject) > 1 and said and said <= content_words(question) else None


def without_unasked(text: str, question: str) -> str:
    """The text up to the last sentence stating the value of what the question asks, where each
    sentence after it states the value of something the question does not name ("so the total
    displacement is 36 m. The maximum speed reached is 8 m/s."); else the whole text."""
    told, asks = sentences(text), _asked_namer(asked_sentence(question))
    for at in range(len(told) - 2, -1, -1):
        if _value_subject(told[at], asks) == "asked":
            unasked = all(_value_subject(part, asks) == "unasked" for part in told[at + 1 :])
            return " ".join(told[: at + 1]) if unasked else text
    return text


def states_unasked(sentence: str, question: str) -> bool:
    """Whether a sentence states only the value of something the question does not name ("the
    highest share was 46.2%" for "How many years had a share above 40 percent?")."""
    return _value_subject(sentence, _asked_namer(asked_sentence(question))) == "unasked"


def _asked_namer(question: str) -> Callable[[str], bool]:
    """Whether a subject's word names one the question asks with: by its stem, as the start of one
    ("max" for "maximum") or by initials ("RR" for "relative risk")."""
    told = ordered_content_words(question)
    known = {word[:_STEM] for word in told} | {word[0] for word in told} | initialisms(question)
    return lambda word: word[:_STEM] in known or any(asked.startswith(word) for asked in told)


def initialisms(text: str) -> set[str]:
    """The initials of each two content words in a row, lower case: "sn" for "serial number"."""
    return {a[0] + b[0] for a, b in itertools.pairwise(ordered_content_words(text))}


def _value_subject(sentence: str, asks: Callable[[str], bool]) -> str | None:
    """Whether a sentence states a value of what is asked (a subject, before a copula or `=`, of
    only asked words) or only of something unasked (a plain subject naming a word the question
    and an answer's name lack, not concluding); None where it states no value by a subject."""
    reading = reading_of(sentence)
    parts = reading.parts("conclusion")  # "..., so the total displacement is 36 m"
    subjects = [_value_subject_words(clause) for part in parts for clause in clauses(part)]
    stated = [said for said in subjects if said is not None]
    if any(said and all(map(asks, said)) for said in stated):
        return "asked"
    own = [said - _ANSWER_NAMES for said in stated]  # "The answer is 12" names nothing asked
    named = stated and all(any(len(w) > 2 and not asks(w) for w in said) for said in own)
    plain = len(parts) == 1 and not (_CONCLUDES.match(sentence) or reading.has("correction"))
    return "unasked" if named and plain else None


def _value_subject_words(clause: str) -> set[str] | None:
    """The words of the plain subject, no comma, that a clause states a number of ("the maximum
    speed reached is 8"); None where it states none so."""
    lead = _SUBJECT_LEADS.match(clause)  # "So the total displacement is 36 m"
    subject, *value = _VALUE_SPLIT.split(clause[lead.end() if lead else 0 :], maxsplit=1)
    if not value or "," in subject or not re.search(r"\d", value[0]):
        return None
    return {word for word in content_words(subject) if word.isalpha()}


def open_check(text: str) -> int | None:
    """Where a check of what a text stated starts, if the text is cut off inside it and the check
    voices no doubt ("... so AB = 8.\n\nLet me double-check with the diagram. The perpendicular
    ... and"): what was stated stands, however many sentences the check ran. A check that doubts
    ("whether this is the author", "it could be 32") revises it; None then, or for any other
    ending."""
    last = (sentences(text) or [""])[-1]
    checks = [] if _SENTENCE_CLOSED.search(last) else list(_CHECK.finditer(text))
    if not checks or _DOUBT.search(text, checks[-1].end()):
        return None
    return checks[-1].start()


def asked_sentence(question: str) -> str:
    """The last sentence of a question that asks (ends in "?", opens with "Find"), else all."""
    asking = [p for p in sentences(question) if p.rstrip().endswith("?") or _ASKS.match(p)]
    return asking[-1] if asking else question


def hedges_after(text: str, span: str) -> bool:
    """Whether, after the span that states a value, the text offers another ("it might be 10"),
    or the value again as one of two ("so probably 13.4 or 13.9")."""
    stated = span.strip(" .")
    at = text.find(stated) if stated else -1
    return at >= 0 and reading_of(text).has("hedged_value", at + len(stated))


def settled_part(text: str, keep_asides: bool = False) -> str:
    """What an answer settles on: the text after its last turn ("GARDEN, but ... WARDEN"), else
    all of it; without long asides unless `keep_asides` (an aside may spell out the answer)."""
    settled = reading_of(text).after_last("turn")
    settled = text if settled is None else settled
    return settled if keep_asides else LONG_ASIDE.sub("", settled)


def states_reading(text: str) -> bool:
    """Whether a text names a reading of its own (a word in capitals, a capitalised word after
    its first, a number or a quoted word) rather than only commenting ("but it is faded")."""
    words = [word.strip(".,;:!?") for word in text.split()]
    named = any(_CAPITALISED.fullmatch(word) for word in words[1:])
    shouted = any(word.isupper() and len(word) > 1 for word in words)
    return bool(named or shouted or re.search(r"\d", text) or QUOTED.search(text))


def subject_answer(text: str, question: str) -> str | None:
    """For a "which/who/what" question, the subject an answer restates it with ("Norway has the
    highest share ..."): of the first main clause, else of the last conclusion; or None."""
    if not _ASKS_WHICH.match(question or ""):
        return None
    parts = [p for sentence in sentences(text) for p in reading_of(sentence).parts("conclusion")]
    asked = content_words(question)
    ranked = asked & _RANKS  # "the second highest" is not "the highest"
    for clause in (main_clause(parts[0]), *reversed(parts[1:])) if parts else ():
        clause = settled_part(clause, keep_asides=True).strip()  # "X grew, but Y grew the most"
        verb = _SUBJECT_VERB.search(clause) or _asked_verb(clause, question)
        if verb is None or verb.start() == 0:
            continue
        predicate = content_words(clause[verb.end() :])
        subject = clause[: verb.start()]
        opening = _SUBJECT_LEADS.match(subject)  # "So Services employs the most people."
        subject = subject[opening.end() :].lstrip(" ,") if opening else subject
        subject = LEADING_ARTICLE.sub("", subject).strip()
        # "It is addressed to Dr. Fenton" names its answer after the verb
        if predicate & asked and ranked <= predicate and subject.lower() not in _PRONOUNS:
            return subject
    return None


def _asked_verb(clause: str, question: str) -> re.Match[str] | None:
    """The question's own verb in a clause that puts its answer first ("saw" in "Print saw the
    largest decrease"): a word of the question with none before it and some after it."""
    asked = content_words(question)
    for word in dict.fromkeys(w for w in _WORD.findall(question.lower()) if w in asked):
        found = re.search(rf"\s+{re.escape(word)}\b", clause)  # a verb, not a title: "Director"
        subject = content_words(clause[: found.start()]) if found else set()
        if subject and not subject & asked and content_words(clause[found.end() :]) & asked:
            return found
    return None


def subject_core(subject: str, question: str) -> str:
    """A subject less what it says beside the answer: a chart part ("orange segments" is
    "orange"), the question's words after the answer ("The Conservative party" is
    "Conservative"), a leading article and a trailing quantifier."""
    subject = LEADING_ARTICLE.sub("", subject.strip())
    words = _FLOATING_QUANTIFIER.sub("", _CHART_PART.sub("", subject)).split()
    asked = content_words(question)
    while len(words) > 1 and words[-1].lower() in asked:
        words.pop()
    return " ".join(words)


def topic_words(text: str) -> set[str]:
    """Content words less the numbers that are not years: a question's threshold ("more than 7
    people") is not what a sentence restates, while its year ("in 2020") is."""
    return {word for word in content_words(text) if not word.isdigit() or YEAR.fullmatch(word)}


def spelled_out(text: str) -> str:
    """A text with its short forms written out ("Main St." as "Main street", "Invoice No." as
    "Invoice number"), to compare with a gold or a question that writes the other form."""
    return _SHORT_FORM.sub(lambda short: _SHORT_FORMS[short[1].lower()], text)


def content_words(text: str) -> set[str]:
    """Lower-cased words of a text, stop words left out."""
    return set(ordered_content_words(text))


def ordered_content_words(text: str) -> list[str]:
    """`content_words` in the order said, repeats kept (a claim's order, two words' initials)."""
    return [word for word in _WORD.findall(text.lower()) if word not in STOP_WORDS]


def without_final_period(text: str) -> str:
    """An answer without its final period, unless that closes an abbreviation ("D.C.")."""
    return text if _OWN_PERIOD.search(text) else text.rstrip(".")


def _unaccented(text: str) -> str:
    """Lower case without accents, the form glosses are looked up in ("Marrón", "marron")."""
    split = unicodedata.normalize("NFKD", text.lower())
    bare = "".join(char for char in split if not unicodedata.combining(char))
    return unicodedata.normalize("NFC", bare)  # Korean syllables whole again


_GLOSSES = {_unaccented(word): english for word, english in glosses().items()}
# a word in Chinese, Japanese or Korean stands in its sentence unspaced ("信号は緑色です"); one in
# a spaced script stands alone ("rot", not "rotate") and is looked up by its words, in one pass
_UNSPACED = {word: english for word, english in _GLOSSES.items() if re.search(f"[{CJK}]", word)}
_LONGEST = max((len(word.split()) for word in _GLOSSES), default=1)
_GLOSS_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_ENGLISH = re.compile(rf"\b{pattern('function_words', 'en')}\b", re.IGNORECASE)


def in_english(text: str) -> bool:
    """Whether a text holds an English function word (an answer in another language holds none)."""
    return _ENGLISH.search(text) is not None


def name_first(text: str, question: str) -> str | None:
    """For a "which/who/what" question, the one category label with digits an answer in another
    language holds ("18-29", "Q3"), else the name it opens with, where an article of that
    language follows ("Die SPD hatte die meisten Sitze." names SPD), as an English answer names
    its subject (`subject_answer`); None for one that negates."""
    if not _ASKS_WHICH.match(question) or in_english(text) or reading_of(text).has("negation"):
        return None
    if len(labels := set(_DIGIT_LABEL.findall(text))) == 1:
        return labels.pop()  # "Le groupe d'âge des 18-29 ans a la part la plus élevée."
    said = _ANY_ARTICLE.sub("", text.strip()).split()
    named = list(itertools.takewhile(lambda word: word[:1].isupper(), said))
    rest = " ".join(said[len(named) :])
    return " ".join(named).strip(".,;:!?") if named and _OTHER_ARTICLE.search(rest) else None


def english_gloss(text: str) -> str | None:
    """The English of the one answer word an answer in another language names ("El camión es
    verde." -> "green", "インドが最も高い値を示しています。" -> "India"); None for an English
    answer, one naming two such words, or one that negates ("No es rojo")."""
    if in_english(text) or reading_of(text).has("negation"):
        return None
    named = _glossed(text)
    if len(named) > 1:  # "火焰呈亮黄橙色，……，因此金属是钠。": the one word it concludes with
        named = _glossed(reading_of(text).parts("conclusion")[-1])
    if len(named) > 1:  # "気体は酸素です。…過酸化水素を水と酸素に…": its first sentence's
        named = _glossed(sentences(text)[0])
    return named.pop() if len(named) == 1 else None


def _glossed(text: str) -> set[str]:
    """The English of every listed word a text names, looked up in one pass."""
    plain = _unaccented(text)
    said = _GLOSS_WORD.findall(plain)
    runs = {" ".join(said[at : at + n]) for n in range(1, _LONGEST + 1) for at in range(len(said))}
    named = {_GLOSSES[run] for run in runs if run in _GLOSSES and run not in _UNSPACED}
    unspaced = [word for word in _UNSPACED if word in plain]
    # a word inside a longer one names nothing of its own: 绿 (green) in 叶绿体 (chloroplast)
    inner = {w for w in unspaced for other in unspaced if w != other and w in other}
    return named | {_UNSPACED[word] for word in unspaced if word not in inner}
