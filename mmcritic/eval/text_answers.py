"""The short text answer a free response states (DocVQA's ANLS, ChartQA's text golds).

A response wraps its answer in a sentence or a label ("Total due: $1,245.00"); ANLS compares
strings, so the span a careful grader would take as the answer is cut out first.
"""

from __future__ import annotations

import itertools
import re

from mmcritic.eval.answers import (
    AND_SPLIT,
    ASIDE,
    LATEX_INLINE,
    SCALES,
    holds_digit,
    inflects,
    is_cut_off,
    only_counts,
    stated_count,
    value_strength,
)
from mmcritic.reading.final import stated_answer
from mmcritic.reading.language import LANGUAGES, pattern, words
from mmcritic.reading.markup import BOLD, CJK, answer_region, clean_latex
from mmcritic.reading.statements import (
    APOLOGY,
    COPULAS,
    LEADING_ARTICLE,
    LONG_ASIDE,
    MONTH_ABBREVIATIONS,
    STOP_WORDS,
    clauses,
    content_words,
    in_english,
    initialisms,
    main_clause,
    offers_two_marked,
    restated_complement,
    sentences,
    settled_part,
    spelled_out,
    states_reading,
    stating_clause,
    subject_answer,
    subject_restates,
    without_final_period,
    without_restatement,
    without_source,
)
from mmcritic.reading.structure import HEDGE, YES_NO, reading_of

