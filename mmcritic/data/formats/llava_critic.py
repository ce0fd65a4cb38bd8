"""LLaVA-Critic-113k (`lmms-lab/llava-critic-113k`), configs `pairwise` and `pointwise`.

Each row holds `id`, `source`, `image` and `conversations`: a human turn with the judging
instructions, the question and the response(s), then a gpt turn with a rationale ending in a
verdict or a score. The instructions come in ~30 wordings; the parser below finds the question and
responses by their markers ("The first response:", "Response 1:", "Response A:", "[The Start of
Assistant 1's Answer]", ...) and the verdict by its phrasing ("The better response: [first]",
"Answer 2 is better", arena `[[A>B]]`, LLaVA-Bench's two leading scores). Only the question, the
responses and the label leave this module: the GPT rationale and the original criteria never
reach the new prompt.
"""

from __future__ import annotations

import re
from typing import Any

from mmcritic.data.formats.base import (
    FormatOptions,
    PairwiseItem,
    PointwiseItem,
    RawMedia,
    check_media_tags,
    media_values,
    message_text,
    pick_column,
    register_format,
    row_id,
    row_source,
    strip_media_tags,
)
from mmcritic.data.schema import RecordError
from mmcritic.patterns import anchored

FLAGS = re.IGNORECASE


def marker(starts: str, body: str) -> re.Pattern:
    """A case-insensitive marker, anchored on the characters it can begin with."""
    return anchored(starts, body, FLAGS)


FIRST = r"(?:1|A|first)"
SECOND = r"(?:2|B|second)"
NOUNS = r"(?:Response|Answer|Assistant|Output|Candidate)"

# (first-response marker, second-response marker, end-of-response marker or None), tried in order.
PAIR_STYLES: list[tuple[re.Pattern, re.Pattern, re.Pattern | None]] = [
    (
        re.compile(r"\[The Start of Assistant\s*(?:1|A)'?s? Answer\]", FLAGS),
        re.compile(r"\[The Start of Assistant\s*(?:2|B)'?s? Answer\]", FLAGS),
        re.compile(r"\[The End of Assistant\s*(?:1|2|A|B)'?s? Answer\]", FLAGS),
    ),
    (
        marker("tf", r"\b(?:The\s+)?first\s+(?:response|answer)\s*:"),
        marker("ts", r"\b(?:The\s+)?second\s+(?:response|answer)\s*:"),
        None,
    ),
    (
        marker(r"\[raoc", rf"\[\s*{NOUNS}\s*(?:1|A)\s*\]\s*:?|\b{NOUNS}\s*(?:1|A)\s*:"),
        marker(r"\[raoc", rf"\[\s*{NOUNS}\s*(?:2|B)\s*\]\s*:?|\b{NOUNS}\s*(?:2|B)\s*:"),
        None,
    ),
]
SINGLE_RESPONSE = marker(
    r"\[tra",
    r"(?:\[The Start of (?:the\s+)?Assistant'?s? Answer\]|\[\s*(?:Response|Answer)\s*\]\s*:?"
    r"|\b(?:The\s+)?(?:response|answer)\s+to\s+evaluate\s*:|\b(?:The\s+)?(?:Response|Answer)\s*:)",
)
SINGLE_END = re.compile(r"\[The End of (?:the\s+)?Assistant'?s? Answer\]", FLAGS)
QUESTION = marker(
    r"\[uqi",
    r"(?:\[\s*(?:User\s+)?(?:Question|Query|Instruction)\s*\]\s*:?"
    r"|\b(?:User\s+)?(?:Question|Query|Instruction)\s*:)",
)
# Where the last response ends when no end marker closes it: a role tag, a line that asks the
# judge for its verdict, or a paragraph that goes back to instructing the judge.
TRAILER = marker(
    r"\n\[",
    r"\n\s*(?:ASSISTANT|USER|GPT)\s*:|\[The End of"
    r"|\n\s*(?=(?:Which (?:response|answer|one) is better|Please (?:evaluate|compare|judge|rate|"
    r"output|identify|determine|provide)|(?:Rate|Score) (?:it|the response)|Give (?:it |the "
    r"response )?a score)\b)"
    r"|\n\s*\n\s*(?=(?:Please|Evaluate|Based on|Output|Now,? |After|Consider|Your (?:task|"
    r"evaluation|judgment)|Compare|Criteria|Provide|Remember|Instructions?|Evaluation|Judge|"
    r"Assess|Determine|Rate|Score|Give)\b)",
)

