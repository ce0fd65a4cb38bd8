"""The one record schema every reader, the synthetic generator and the trainer agree on.

A record is a verifiable task: a chat prompt that refers to media by placeholder, the media paths,
and the answer a reward can check. See DESIGN.md ("A verifiable dataset directory").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from mmcritic.text import json_text

# "critique": one answer to a verifiable question to critique; `answer` is whether it is right
# ("correct" or "incorrect"), `meta` holds the question, the answer and the reference
Kind = Literal["pairwise", "pointwise", "verifiable", "critique"]
KINDS: tuple[str, ...] = ("pairwise", "pointwise", "verifiable", "critique")

DATA_FILE = "data.jsonl"
REJECTED_FILE = "rejected.jsonl"
STATS_FILE = "stats.json"
MEDIA_DIR = "media"


@dataclass
class Record:
    """One line of `data.jsonl`.

    `images` and `videos` are paths relative to the dataset folder, or absolute; the prompt holds
    one `{"type": "image"}` / `{"type": "video"}` part per entry, in the same order.
    """

    id: str
    source: str
    kind: Kind
    prompt: list[dict[str, Any]]
    answer: str
    images: list[str] = field(default_factory=list)
    videos: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The record as data.jsonl holds it (fields named here, not found by reflection: this
        runs once per row of a 100k-row conversion)."""
        return {
            "id": self.id,
            "source": self.source,
            "kind": self.kind,
            "prompt": self.prompt,
            "answer": self.answer,
            "images": self.images,
            "videos": self.videos,
            "meta": self.meta,
        }

    def to_json(self) -> str:
        """One line of data.jsonl. orjson writes a record 20x faster than `json.dumps`, which a
        100k-row conversion would otherwise spend a fifth of its time in; `json` writes what
        orjson refuses (an integer past 64 bits, a key that is not a string)."""
        fields = self.to_dict()
        try:
            return orjson.dumps(fields).decode()
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            return json_text(fields)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Record:
        missing = [name for name in ("id", "source", "kind", "prompt", "answer") if name not in row]
        if missing:
            raise ValueError(f"record {row.get('id', '?')!r} lacks fields {missing}")
        if row["kind"] not in KINDS:
            raise ValueError(f"record {row['id']!r} has kind {row['kind']!r}; expected {KINDS}")
        return cls(
            id=str(row["id"]),
            source=str(row["source"]),
            kind=row["kind"],
            prompt=list(row["prompt"]),
            answer=str(row["answer"]),
            images=list(row.get("images") or []),
            videos=list(row.get("videos") or []),
            meta=dict(row.get("meta") or {}),
        )


class RecordError(Exception):
    """An input record that cannot become a verifiable record.

    `reason` is a short stable code counted in `stats.json`; the message says what was wrong
    with which record, so a user can fix the source.
    """

    def __init__(self, reason: str, message: str, raw: str | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        # the input as text when it could not be parsed into a row (bytes that are not UTF-8
        # kept as \xNN escapes), so rejected.jsonl still holds what was read
        self.raw = raw

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles with all three fields, so a rejection crosses from a worker process."""
        return (RecordError, (self.reason, self.message, self.raw))


@dataclass(frozen=True)
class ConvertedRows:
    """The outcome of converting consecutive input rows, in the form the writer takes and that
    crosses from a worker process cheaply: one piece of data.jsonl text and flat tuples, not an
    object per record (pickling those both ways cost a tenth of a conversion's CPU time)."""

    # data.jsonl text of the accepted rows' records, in input order
    lines: bytes
    # (id, kind, answer) of each record in `lines`, in the same order
    records: list[tuple[str, str, str]]
    # (input row index, number of records) of each accepted row
    accepted: list[tuple[int, int]]
    # (input row index, why it has no records, the row itself when it could be read)
    rejected: list[tuple[int, RecordError, dict[str, Any] | None]]

    @property
    def rows(self) -> int:
        return len(self.accepted) + len(self.rejected)


@dataclass(frozen=True)
class RecordLine:
    """A record already serialised for data.jsonl, with what the writer counts."""

    id: str
    kind: str
    answer: str
    line: str

    def to_json(self) -> str:
        return self.line