# what a sentence's answer follows: a copula (with its language's article: "est le"), an agent
# or a date's verb in any language ("by", "daté du"), or another word it follows ("reads")
_TEXT_KEY_PHRASES = (
    *(f" {w} " for kind in ("copulas", "agents", "dated", "answer_leads") for w in words(kind)),
    *(f" {copula} {article} " for code in LANGUAGES for copula in words("copulas", code)
      for article in words("articles", code)),
)  # fmt: skip
# the verb still ahead after a restated subject and a short place: "(The date) at the top is ..."
_LATER_COPULA = re.compile(
    rf"^(?:[^\W\d_][\w-]*\s+){{1,4}}?(?:{COPULAS}|{pattern('apparent_copulas')})\s+", re.I
)
_CONCLUDING_ADVERB = re.compile(rf"\s({COPULAS}),?\s+{pattern('conclusions')},?\s+", re.I)
# a passive's participle and preposition before the answer: "(is) scheduled for October 14"
_PASSIVE = re.compile(rf"^(?:{pattern('passives')})\s+(?=\S)", re.IGNORECASE)
# a short answer, then a dash and a comment on it: "Linda Reeves — her name appears in ..."
_DASHED_COMMENT = re.compile(r"^([^—–\n:]{1,60}?)\s+[—–]\s+\S")
# a preposition before the value a clause states: "The check ... is for $1,500.00."
_VALUE_PREPOSITION = re.compile(rf"^{pattern('value_prepositions')}\s+(?=[$€£]?\d)", re.I)
# a label before a colon, starting with a letter: "Total due:", not "12:30" ("It is at 3:30")
_LABEL = re.compile(r"^\s*([^\W\d_][^:\n]*?)(?!(?<=\d):\d):\s*(.*)$")
# "runs from 12:30 p.m. to 1:45 p.m.": the start for "begin"
_FROM, _UNTIL = pattern("range_starts"), pattern("range_ends")
_RANGE = re.compile(rf"\b{_FROM}\s+(?P<start>.+?)\s+{_UNTIL}\s+(?P<end>.+)$", re.IGNORECASE)
_ASKS_START = re.compile(rf"\b{pattern('start_verbs')}\b", re.IGNORECASE)
# a verb that makes a sentence of a phrase: a copula, a date's verb or another verb of any
# language, or a past tense in lower case ("Group A smoked 20 cigarettes")
_FINITE_VERB = (
    rf"(?i:{COPULAS}|{'|'.join(map(re.escape, words('dated')))}|{pattern('sentence_verbs')})"
)
_SENTENCE_VERB = re.compile(rf" (?:{_FINITE_VERB}|{pattern('past_tenses')}) ")
# a phrase with no verb but a participle: "Samples shipped by air freight"
_PARTICIPLE_PHRASE = re.compile(rf" {_FINITE_VERB} ")
# a question asking for text as written: "What is written in the 'Remarks' field?"
_ASKS_TEXT = re.compile(rf"\b{pattern('text_questions')}\b", re.IGNORECASE)
# words a restatement of the question runs over: "The date mentioned in the letter is ..."
_RESTATING_WORDS = frozenset(words("restating_words"))
_COPULA_WORDS = frozenset(words("copulas"))
# what a word of a restatement may carry around it: "the 'Approved by' field"
_WORD_EDGES = ".,;:'\"‘’“”"
_WHICH, _WHAT, _WHO, _WHOM = map(pattern, ("which_words", "what_words", "who_words", "whom_words"))
_TO, _IN, _NAME = map(pattern, ("person_prepositions", "thing_prepositions", "name_questions"))
_ASKS_YEAR = re.compile(rf"\b{pattern('year_questions')}\b", re.IGNORECASE)  # "What year ...?"
_ASKS_DATE = re.compile(rf"\b{pattern('date_questions')}\b", re.IGNORECASE)  # "When ...?"
_ASKS_WHERE = re.compile(rf"^\s*{pattern('place_questions')}\b", re.IGNORECASE)
_ASKS_PLACE = re.compile(
    rf"^\s*{pattern('place_questions')}\b|\b(?:which|what)\s+{pattern('place_nouns')}\b", re.I
)
# a place named after a preposition in another language: "La conferenza si terrà a Chicago."
_PLACED_NAME = re.compile(
    rf"\b(?:{pattern('place_prepositions')})\s+([A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*)"
)
# a full name inside a sentence of another language: "Das Memo ist an James Whitfield gerichtet."
_INNER_FULL_NAME = re.compile(r"(?<=\s)[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)+")
_LOWER_WORD = re.compile(r"\b[^\W\d_A-Z][^\W\d_]*\b")
_YES_NO_QUESTION = re.compile(rf"^\s*{pattern('yes_no_questions')}\b", re.I)  # "Is it ...?"
# the "no" a self-correction opens with, which answers no question that is not a yes/no one
_OWN_NO = re.compile(rf"^(?:{pattern('no_words')})\b[\s,.;:—–-]+(?=\S)", re.I)
_MONTHS = pattern("months")
# a date with its day or year: "Sept. 22, 1998", "January 1982", "3. Februar 1982"
_DATE = re.compile(
    rf"\b(?:(?:{_MONTHS}|{MONTH_ABBREVIATIONS})\.?\s+\d{{1,2}}(?:\d\d|{pattern('day_endings')})?\b"
    rf"|\b\d{{1,2}}\.?\s+{_MONTHS}\b)(?:,?\s+\d{{4}}\b)?"
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
)
# a number that begins a name or an address ("1875 Eye Street"), or ends a name after "of"
_NUMBER_IN_NAME = re.compile(
    rf"(?<![\w.,])\d[\d,]*\s+[A-Z](?:[a-z]|\.\s[A-Z])|\b[A-Z][\w-]*\s+{pattern('name_links')}\s+\d"
    # a year naming the thing after it: "to review the 1985 budget"
    rf"|\b{pattern('definite_articles', 'en')}\s+(?:1[5-9]|20)\d\d\s+[a-z]"
)
_YEAR = re.compile(r"(?<!\d)(?:1[5-9]|20)\d\d(?!\w)")  # not "1990s"
_ASKED_PREPOSITION = re.compile(
    rf"^\s*({_TO})\s+{_WHOM}\b|\b({_TO})\s*\?\s*$|^\s*({_IN})\s+(?:{_WHICH}|{_WHAT})\b", re.I
)
_ASKS_WHICH_OR_WHO = re.compile(rf"^\s*(?:{_WHICH}|{_WHO})\b", re.IGNORECASE)
# a question asking for a person: "Who ...?", "To whom ...?", "What name appears ...?"
_ASKS_WHO = re.compile(rf"^\s*(?:{_WHO}|{_WHOM}|{_TO}\s+{_WHOM}|{_NAME})\b", re.I)
# a title or role after a name: "R. J. Marshall, Vice President of Marketing"
_TITLE_AFTER_NAME = re.compile(rf",\s+(?=[A-Z]|{pattern('articles', 'en')}\b)")
# a script other than Latin: CJK and Hangul, Greek, Cyrillic, Hebrew, Arabic, Indic and Thai
_OTHER_SCRIPT = re.compile(f"[{CJK}\u0370-\u052f\u0590-\u06ff\u0900-\u0e7f]")
# a run of Latin words or digits inside a sentence in another script, from an opening bracket
# ("(336) 741-5000") to a final period that may close an abbreviation ("Philip Morris Inc."),
# with a time's colon inside it ("12:30 p.m.")
_LATIN_RUN = re.compile(
    r"[A-Za-z0-9$€£(][A-Za-z0-9$€£%&'.,:/() -]*(?:\.|[A-Za-z0-9%)])|[A-Za-z0-9]"
)
_PHONE = re.compile(r"(?<![\d-])(?:\(\d{3}\)\s?|\d{3}[-.\s])\d{3}[-.\s]\d{1,4}(?![\d-])")
# a place after the answer: "Dr. Helen Whittaker at the Lorillard Research Center"
_TRAILING_PLACE = re.compile(rf"\s+{pattern('place_openers')}\s+", re.IGNORECASE)
# a number as printed, with its currency, percent, scale word or unit ("$1.2 million"), not part
# of a code joined by a hyphen
_NUMBER_TOKEN = re.compile(
    r"(?<![\w.,])(?<!\w-)[$€£]?\d(?:[\d,]*\d)?(?:\.\d+)?"
    rf"(?:%|\s+(?:{pattern('percent_words')}|{'|'.join(SCALES)})\b"
    r"|\s?(?:mg|kg|g|ml|cm|mm|km|lbs?|oz|kcal)(?:/[a-z]+)?\b|\s?[$€£])?(?!-?\w)"
)
# a number of things after "for" or in brackets, beside a value: "$1,247.50 for 14 items"
_COUNT_BESIDE = re.compile(r"\s*(?:for\s+|\()\d[\d,]*\s+(?:[a-z]+\s+)?[a-z]+s\b\)?")
# a markdown heading of a few words, which labels the lines under it: "### Title"
_HEADING_MARK = re.compile(r"^#{1,6}\s+")
_HEADING = re.compile(r"^#{1,6}\s+([^\W\d_][\w ]{0,30}?)\s*:?$")
# lower-case words that describe the name after them: "handwritten name J. M. Kessler"
_NOUN_BEFORE_NAME = re.compile(r"^(?:[a-z]+\s+){1,2}(?=(?:[A-Z][\w.&'-]*\s*)+\.?$)")
_LIST_ITEM = re.compile(r"^(?:[-*•·]|\d{1,2}[.)])\s+")
# a quoted span: in double quotes, or in single quotes ending the sentence ("signed 'Rob'.")
_QUOTED = re.compile(
    r"[\"“«„]\s?([^\"”»“\n]{1,80}?)\s?[\"”»“]|(?<!\w)['‘]([^'’\n]{1,80})['’](?=[.!]?\s*$)"
)