# What instructions to a judge speak of; a paragraph cut off after the last response without
# any of these may still be part of that response.
JUDGE_WORDS = re.compile(
    r"respon|answer|assistant|better|judg|evaluat|score|rat(?:e|ing)|verdict|compar|prefer|"
    r"criteri|USER\s*:|ASSISTANT\s*:|GPT\s*:|\[The End of",
    FLAGS,
)
BRACKETS = re.compile(r"[\[\]]")
CHOICE_WORDS = {"1": "1", "a": "1", "first": "1", "2": "2", "b": "2", "second": "2"}
# The first EXPLICIT_VERDICTS patterns are stated conclusions; the rest are phrasings a rationale
# may use along the way.
EXPLICIT_VERDICTS = 6
VERDICTS: list[tuple[re.Pattern, str | None]] = [
    (re.compile(r"\[\[\s*A\s*>>?\s*B\s*\]\]|\[\[\s*B\s*<<?\s*A\s*\]\]"), "1"),
    (re.compile(r"\[\[\s*B\s*>>?\s*A\s*\]\]|\[\[\s*A\s*<<?\s*B\s*\]\]"), "2"),
    (re.compile(r"\[\[\s*A\s*=\s*B\s*\]\]|\[\[\s*C\s*\]\]|\[\[\s*tie\s*\]\]", FLAGS), "tie"),
    (re.compile(r"\[\[\s*(?P<c>A|B|1|2)\s*\]\]"), None),
    (
        marker(
            "b",
            rf"better\s+(?:response|answer|one)\s*(?:is\s*:?|:)\s*\[?\s*(?:the\s+)?(?:{NOUNS}\s*)?"
            rf"(?P<c>1|2|A|B|first|second)\b",
        ),
        None,
    ),
    (
        marker("o", rf"overall\s+judg(?:e)?ment\s*:\s*{NOUNS}\s*(?P<c>1|2|A|B)\b"),
        None,
    ),
    (
        marker(
            "tfs",
            r"\b(?:the\s+)?(?P<c>first|second)\s+(?:response|answer|one)\s+is\s+(?:clearly\s+)?"
            r"(?:the\s+)?(?:better|superior|preferred|stronger|more\s+\w+)",
        ),
        None,
    ),
    (
        marker(
            "raoc",
            rf"\b{NOUNS}\s*\[?(?P<c>1|2|A|B)\]?\s+is\s+(?:clearly\s+|overall\s+)?(?:the\s+)?"
            rf"(?:better|superior|preferred|stronger)",
        ),
        None,
    ),
    (
        marker(
            "p",
            rf"\bprefer\s+(?:the\s+)?(?:(?P<c>first|second)\s+(?:response|answer)|{NOUNS}\s*"
            rf"(?P<d>1|2|A|B)\b)",
        ),
        None,
    ),
    (
        marker(
            "eiatn",
            r"equally\s+(?:good|bad|well|valid|helpful|accurate|strong|weak|poor|correct)"
            r"|\b(?:is|as|a)\s+a\s+tie\b|\btie\s*\]|\bneither\s+(?:response|answer)\s+is\s+better",
        ),
        "tie",
    ),
]
LEADING_SCORES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[ ,]\s*(\d+(?:\.\d+)?)\s*(?:\n|$)")
SCORE_PATTERNS = [
    re.compile(r"\[\[\s*(?P<s>\d+(?:\.\d+)?)\s*\]\]"),
    marker(r"\d", r"(?P<s>\d+(?:\.\d+)?)\s*(?:/|out\s+of)\s*(?P<scale>10|100)\b"),
    marker("sr", r"\b(?:score|rating)\s*(?:is|of|:)?\s*[*\[]*\s*(?P<s>\d+(?:\.\d+)?)"),
]
SCALE_IN_INSTRUCTIONS = marker(
    "o1s", r"(?:out\s+of|1\s*(?:-|to)|scale\s+of\s+1\s*(?:-|to))\s*(?P<scale>10|100)\b"
)


@register_format(
    "llava-critic-pairwise",
    kind="pairwise",
    description="LLaVA-Critic-113k pairwise rows: id, source, image, conversations",
)
def parse_pairwise(row: dict[str, Any], index: int, options: FormatOptions) -> PairwiseItem:
    human, gpt = _turns(row, options)
    media = _media(row, options)
    check_media_tags(human, media)
    question, first, second = parse_pair_prompt(human)
    return PairwiseItem(
        id=row_id(row, index, options, "llava_critic"),
        source=row_source(row, options, "llava-critic"),
        question=question,
        responses=(first, second),
        better=parse_pair_verdict(gpt),
        media=media,
    )


