"""Checks on the text a record puts in front of the model.

A response that carries a verdict (`\\boxed{1}`, `<think>`, `[[A>B]]`, "The better response:")
teaches the critic to copy it instead of judging; a Qwen special token such as `<|image_pad|>` in
text becomes a media placeholder at tokenisation and breaks the forward pass with "Image features
and image tokens do not match". Both are rejected here, before training ever sees them.
"""

from __future__ import annotations

import re

from mmcritic.data.schema import RecordError
from mmcritic.rewards.parsing import VERDICT_MARKER

SPECIAL_TOKEN = re.compile(r"<\|[a-z_]+\|>")
DEFAULT_MAX_RESPONSE_CHARS = 20_000


def check_question(question: str) -> str:
    """The question, stripped, or a RecordError if it is empty or carries special tokens."""
    question = question.strip()
    if not question:
        raise RecordError("empty_question", "the question is empty")
    _reject_special_tokens(question, "the question")
    return question


def check_response(response: str, label: str, max_chars: int = DEFAULT_MAX_RESPONSE_CHARS) -> str:
    """The response, stripped, or a RecordError saying why it cannot be judged fairly."""
    response = response.strip()
    if not response:
        raise RecordError("empty_response", f"{label} is empty")
    if len(response) > max_chars:
        raise RecordError(
            "response_too_long",
            f"{label} has {len(response):,} characters, over the limit of {max_chars:,} "
            "(--max-response-chars)",
        )
    _reject_special_tokens(response, label)
    injected = VERDICT_MARKER.search(response)
    if injected:
        raise RecordError(
            "verdict_injection", f"{label} contains a verdict marker {injected.group(0)!r}"
        )
    return response


def _reject_special_tokens(text: str, label: str) -> None:
    token = SPECIAL_TOKEN.search(text)
    if token:
        raise RecordError(
            "special_token", f"{label} contains the model's special token {token.group(0)!r}"
        )