def text_answer(response: str, question: str = "", keep_asked_words: bool = False) -> str:
    """The short text answer a response states, as a careful grader reads it: the marked answer
    (box, JSON, "answer is"), else a bold span, else from the answering sentence a quoted span, a
    labelled value, a count, its one number, or what follows its restatement of the question
    ("The total is $25.00." gives "$25.00"). A phrase with no verb is the answer itself, less the
    question's words before a number unless `keep_asked_words`; quotes and a final stop go."""
    if (stated := stated_answer(response)) is not None:
        return _trimmed(stated)
    answer = _corrected(clean_latex(answer_region(response), keep_bold=True), question)
    if answer is None:
        return ""
    lines = _answer_lines(clean_latex(LATEX_INLINE.sub(r"\1", answer)), question)
    if not lines:
        return ""
    if marked := [span for span in BOLD.findall(answer) if not span.rstrip().endswith(":")]:
        labelled = _label(marked[-1], question)  # "**Total cost: $12,480**"
        span = labelled[1] if labelled and labelled[1] else marked[-1]
        return "" if offers_two_marked(answer, marked[-1]) else _trimmed(span)
    if lines[0].endswith(":") and len(lines) > 1 and _label(lines[1]) is None:
        return _trimmed(lines[1])  # a heading and its value, not a heading over label lines
    commented = _DASHED_COMMENT.match(lines[0])
    head = commented.group(1) if commented else ""  # not "I apologize — the text is faint"
    named_head = head and not APOLOGY.match(head) and not _OTHER_SCRIPT.search(head)
    if named_head and _is_bare(head) and len(head.split()) <= 5:
        return _trimmed(head)  # "Linda Reeves — her name appears in the box"
    if 1 < len(lines) <= 3 and all(_is_name_part(line) for line in lines):
        lines = [" ".join(lines)]  # a name broken over lines: "Brown & Williamson\nTobacco ..."
    if (labelled := _labelled_value(lines, question)) is not None:
        return _trimmed(labelled)  # "Subtotal: ...\nTax: ...\nTotal due: $1,245.00"
    concluded = reading_of(lines[0]).parts("conclusion")[-1].lstrip(" ,")
    for part in (lines[0], concluded) if _YES_NO_QUESTION.match(question) else ():
        if said := YES_NO.match(part.lower()):  # "Yes, the form is signed", "..., so yes, it is"
            return part[: said.end()]
    if len(lines) == 1 and _as_written(lines[0], question):
        return _trimmed(lines[0])  # "Samples shipped by air freight" for "What is written ...?"
    sentence = lines[0] if _is_bare(lines[0]) else _answering_sentence(lines, question)
    narrowed = _narrowed(without_restatement(sentence, question))
    return "" if narrowed is None else _sentence_answer(narrowed, question, keep_asked_words)


