"""Checks on the text a record puts in front of the model.

A response that carries a verdict (`\\boxed{1}`, `<think>`, `[[A>B]]`, "The better response:")
teaches the critic to copy it instead of judging; a Qwen special token such as `<|image_pad|>` in
text becomes a media placeholder at tokenisation and breaks the forward pass with "Image features
and image tokens do not match". Both are rejected here, before training ever sees them.

Every check compares `comparable(text)`, never the text as written: a fullwidth
`＼ｂｏｘｅｄ｛１｝`, a mathematical-bold `𝐛𝐨𝐱𝐞𝐝` or a `\\box<U+200B>ed{1}` reads as the same
verdict to a model and a person, but not to a regular expression. Only the comparison is
normalised; the record keeps the text exactly as the source wrote it.
"""

from __future__ import annotations

import re

from mmcritic.data.schema import RecordError
from mmcritic.rewards.parsing import VERDICT_MARKER
from mmcritic.text import comparable

SPECIAL_TOKEN = re.compile(r"<\|[a-z_]+\|>")
DEFAULT_MAX_RESPONSE_CHARS = 20_000


def check_question(question: str) -> str:
    """The question, stripped, or a RecordError if it is empty or carries special tokens."""
    question = question.strip()
    seen = comparable(question)
    if not seen.strip():
        raise RecordError("empty_question", "the question is empty")
    _reject_special_tokens(question, seen, "the question")
    return question


def check_response(response: str, label: str, max_chars: int = DEFAULT_MAX_RESPONSE_CHARS) -> str:
    """The response, stripped, or a RecordError saying why it cannot be judged fairly."""
    response = response.strip()
    seen = comparable(response)
    if not seen.strip():
        raise RecordError("empty_response", f"{label} is empty")
    if len(response) > max_chars:
        raise RecordError(
            "response_too_long",
            f"{label} has {len(response):,} characters, over the limit of {max_chars:,} "
            "(--max-response-chars)",
        )
    _reject_special_tokens(response, seen, label)
    injected = VERDICT_MARKER.search(seen)
    if injected:
        raise RecordError(
            "verdict_injection",
            f"{label} contains a verdict marker {injected.group(0)!r}"
            f"{_as_seen(response, injected)}",
        )
    return response


def _reject_special_tokens(text: str, seen: str, label: str) -> None:
    """Rejects `text` when `seen`, its comparable form, holds a special token."""
    token = SPECIAL_TOKEN.search(seen)
    if token:
        raise RecordError(
            "special_token",
            f"{label} contains the model's special token {token.group(0)!r}{_as_seen(text, token)}",
        )


def _as_seen(text: str, found: re.Match) -> str:
    """A note for a marker found only after normalisation, which a search of the source for the
    quoted marker would not find."""
    if found.group(0) in text:
        return ""
    return " (written in compatibility forms or with invisible characters)"
