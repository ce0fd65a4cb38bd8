"""Where a free-text answer states its answer: which sentence, which clause, whether it commits.

Models answer in sentences: "In 2013 the rate was 24.9%, rising to 26.5% in 2014.", "There are
3 cars on the left, and 2 on the right.", "The telephone number is (919) 741-5000; the fax is
(919) 741-7411." A careful grader reads the value the main clause states and takes what trails
it (a comparison, a participle, a second clause) as context; among several sentences, the one
that restates the question; and an answer that offers alternatives ("5–7 years", "either
DENTIST or DENTAL", "it could be a bar or a spit", "65° or 115°") or turns away from a first
reading ("looks like GARDEN, but ... the word is WARDEN") commits to what it settles on, or to
nothing. These rules serve every task that reads free text (`mmcritic.eval.answers`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from mmcritic.reading.language import pattern, words
from mmcritic.reading.structure import reading_of

# A clause that adds context after the main one: "; the fax is ...", ", rising to 26.5% ...",
# ", up from 1,102 million", ", compared with 29%", ", followed by Sweden", ", and 2 on the right",
# ", held on June 3-4", ", while ...", or names where the answer was read: ", as stated in the
# second paragraph" (the words that open one: `context_openers` in the language data).
# the copulas of every language, as alternatives ("is", "est", "ist"), and one with the spaces
# around it: where a clause's subject ends
COPULAS = "|".join(re.escape(copula) for copula in words("copulas"))
_COPULA_SPLIT = re.compile(rf"\s(?:{COPULAS})\s")
_OPENERS = "|".join(opener.replace(" ", r"\s+") for opener in words("context_openers"))
_CONTEXT_CLAUSE = re.compile(
    rf",\s*(?:{_OPENERS})\b"
    r"|\s+(?:compared\s+(?:with|to)|followed\s+by|(?:up|down)\s+from|versus|vs\.)\s",
    re.IGNORECASE,
)
# a phrase that opens a sentence with its context: "Adding the sales tax, ...", "After the
# merger, ...", "According to the chart, ..."
_LEADING_CONTEXT = re.compile(
    r"^(?:[A-Z][a-z]{2,}ing|After|Before|Including|Excluding|According\s+to)\b"
    r"(?:[^,;:.]|(?<=\d)[.,](?=\d)){1,80},\s+(?=\S)"
)
_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=[\"'“(]?[A-Z0-9\u4e00-\u9fff])|(?<=[。！？；])|\s*;\s+|\n+"
)
# a month's abbreviation before its day: "signed on Sept. 22, 1998"
MONTH_ABBREVIATIONS = r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec"
_ABBREVIATED = re.compile(
    rf"\b(?:[A-Z]|Dr|Mr|Mrs|Ms|St|No|Inc|Ltd|Co|Corp|Jr|Sr|vs|etc|e\.g|i\.e|{MONTH_ABBREVIATIONS})\.$"
)
# a word abbreviation whose period belongs to an answer: "Acme Laboratories, Inc.", "5 p.m."
_WORD_ABBREVIATION = re.compile(
    rf"\b(?:Inc|Ltd|Co|Corp|Jr|Sr|Dr|Mr|Mrs|Ms|St|Ave|Blvd|Rd|No|etc|[ap]\.m|{MONTH_ABBREVIATIONS})\.$",
    re.I,
)
# initials that end an answer with their own period: "Washington, D.C.", "U.S.A."
_DOTTED_INITIALS = re.compile(r"(?<![\w.])(?:[A-Za-z]\.){2,}$")
# An aside of several words in parentheses, which may hold a bracket of its own: "(the main
# line, 202-862-4510, is printed above)", "(the vertex itself is (2, −1))"; not one that offers
# another answer ("3.1 (or 3.7 if ...)"), which is a hedge, not context.
LONG_ASIDE = re.compile(
    r"\s*(?<!\\)\((?!\s*(?:or|maybe|possibly|perhaps)\b)(?=[^()]*\s[^()]*\s)"
    r"(?:[^()]|\([^()]*\)){8,}\)",
    re.I,
)
_ASKS_WHICH = re.compile(r"^\s*(?:which|who|what)\b", re.IGNORECASE)
_SUBJECT_VERB = re.compile(
    r"\s+(?:has|have|had|is|was|are|were|shows?|showed|leads?|led|ranks?|ranked|holds?|held|"
    r"represents?|represented|denotes?|indicates?|stands?\s+for)\b",
    re.IGNORECASE,
)
# the part of a chart a subject names with its colour or label: "The orange segments"
_CHART_PART = re.compile(
    r"\s+(?:bars?|segments?|slices?|lines?|portions?|sections?|areas?|columns?|dots?|points?|"
    r"wedges?|one|ones)$",
    re.IGNORECASE,
)
# a quantifier after what it counts: "2012 and 2016 both have ...", "the red bars all ..."
_FLOATING_QUANTIFIER = re.compile(r"\s+(?:both|all|each)$", re.IGNORECASE)
# a sentence that opens by concluding: "Therefore ...", "So ...", "In conclusion, ..."
_CONCLUDES = re.compile(rf"\s*(?:{pattern('conclusions')}|{pattern('summaries')})", re.I)
LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_QUOTED_READING = re.compile(r"[\"“][^\"”\n]{1,60}[\"”]|(?<!\w)['‘][^'’\n]{1,60}['’](?!\w)")
_CAPITALISED = re.compile(r"[A-Z][\w-]*")
STOP_WORDS = frozenset(words("stop_words"))
_RANKS = frozenset({"second", "third", "fourth", "fifth", "last", "2nd", "3rd", "4th", "5th"})
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
YEAR = re.compile(r"(?:1[5-9]|20)\d\d")


def sentences(text: str) -> list[str]:
    """The sentences of a text, split after `.`, `!`, `?` (also CJK) before a capital, a digit or
    a CJK character, at a semicolon (each side states something of its own: "The telephone
    number is ...; the fax number is ...") and at line breaks; an abbreviation ("Dr.", "U.S.")
    does not end one. (An abbreviation is looked for in the last piece alone, where it ends,
    so a run of abbreviations is read in linear time.)"""
    groups: list[list[str]] = []
    for piece in _SENTENCE_END.split(text.strip()):
        piece = piece.strip()
        if not piece:
            continue
        if groups and _ABBREVIATED.search(groups[-1][-1]):
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return [" ".join(group) for group in groups]


def main_clause(sentence: str) -> str:
    """The sentence up to the first clause that adds context (`clauses`)."""
    return clauses(sentence)[0]


def clauses(sentence: str) -> list[str]:
    """A sentence cut where a clause adds context (", rising to ...", "; the fax is ...",
    ", followed by ..."), main clause first; a colon that opens a list after a statement of
    more than three words ("There are three bars above 40: 2017 (45), ...") ends the main
    clause too, while a label's colon ("Age gap: 7") stays. Leading phrases of context
    come last, the innermost first."""
    openers = []
    # "Adding the tax of $252.00, the invoice shows a total of $4,452.00"
    while (opener := _LEADING_CONTEXT.match(sentence)) is not None:
        openers.append(sentence[: opener.end()].strip(" ,"))
        sentence = sentence[opener.end() :]
    return [*_main_and_context(sentence), *reversed(openers)]


def _main_and_context(sentence: str) -> list[str]:
    """The clauses of a sentence that opens with no phrase of context."""
    cuts = [match.start() for match in _CONTEXT_CLAUSE.finditer(sentence) if match.start() > 0]
    bounds = [0, *cuts, len(sentence)]
    parts = [sentence[a:b].strip(" ,;") for a, b in itertools.pairwise(bounds)]
    head = parts[0]
    colon = head.find(": ")
    if colon > 0 and len(head[:colon].split()) > 3:
        parts[0:1] = [head[:colon], head[colon + 2 :]]
    return [part for part in parts if part] or [sentence.strip()]


def stating_clause(
    text: str,
    question: str | None,
    states: Callable[[str], bool],
    strength: Callable[[str], int],
    whole_sentences: bool = False,
) -> str | None:
    """The clause of a free answer that states its answer, among the clauses for which
    `states` holds: the one `strength` ranks highest (a verb followed by the value over a value
    only in the subject: "The largest bar, 41.2, is not included."), then one in a sentence that
    concludes ("Therefore the area is 3." after "the area of △ABD is 6"), then the one that
    shares the most content words with the question (it restates the question: "... rising to 16.2
    million in 2020" answers "... in 2020?"), then the later sentence, then the earlier clause
    of a sentence (the main clause before its context); None when no clause states anything.
    With `whole_sentences`, sentences are ranked as they are, uncut."""
    wanted = topic_words(asked_sentence(question or ""))
    best: tuple[int, bool, bool, int, int, int] | None = None
    chosen = None
    for at, sentence in enumerate(sentences(text)):
        concludes = _CONCLUDES.match(sentence) is not None
        for index, clause in enumerate([sentence] if whole_sentences else clauses(sentence)):
            if not states(clause):
                continue
            overlap = len(wanted & topic_words(clause))
            restates = subject_restates(clause, question or "")
            rank = (strength(clause), concludes, restates, overlap, at, -index)
            if best is None or rank > best:
                best, chosen = rank, clause
    return chosen


def subject_restates(clause: str, question: str) -> bool:
    """Whether a clause's subject, before its copula, is only words of the question ("the
    perimeter is 28" for "Find the perimeter of the square."; not "Each side of the square is
    7")."""
    subject = _COPULA_SPLIT.split(clause, maxsplit=1)
    said = content_words(subject[0])
    return len(subject) > 1 and bool(said) and said <= content_words(question)


def asked_sentence(question: str) -> str:
    """The sentence of a question that asks ("What is the length of AE?" after the givens
    "... E is the midpoint of BC."), else the whole question."""
    asking = [sentence for sentence in sentences(question) if sentence.rstrip().endswith("?")]
    return asking[-1] if asking else question


def hedges_after(text: str, span: str) -> bool:
    """Whether, after the span that states a value, the text offers another one ("the age gap
    is 6 years. However, ... could also be around 10 years older, so it might be 10.")."""
    at = text.rfind(span.strip(" .")) if span.strip(" .") else -1
    return at >= 0 and reading_of(text).has("hedged_value", at + len(span.strip(" .")))


def settled_part(text: str, keep_asides: bool = False) -> str:
    """What an answer settles on: the text after its last turn away from an earlier reading
    ("looks like GARDEN, but ... the word is WARDEN"), without long parenthetical asides unless
    `keep_asides` (an aside may spell out the answer: "KCL (Kirchhoff's Current Law)"); the
    whole text when it has no turn."""
    settled = reading_of(text).after_last("turn")
    settled = text if settled is None else settled
    return settled if keep_asides else LONG_ASIDE.sub("", settled)


def states_reading(text: str) -> bool:
    """Whether a text names a reading of its own: a word in capitals, a capitalised word after
    its first, a number or a quoted word ("so the word is WARDEN", "the one in the front is
    Coca-Cola", 'so it is "started"', "so it reads 'farm'"), rather than only commenting ("but
    it is faded")."""
    words = text.split()
    return bool(
        any(_CAPITALISED.fullmatch(word.strip(".,;:!?")) for word in words[1:])
        or any(word.strip(".,;:!?").isupper() and len(word.strip(".,;:!?")) > 1 for word in words)
        or re.search(r"\d", text)
        or _QUOTED_READING.search(text)
    )


def subject_answer(text: str, question: str) -> str | None:
    """For a "which/who/what ..." question answered by restating it with the answer as subject
    ("Norway has the highest share at 72%, followed by Sweden at 54%." for "Which country has
    the highest share ...?"; "..., so the Republicans had higher approval."), that subject: of
    the first sentence's main clause, else of the last conclusion ("so ...", "therefore ...")
    that restates the question after its verb; None when none does."""
    if not _ASKS_WHICH.match(question or ""):
        return None
    parts = [p for sentence in sentences(text) for p in reading_of(sentence).parts("conclusion")]
    for clause in (main_clause(parts[0]), *reversed(parts[1:])) if parts else ():
        verb = _SUBJECT_VERB.search(clause) or _asked_verb(clause, question)
        if verb is None or verb.start() == 0:
            continue
        predicate = content_words(clause[verb.end() :])
        ranked = content_words(question) & _RANKS  # "the second highest" is not "the highest"
        if predicate & content_words(question) and ranked <= predicate:
            subject = clause[: verb.start()]
            opening = _CONCLUDES.match(subject)  # "So Services employs the most people."
            subject = subject[opening.end() :].lstrip(" ,") if opening else subject
            return LEADING_ARTICLE.sub("", subject).strip()
    return None


def _asked_verb(clause: str, question: str) -> re.Match[str] | None:
    """The question's own verb in a clause that puts its answer first: "saw" in "Print saw the
    largest decrease" for "Which category saw the largest decrease?"; a lower-case word of the
    question after which the clause goes on as the question does, with nothing of the question
    before it."""
    asked = content_words(question)
    for word in dict.fromkeys(w for w in _WORD.findall(question.lower()) if w in asked):
        found = re.search(rf"\s+{re.escape(word)}\b", clause)  # a verb, not a title: "Director"
        subject = content_words(clause[: found.start()]) if found else set()
        if not subject or subject & asked:
            continue
        if content_words(clause[found.end() :]) & asked:
            return found
    return None


def subject_core(subject: str, question: str) -> str:
    """A subject less what it says beside the answer: the chart part it names ("orange
    segments" is the colour "orange"), the question's words after the answer ("18-29 age
    group" for "Which age group ...?") and a quantifier after it ("2012 and 2016 both")."""
    words = _FLOATING_QUANTIFIER.sub("", _CHART_PART.sub("", subject.strip())).split()
    asked = content_words(question)
    while len(words) > 1 and words[-1].lower() in asked:
        words.pop()
    return " ".join(words)


def topic_words(text: str) -> set[str]:
    """Content words less the numbers that are not years: a question's threshold ("more than 7
    people") is not what a sentence restates, while its year ("in 2020") is."""
    return {word for word in content_words(text) if not word.isdigit() or YEAR.fullmatch(word)}


def content_words(text: str) -> set[str]:
    """Lower-cased words of a text, stop words left out."""
    return {word for word in _WORD.findall(text.lower()) if word not in STOP_WORDS}


def without_final_period(text: str) -> str:
    """An answer without the period that ends its sentence, kept where it closes an
    abbreviation ("Acme Laboratories, Inc.", "Washington, D.C." stay whole)."""
    kept = _WORD_ABBREVIATION.search(text) or _DOTTED_INITIALS.search(text)
    return text if kept else text.rstrip(".")