def _corrected(answer: str, question: str) -> str | None:
    """What an answer settles on after its last self-correction ("47-1129. Wait, ... so it is
    47-1192."), less the "no" the correction opens with unless the question asks yes or no
    ("Actually no — ..., so Samsung."); None when cut off as it corrects itself ("The badge
    reads Ellen Marsh. Actually,")."""
    after = reading_of(answer).after_last("correction")
    if after is None:
        return answer
    if not re.search(r"\w", after):
        return None
    after = after.lstrip(" ,.:;—–-").rstrip()
    after = after if _YES_NO_QUESTION.match(question) else _OWN_NO.sub("", after)
    # the clause after the one naming the mistake, where it restates the question more: "24.2
    # is the 1991 figure; the 1990 column shows 22.4."
    *mistake, last = re.split(r";\s+|\s+[—–]\s+", after)
    asked = content_words(question)
    restates = [len(asked & content_words(part)) for part in (*mistake, last)]
    return last if mistake and restates[-1] > max(restates[:-1]) else after


def _narrowed(sentence: str) -> str | None:
    """The part of a sentence that holds the answer (after a turn, "so"); None for two readings."""
    if reading_of(sentence.split(": ", 1)[0]).has("two_readings"):
        return None  # "either 1979 or 1980: the stamp shows 1979 but the letter says 1980"
    settled, hedge = settled_part(sentence), HEDGE.search(sentence)
    if settled != sentence and HEDGE.search(settled):
        return None  # "looks like R. Patel, but it could also be R. Pastel"
    if hedge and states_reading(sentence[hedge.end() :]):
        return None  # "looks like $275.00, although it could also be read as $215.00"
    if settled != sentence and not _is_bare(settled):
        sentence = settled.strip()  # "planned for New York, but ... it was moved to Chicago"
    if reading_of(sentence).has("two_readings"):
        return None  # 'either "Project Greenleaf" or "Project Greenfield"'
    sentence = LONG_ASIDE.sub("", sentence)  # '7 (printed as "- 7 -")' states 7
    # "so" after a verb is no clause of its own: "The sender is therefore the signatory, ..."
    sentence = _CONCLUDING_ADVERB.sub(r" \1 ", sentence)
    conclusion = reading_of(f" {sentence}").parts("conclusion")  # "So August." is August
    one_value = len(conclusion[-1].split()) == 1  # "the year is 93, so 11/30/93"
    if len(conclusion) > 1 and (one_value or not _is_bare(conclusion[-1])):
        sentence = conclusion[-1]  # 'the last two are "59", so the box number is 2959'
    return sentence