@register_format(
    "llava-critic-pointwise",
    kind="pointwise",
    description="LLaVA-Critic-113k pointwise rows: one response and the score it was given",
)
def parse_pointwise(row: dict[str, Any], index: int, options: FormatOptions) -> PointwiseItem:
    human, gpt = _turns(row, options)
    media = _media(row, options)
    check_media_tags(human, media)
    question, response = parse_single_prompt(human)
    score, scale = parse_score(gpt, human)
    return PointwiseItem(
        id=row_id(row, index, options, "llava_critic"),
        source=row_source(row, options, "llava-critic"),
        question=question,
        response=response,
        score=score,
        scale=scale,
        media=media,
    )


def _turns(row: dict[str, Any], options: FormatOptions) -> tuple[str, str]:
    """The first human turn and the gpt turn after it."""
    name = pick_column(row, "conversations", ("conversations", "conversation", "messages"), options)
    if name is None:
        raise RecordError(
            "missing_field", f"no conversations column in the row; it has {sorted(map(str, row))}"
        )
    turns = row[name]
    if not isinstance(turns, list) or not turns:
        kind = "an empty list" if turns == [] else f"a {type(turns).__name__}"
        raise RecordError("malformed_field", f"the {name} column is {kind}, not a list of turns")
    roles = [_turn_role(turn) for turn in turns]
    if "human" not in roles or "gpt" not in roles[roles.index("human") :]:
        raise RecordError("malformed_field", f"conversations need a human then a gpt turn: {roles}")
    human_at = roles.index("human")
    gpt_at = roles.index("gpt", human_at)
    return (
        message_text(_turn_value(turns[human_at]), "human turn"),
        message_text(_turn_value(turns[gpt_at]), "gpt turn"),
    )


def _turn_role(turn: Any) -> str:
    if not isinstance(turn, dict):
        raise RecordError("malformed_field", f"a conversation turn is not an object: {turn!r:.80}")
    role = str(turn.get("from", turn.get("role", ""))).lower()
    return {"user": "human", "assistant": "gpt"}.get(role, role)


def _turn_value(turn: dict[str, Any]) -> Any:
    return turn.get("value", turn.get("content"))


def _media(row: dict[str, Any], options: FormatOptions) -> RawMedia:
    image = pick_column(row, "image", ("image", "images", "image_path"), options)
    return RawMedia(images=media_values(row[image]) if image else [])


def parse_pair_prompt(human: str) -> tuple[str, str, str]:
    """(question, first response, second response) from a pairwise human turn."""
    text = strip_media_tags(human)
    for first_marker, second_marker, end_marker in PAIR_STYLES:
        first = first_marker.search(text)
        second = second_marker.search(text, first.end()) if first else None
        if first and second:
            _require_one_split(text, first_marker, first, second_marker, second)
            first_text = _segment(text, first.end(), second.start(), end_marker)
            second_text = _segment(text, second.end(), len(text), end_marker or TRAILER)
            question = _question_before(text, first.start())
            return question, first_text, second_text
    raise RecordError("unparseable_prompt", "found no pair of response markers in the human turn")


def _require_one_split(
    text: str,
    first_marker: re.Pattern,
    first: re.Match,
    second_marker: re.Pattern,
    second: re.Match,
) -> None:
    """A response that quotes a marker ("... unlike the second response: ...") leaves no one
    place to split the turn: such a row is rejected rather than cut at a guess. Any other match
    of a marker than the one used, before or after it, is a quote (`first` is its marker's
    earliest match, found from the start)."""
    quoted = {
        "first": first_marker.search(text, first.end()) is not None,
        "second": second_marker.search(text).start() < second.start()
        or second_marker.search(text, second.end()) is not None,
    }
    for label, found in quoted.items():
        if found:
            raise RecordError(
                "ambiguous_split",
                f"the {label}-response marker appears more than once, so where the responses "
                "begin and end is a guess",
            )


def parse_single_prompt(human: str) -> tuple[str, str]:
    """(question, response) from a pointwise human turn."""
    text = strip_media_tags(human)
    marker = _last_match(SINGLE_RESPONSE, text)
    if marker is None:
        raise RecordError("unparseable_prompt", "found no response marker in the human turn")
    end_marker = SINGLE_END if SINGLE_END.search(text) else TRAILER
    response = _segment(text, marker.end(), len(text), end_marker)
    return _question_before(text, marker.start()), response


def _question_before(text: str, end: int) -> str:
    marker = _last_match(QUESTION, text, end)
    if marker is None:
        raise RecordError("unparseable_question", "found no question marker before the responses")
    question = _unbracket(text[marker.end() : end])
    if not question:
        raise RecordError("empty_question", "the question is empty")
    return question


