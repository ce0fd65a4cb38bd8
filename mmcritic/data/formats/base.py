"""What every source format parses into, the format registry, and column look-up.

A format reads one raw row and returns a parsed item (the question, the responses or answer, the
raw media values) or raises RecordError. It knows nothing of prompts, media files or output:
`mmcritic.data.convert` does those once for every format.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mmcritic.data.schema import RecordError

IMAGE_TAG = re.compile(r"<image>\s*", re.IGNORECASE)
VIDEO_TAG = re.compile(r"<video>\s*", re.IGNORECASE)


@dataclass
class RawMedia:
    """Media values exactly as the source holds them (paths, byte structs, PIL images)."""

    images: list[Any] = field(default_factory=list)
    videos: list[Any] = field(default_factory=list)


@dataclass
class PairwiseItem:
    """Two responses to one question; `better` is "1", "2" or "tie" in the given order."""

    id: str
    source: str
    question: str
    responses: tuple[str, str]
    better: str
    media: RawMedia
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class PointwiseItem:
    """One response and the score a judge gave it on a 1..scale scale."""

    id: str
    source: str
    question: str
    response: str
    score: float
    scale: int
    media: RawMedia
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class VerifiableItem:
    """A question whose answer a rule can check, already in verifiable form."""

    id: str
    source: str
    question: str
    answer: str
    media: RawMedia
    meta: dict[str, Any] = field(default_factory=dict)


Item = PairwiseItem | PointwiseItem | VerifiableItem


@dataclass(frozen=True)
class FormatOptions:
    """Options a format reads: column overrides (`{"chosen": "preferred"}`) and the default
    source name for rows that carry none."""

    columns: dict[str, str] = field(default_factory=dict)
    source_name: str | None = None


@dataclass(frozen=True)
class Format:
    name: str
    kind: str
    parse: Callable[[dict[str, Any], int, FormatOptions], Item]
    description: str


FORMATS: dict[str, Format] = {}


def register_format(name: str, kind: str, description: str):
    """Registers a parser under a `--format` name; a second parser for one name is a bug."""

    def decorator(parse: Callable[[dict[str, Any], int, FormatOptions], Item]):
        if name in FORMATS:
            raise ValueError(f"format {name!r} is registered twice")
        FORMATS[name] = Format(name, kind, parse, description)
        return parse

    return decorator


def get_format(name: str) -> Format:
    import mmcritic.data.formats  # noqa: F401  (registers the built-in formats)

    if name not in FORMATS:
        raise ValueError(f"unknown format {name!r}; valid formats: {sorted(FORMATS)}")
    return FORMATS[name]


def pick_column(
    row: dict[str, Any], role: str, aliases: Sequence[str], options: FormatOptions
) -> str | None:
    """The row's column for a role: the user's override, else the first alias present."""
    if role in options.columns:
        name = options.columns[role]
        if name not in row:
            raise RecordError(
                "missing_field",
                f"column {name!r} (given for {role}) is not in the row; it has {sorted(row)}",
            )
        return name
    return next((name for name in aliases if name in row and row[name] is not None), None)


def require_text(
    row: dict[str, Any], role: str, aliases: Sequence[str], options: FormatOptions
) -> str:
    """The text in a required column, or a RecordError naming the columns the row has."""
    name = pick_column(row, role, aliases, options)
    if name is None:
        raise RecordError(
            "missing_field",
            f"no {role} column (looked for {list(aliases)}); the row has {sorted(row)}",
        )
    return message_text(row[name], role)


def message_text(value: Any, role: str) -> str:
    """Text from a plain string or from the chat-message shapes preference sets use
    (`[{"role": "assistant", "content": ...}]`, content parts `{"type": "text", "text": ...}`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return message_text(value.get("content", value.get("text", value.get("value"))), role)
    if isinstance(value, list) and value:
        texts = [message_text(part, role) for part in value if _is_text_part(part)]
        return "\n".join(text for text in texts if text)
    raise RecordError("malformed_field", f"{role} is not text: {type(value).__name__}")


def _is_text_part(part: Any) -> bool:
    if isinstance(part, str):
        return True
    return isinstance(part, dict) and part.get("type", "text") == "text"


def media_values(value: Any) -> list[Any]:
    """A media column as a list: one value, a list of values, or nothing."""
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def strip_media_tags(text: str) -> str:
    """Removes LLaVA-style `<image>`/`<video>` markers: prompts carry media as message parts."""
    return VIDEO_TAG.sub("", IMAGE_TAG.sub("", text)).strip()


def check_media_tags(text: str, media: RawMedia) -> None:
    """Rejects a row whose text names more images or videos (`<image>`, `<video>`) than it has
    files for: its record would ask the critic to judge media it is never shown. Fewer markers
    than files is fine, since many sources name none. The markers counted are the ones
    `strip_media_tags` removes; Qwen's own `<|image_pad|>`, `<|vision_start|>`, ... are special
    tokens, which `mmcritic.data.guards` rejects wherever they appear."""
    kinds = (("image", IMAGE_TAG, media.images), ("video", VIDEO_TAG, media.videos))
    for kind, tag, files in kinds:
        named = len(tag.findall(text))
        if named > len(files):
            raise RecordError(
                "media_placeholder_without_file",
                f"the text names {named} {kind}(s) with <{kind}> but the row has "
                f"{len(files)} {kind} file(s)",
            )


def require_question(
    row: dict[str, Any],
    aliases: Sequence[str],
    options: FormatOptions,
    media: RawMedia,
) -> str:
    """The question column's text without its media markers, once the row's media are known
    to cover them (`check_media_tags`)."""
    question = require_text(row, "question", aliases, options)
    check_media_tags(question, media)
    return strip_media_tags(question)


def row_id(row: dict[str, Any], index: int, options: FormatOptions, prefix: str) -> str:
    name = pick_column(row, "id", ("id", "idx", "uid", "question_id", "sample_id"), options)
    return str(row[name]) if name else f"{prefix}_{index}"


def row_source(row: dict[str, Any], options: FormatOptions, default: str) -> str:
    name = pick_column(row, "source", ("source", "dataset", "origin"), options)
    if name and isinstance(row[name], str) and row[name]:
        return row[name]
    return options.source_name or default