def _sentence_answer(sentence: str, question: str, keep_asked_words: bool) -> str:
    """The answer a sentence states, by the first of these readings that finds one."""
    sentence = without_source(sentence)
    if quoted := [double or single for double, single in _QUOTED.findall(sentence)]:
        return _trimmed(_without_title(quoted[-1], question))
    if (label := _label(sentence, question)) is not None:
        return _trimmed(label[1])
    # after a colon, a part that restates the question: "it is a 2: the zip code is 27102"
    head, _, tail = sentence.rpartition(": ")
    if head and content_words(tail) & content_words(question) and not _is_bare(tail):
        sentence = tail
    latin = _LATIN_RUN.findall(sentence) if _OTHER_SCRIPT.search(sentence) else []
    asked_numbers = set(re.findall(r"\d[\d.,]*", question))  # "1982年的", not "3" in "2013"
    latin = [run for run in latin if run not in asked_numbers]
    named = [run for run in latin if re.search("[A-Za-z]", run)]  # not "约为 11%" beside it
    if len(latin) == 1 or (len(named) == 1 and _ASKS_WHICH_OR_WHO.match(question)):
        return _trimmed(named[0] if named else latin[0])  # "报告由 Marketing Research 编写。"
    placed = None if in_english(sentence) else _PLACED_NAME.search(sentence)
    if placed and _ASKS_PLACE.search(question):
        return _trimmed(placed[1])
    # after words of the sentence ("... ist an"), not in a bare name ("Council for Tobacco ...")
    inner = _INNER_FULL_NAME.finditer(sentence) if not in_english(sentence) else ()
    persons = [n[0] for n in inner if len(_LOWER_WORD.findall(sentence, 0, n.start())) > 1]
    if len(persons) == 1 and _ASKS_WHO.match(question):
        return _trimmed(persons[0])  # not the verb closing its clause: "... gerichtet"
    # a count stated in words is kept in words: ANLS compares strings ("Two hundred forty")
    counts = re.search(r"\d", sentence) and not _is_bare(sentence)
    if counts and (counted := stated_count(sentence, question)) is not None:
        return counted  # "a total of 250 cigarettes were tested, 25 from each ..."
    clause = _answering_clause(sentence, question)
    years = _YEAR.findall(clause) or _YEAR.findall(sentence)  # "..., and it was in 1985"
    if _ASKS_YEAR.search(question) and len(set(years)) == 1:
        return years[0]  # "Sales peaked in 1986 at $4.2 million"
    # a date among other numbers: "The meeting on June 5, 1991 had 14 attendees listed."
    dates, beside = set(_DATE.findall(clause)), holds_digit(_DATE.sub("", clause))
    if _ASKS_DATE.search(question) and len(dates) == 1 and beside:
        return dates.pop()
    phones = _PHONE.findall(clause)
    if len(phones) == 1:
        return phones[0]  # "For inquiries, please call (212) 555-0143"
    # "Marlboro had the highest market share in 1985 at 22.1%", but not "The meeting is ..."
    subject = subject_answer(clause, question) if _ASKS_WHICH_OR_WHO.match(question) else None
    if subject and not content_words(subject) & content_words(question):
        return _trimmed(subject)
    return _clause_tail(clause, question, keep_asked_words)


def _answering_clause(sentence: str, question: str) -> str:
    """The main clause, unless it only counts ("The table lists 6 samples, and the weight asked
    for is 2.5."): then the clause stating a value, else the last restating the question."""
    main = main_clause(sentence)
    # a clause that only counts has no value strength: not "The ad shows 2 people, and ..."
    if not re.search(r"\d", sentence) or value_strength(main) > 0 or _names_answer(main, question):
        return main
    stated = stating_clause(sentence, question, holds_digit, value_strength) or main
    if value_strength(stated) > 0:
        return stated
    parts = [part for clause in clauses(sentence) for part in AND_SPLIT.split(clause)]
    restating = (p for p in reversed(parts) if not holds_digit(p) and subject_restates(p, question))
    return next(restating, stated)


def _names_answer(clause: str, question: str) -> bool:
    """Whether a clause with no number restates the question and names a proper noun after its
    verb ("The meeting is the Annual Scientific Advisory Board Meeting"): it counts nothing."""
    # its subject of the question's words and those a restatement runs over ("shown", "listed")
    restating = f"{question} {' '.join(_RESTATING_WORDS)}"
    complement = None if holds_digit(clause) else restated_complement(clause, restating)
    return complement is not None and LEADING_ARTICLE.sub("", complement)[:1].isupper()