def _segment(text: str, start: int, stop: int, end_marker: re.Pattern | None) -> str:
    """Text between two markers, cut at an end marker, with one layer of [brackets] removed.

    A last response has no end marker of its own; it is cut where the instructions to the judge
    resume (`TRAILER`). A cut-off paragraph that does not speak of the responses or the verdict
    may be the response's own last paragraph ("Please note ..."), so that row is rejected."""
    if end_marker is not None:
        end = end_marker.search(text, start, stop)
        if end:
            if end_marker is TRAILER and not JUDGE_WORDS.search(text, end.start(), stop):
                raise RecordError(
                    "ambiguous_split",
                    f"the text after the last response ({text[end.start() : stop].strip()!r:.80})"
                    " may belong to it or to the instructions",
                )
            stop = end.start()
    return _unbracket(text[start:stop])


def _unbracket(segment: str) -> str:
    """Removes the [..] some wordings put around a question or response, when it closes it."""
    segment = segment.strip()
    if segment.startswith("["):
        depth = 0
        for bracket in BRACKETS.finditer(segment):
            depth += 1 if bracket.group() == "[" else -1
            if depth == 0:
                position = bracket.start()
                inner = segment[1:position].strip()
                return inner if segment[position + 1 :].strip() == "" else segment
    return segment


def _last_match(pattern: re.Pattern, text: str, end: int | None = None) -> re.Match | None:
    last = None
    for match in pattern.finditer(text, 0, len(text) if end is None else end):
        last = match
    return last


def parse_pair_verdict(gpt: str) -> str:
    """ "1", "2" or "tie", from the judge's stated conclusion.

    Explicit conclusions ("The better response: [2]", "Overall Judgment: Answer 1", `[[A>B]]`)
    decide. A judgement that contradicts its conclusion (two different explicit conclusions,
    or an informal verdict after the conclusion that differs from it, as in "... Actually the
    first response is better") is rejected as `ambiguous_verdict`. Without an explicit
    conclusion the last informal verdict is the judge's ("Response 1 is better at detail, but
    Response 2 is better overall" is 2); without any verdict, LLaVA-Bench-style leading scores
    decide."""
    explicit = _verdicts(gpt, VERDICTS[:EXPLICIT_VERDICTS])
    if explicit:
        last_position, choice = max(explicit)
        informal = _verdicts(gpt, VERDICTS[EXPLICIT_VERDICTS:], last_position + 1)
        later = {c for _, c in informal}
        if len({c for _, c in explicit} | later) > 1:
            raise RecordError("ambiguous_verdict", _contradiction(explicit, informal))
        return choice
    informal = _verdicts(gpt, VERDICTS[EXPLICIT_VERDICTS:])
    if informal:
        return informal[-1][1]
    scores = LEADING_SCORES.match(gpt)
    if scores:
        first, second = float(scores.group(1)), float(scores.group(2))
        return "tie" if first == second else ("1" if first > second else "2")
    raise RecordError("unparseable_verdict", "found no verdict in the gpt turn")


def _verdicts(
    gpt: str, patterns: list[tuple[re.Pattern, str | None]], start: int = 0
) -> list[tuple[int, str]]:
    """(position, choice) of every verdict the patterns find from `start` on, in order."""
    found = []
    for pattern, fixed in patterns:
        for match in pattern.finditer(gpt, start):
            choice = fixed or CHOICE_WORDS[(match.group("c") or match.groupdict().get("d")).lower()]
            found.append((match.start(), choice))
    return sorted(found)


def _contradiction(explicit: list[tuple[int, str]], informal: list[tuple[int, str]]) -> str:
    stated = ", ".join(choice for _, choice in sorted(explicit + informal))
    return f"the judgement states different verdicts ({stated})"


def parse_score(gpt: str, human: str) -> tuple[float, int]:
    """(score, scale) from a pointwise judgement; the scale comes from the judgement, else the
    instructions, else the score's own size."""
    found = [m for pattern in SCORE_PATTERNS for m in pattern.finditer(gpt)]
    if not found:
        raise RecordError("unparseable_score", "found no score in the gpt turn")
    match = max(found, key=lambda m: m.start())
    score = float(match.group("s"))
    scale_text = match.groupdict().get("scale")
    if scale_text is None:
        instructed = SCALE_IN_INSTRUCTIONS.search(human)
        scale_text = instructed.group("scale") if instructed else ("10" if score <= 10 else "100")
    scale = int(scale_text)
    if not 0 <= score <= scale:
        raise RecordError("bad_label", f"score {score:g} is outside 0..{scale}")
    return score, scale