def _clause_tail(clause: str, question: str, keep_asked_words: bool) -> str:
    """What a clause states: a phrase as written, its one number, else what follows the words
    that restate the question."""
    if _is_bare(clause):
        # an imperative's object of the asked preposition: "Please return it to the Office"
        addressed = _after_asked_preposition(clause, question)
        if addressed and len(addressed.split()) < len(clause.split()) - 2:
            return _trimmed(LEADING_ARTICLE.sub("", addressed))
        agent = _PASSIVE.sub("", clause) if _ASKS_WHO.match(question) else clause
        if agent != clause:
            return _trimmed(agent)  # "Prepared by J. L. Charles." for "Who prepared ...?"
        clause = _before_unasked_count(clause, question)
        return _trimmed(clause) if keep_asked_words else _without_asked_words(clause, question)
    # a year the question names is its context, not the answer: "In 1979, $1.2 million was ..."
    # nor a count beside the value: "Item no. 3 costs $127.50 (10 units)."
    numbers = [n for n in _NUMBER_TOKEN.findall(_COUNT_BESIDE.sub("", clause)) if n not in question]
    in_name = _DATE.search(clause) or _NUMBER_IN_NAME.search(clause)  # "1875 Eye Street"
    if len(numbers) == 1 and len(clause.split()) > 3 and not in_name:
        # "A total of 240 participants were enrolled."; if kept, the asked word before it, or
        # their initials, as a gold may write it: "Room 210" for "What is the room number?",
        # "SN 40287" for "What is the serial number?"
        before = re.search(rf"([^\W\d_]+)\s+{re.escape(numbers[0])}", clause)
        word = before[1] if keep_asked_words and before else ""
        initials = word.isupper() and word.lower() in initialisms(question)
        if word and (initials or word.lower() in content_words(question)):
            return f"{word} {numbers[0]}"
        return numbers[0]
    tail = (
        _in_range(clause, question)
        or _after_asked_preposition(clause, question)
        or _after_restated(clause, question)
        or _after_key_phrase(clause)
    )
    tail = _VALUE_PREPOSITION.sub("", _without_title(tail, question))  # "is for $1,500.00"
    if tail != clause:
        # a name less the noun after it that the question asks about: "Hyatt Regency hotel",
        # "Research and Development division"
        tail = LEADING_ARTICLE.sub("", tail)
        tail = tail if keep_asked_words else _without_asked_words(tail, question)  # "code A7-X"
        *name, last = tail.rstrip(".").split() or [""]
        named = (
            name and name[0][0].isupper() and all(w[0].isupper() or w in STOP_WORDS for w in name)
        )
        if named and last in content_words(question):
            tail = " ".join(name)
        tail = _NOUN_BEFORE_NAME.sub("", tail)  # "the handwritten name J. M. Kessler"
    return _trimmed(tail)


def _before_unasked_count(phrase: str, question: str) -> str:
    """A phrase's value less a count after it that the question does not ask for ("$4,560.00
    across 7 line items")."""
    first = _NUMBER_TOKEN.search(phrase)
    rest = phrase[first.end() :] if first else ""
    counts = only_counts(rest) and stated_count(phrase, question) is None
    return phrase[: first.end()] if counts and len(_NUMBER_TOKEN.findall(rest)) == 1 else phrase


def _without_title(span: str, question: str) -> str:
    """For a question asking for a person, the name less its title ("R. J. Marshall, VP")."""
    if not _ASKS_WHO.match(question):
        return span
    name, *after = _TITLE_AFTER_NAME.split(span, maxsplit=1)
    # a role before the name: "the signatory, Robert Klein"
    return after[0] if after and LEADING_ARTICLE.match(name) and after[0][:1].isupper() else name


def _answer_lines(text: str, question: str) -> list[str]:
    """The answer's lines, a table's row as a label line ("| Date | May 5 |"), less list markers;
    only the last when it is a sentence after a list that restates the question."""
    lines = []
    for line in filter(None, map(str.strip, text.splitlines())):
        cells = [cell.strip() for cell in line.strip("|").split("|")] if line[0] == "|" else []
        lines.append(f"{cells[0]}: {', '.join(cells[1:])}" if len(cells) > 1 else line)
    lines[:-1] = [_HEADING.sub(r"\1:", line) for line in lines[:-1]]  # a heading over a line
    lines[-1:] = [_HEADING_MARK.sub("", line) for line in lines[-1:]]  # "## Summary of Results"
    items = [_LIST_ITEM.match(line) is not None for line in lines]
    after_list = any(items[:-1]) and not items[-1] and not _is_bare(lines[-1])
    if after_list and content_words(lines[-1]) & content_words(question):
        return lines[-1:]
    # a line or sentence a loop repeats is said once: "Paul Nagel\n\nPaul Nagel\n\nPaul Na"
    lines = [_said_once(line) for line, _ in itertools.groupby(lines)]
    return [_LIST_ITEM.sub("", line) for line in lines]


def _said_once(line: str) -> str:
    """A line less the sentences a loop repeats: "Room 407. Room 407. Room 407." is Room 407."""
    said = sentences(line)
    once = [sentence for sentence, _ in itertools.groupby(said)]
    return line if len(once) == len(said) else " ".join(once)


def _labelled_value(lines: list[str], question: str) -> str | None:
    """The short bare line that label lines end on ("Men: 45%\nWomen: 51%\n\nWomen"); else of
    several label lines, the value of the one whose label restates the question."""
    labels = [_label(line, question) for line in lines]
    closes = len(lines) > 1 and all(labels[:-1]) and labels[-1] is None
    if closes and len(lines[-1].split()) <= 4 and _is_bare(lines[-1]):
        return lines[-1]
    labelled = [label for label in labels if label is not None and label[1]]  # not a heading
    wanted = content_words(question)
    restating = max(labelled, key=lambda pair: len(wanted & content_words(pair[0])), default=None)
    return restating[1] if len(labelled) > 1 and wanted & content_words(restating[0]) else None


def _label(line: str, question: str = "") -> tuple[str, str] | None:
    """(label, value) of a label line of at most three words ("Total due: $1,245.00"), or of more
    that restate the question ("Dr. Allen's phone number: 212-555-0148")."""
    found = _LABEL.match(line)
    label = ASIDE.sub("", found[1]) if found else ""  # "Distribution list (first entry)"
    short = found and (
        len(label.split()) <= 3 or len(content_words(label) & content_words(question)) > 1
    )
    return (found[1], found[2]) if short else None


def _in_range(clause: str, question: str) -> str | None:
    """The start of a range ("from X to Y") for a question that asks when it begins."""
    found = _RANGE.search(clause)
    return found.group("start") if found and _ASKS_START.search(question) else None


def _is_name_part(line: str) -> bool:
    """A short line with no verb, label or full stop: part of a name broken over lines."""
    one_phrase = len(sentences(line)) == 1 and not line.endswith(".")  # "P.O. Box 1487"
    return len(line.split()) <= 6 and _is_bare(line) and _label(line) is None and one_phrase


def _as_written(line: str, question: str) -> bool:
    """For a question asking for text as written, a phrase whose one verb is a participle, which
    is the text itself: "Samples shipped by air freight" has no "by" agent to read after."""
    phrase = not _PARTICIPLE_PHRASE.search(f" {line} ") and not _is_bare(line)
    return phrase and _label(line) is None and _ASKS_TEXT.search(question) is not None


def _is_bare(text: str) -> bool:
    """A phrase or a label line with no verb, not a sentence ("From: Tobacco Institute")."""
    return _SENTENCE_VERB.search(f" {text} ") is None


def _after_asked_preposition(clause: str, question: str) -> str | None:
    """What follows the last use of the preposition a question asks with ("To whom ...?")."""
    asked = _ASKED_PREPOSITION.search(question)
    word = asked[asked.lastindex].lower() if asked else ""
    at = f" {clause.lower()} ".rfind(f" {word} ") if word else -1
    return None if at < 0 else _before_trailing_place(clause[at + len(word) :].strip(), question)


def _answering_sentence(lines: list[str], question: str) -> str:
    """The sentence that states the answer: holding the kind of value asked for (a date for
    "when"), stating a value after its verb, or restating the question; else the first line."""
    kept = [s for s in sentences("\n".join(lines)) if not (is_cut_off(s) or _only_apology(s))]
    if len(kept) < 2:  # "The PI is Dr. Helen M. Carver. Her affiliation is listed as the"
        return kept[0] if kept else lines[0]
    first = kept[0]  # not the first entry of a list: "1974: 12.1M; 1975: 11.8M; ..."
    if _is_bare(first) and len(first.split()) <= 4 and not first[0].islower() and ": " not in first:
        return first  # "18-29. Younger adults are much more likely ...": said first
    if not question:
        return lines[0]
    asks_date = _ASKS_DATE.search(question) is not None
    numeric = all(holds_digit(sentence) for sentence in kept)

    def strength(sentence: str) -> int:
        dated = asks_date and _DATE.search(sentence) is not None
        valued = value_strength(sentence) if numeric else 0
        # a count the question does not ask for: "There are 3 sponsors listed; the main one is"
        unasked = only_counts(sentence) and stated_count(sentence, question) is None
        restates = subject_restates(sentence, f"{question} {' '.join(_RESTATING_WORDS)}")
        return 2 * (dated - unasked) + valued + int(restates)  # "The missing letter is K."

    chosen = stating_clause(
        "\n".join(kept), question, lambda _: True, strength, whole_sentences=True
    )
    return chosen or lines[0]


def _only_apology(sentence: str) -> bool:
    """Whether a sentence only apologises ("Sorry about that."), stating no answer."""
    apology = APOLOGY.match(sentence)
    return apology is not None and _is_bare(sentence[apology.end() :])


def _without_asked_words(phrase: str, question: str) -> str:
    """The one number of a phrase whose other words restate the question ("64% of respondents
    agreed"), else less the asked words before a number ("Page 14" for "the page number?")."""
    numbers = _NUMBER_TOKEN.findall(phrase)
    others = content_words(_NUMBER_TOKEN.sub(" ", phrase))
    words = phrase.split()
    if len(numbers) == 1 and len(words) > 3 and others and others <= content_words(question):
        return numbers[0]
    asked = {word.removesuffix("s") for word in content_words(question)}
    cut, most = 0, min(2, len(words) - 1)
    while cut < most and spelled_out(words[cut].lower()).strip(".,:").removesuffix("s") in asked:
        cut += 1
    rest = " ".join(words[cut:])
    return _trimmed(rest if cut and re.search(r"\d", rest) else phrase)


def _after_restated(clause: str, question: str) -> str | None:
    """What follows a clause's restatement of the question, from its first question word to the
    last key phrase in that run ("The date mentioned in the letter is ...")."""
    asked = content_words(question)
    words = clause.split()
    first = next((i for i, w in enumerate(words) if w.lower().strip(_WORD_EDGES) in asked), None)
    if first is None:
        return None
    leads = [i for i, word in enumerate(words[:first]) if f" {word.lower()} " in _TEXT_KEY_PHRASES]
    if leads and words[first][0].isupper():
        return " ".join(words[leads[-1] + 1 :])  # a name: "is from the University of Minnesota"
    # the question's verb as the statement inflects it: "represents" for "What does ... represent?"
    verbs = {w for w in map(str.lower, words) if w not in asked and inflects(w, asked)}
    restating, end, copula = asked | _RESTATING_WORDS | verbs, first, False
    while end + 1 < len(words) and words[end + 1].lower().strip(_WORD_EDGES) in restating:
        copula = copula or words[end].lower() in _COPULA_WORDS
        if copula and words[end + 1][0].isupper():
            break  # a name after the verb: "The journal is the Journal of the ..."
        end += 1
    keys = [
        i
        for i in range(first, end + 1)
        if f" {words[i].lower()} " in _TEXT_KEY_PHRASES or words[i].lower() in verbs
    ]
    if not keys or keys[-1] == len(words) - 1:
        return None
    tail = _LATER_COPULA.sub("", " ".join(words[keys[-1] + 1 :]))
    return _before_trailing_place(_PASSIVE.sub("", tail), question)


def _before_trailing_place(tail: str, question: str) -> str:
    """A tail less a place after it ("Dr. Whittaker at the Center"), unless asked where."""
    return tail if _ASKS_WHERE.search(question) else _TRAILING_PLACE.split(tail, maxsplit=1)[0]


def _after_key_phrase(sentence: str) -> str:
    """The shortest tail after a key phrase's first use, past a participle ("est adressée à")."""
    lowered = f" {sentence.lower()}"
    ends = [at + len(word) - 1 for word in _TEXT_KEY_PHRASES if (at := lowered.find(word)) >= 0]
    return _PASSIVE.sub("", sentence[max(ends) :]) if ends else sentence


def _trimmed(span: str) -> str:
    span = span.strip().strip("\"'“”*").strip().rstrip(",;").strip()
    return (span if span.endswith("..") else without_final_period(span)).strip()
