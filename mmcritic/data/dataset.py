"""A verifiable dataset folder: written so that a crash never loses or duplicates a record,
and read back (`read_records`) by training and the held-out check.

Each input row's outputs are appended together. Every `checkpoint_every` rows the writer flushes,
fsyncs and records in `.progress.json` how many input rows are done and how long each output file
was at that moment. A resumed run truncates the files back to those lengths and skips the rows
already done, so rows written after the last checkpoint are redone exactly once.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mmcritic.data.schema import (
    DATA_FILE,
    REJECTED_FILE,
    STATS_FILE,
    ConvertedRows,
    Record,
    RecordError,
    RecordLine,
)
from mmcritic.text import json_text

PROGRESS_FILE = ".progress.json"
MAX_REJECTED_VALUE_CHARS = 100_000
# data.jsonl gains ~1 KiB a row; a large buffer writes it in few system calls (checkpoints flush)
WRITE_BUFFER_BYTES = 1 << 20
WriteMode = Literal["new", "resume", "overwrite"]


@dataclass
class Stats:
    """Counts that reconcile: read + augmented == written + rejected."""

    read: int = 0
    written: int = 0
    augmented: int = 0
    rejected: int = 0
    rejected_by_reason: Counter = field(default_factory=Counter)
    label_balance: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "written": self.written,
            "augmented": self.augmented,
            "rejected": self.rejected,
            "rejected_by_reason": dict(sorted(self.rejected_by_reason.items())),
            "label_balance": dict(sorted(self.label_balance.items())),
            "kinds": dict(sorted(self.kinds.items())),
            "reconciles": self.read + self.augmented == self.written + self.rejected,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Stats:
        return cls(
            read=data["read"],
            written=data["written"],
            augmented=data["augmented"],
            rejected=data["rejected"],
            rejected_by_reason=Counter(data["rejected_by_reason"]),
            label_balance=Counter(data["label_balance"]),
            kinds=Counter(data["kinds"]),
        )


class DatasetWriter:
    """Appends records and rejections for one output folder, with resumable checkpoints.

    `settings` fingerprints the conversion: resuming with different settings would mix two
    datasets in one file, so it is refused with the settings that differ.
    """

    def __init__(
        self,
        out_dir: Path,
        settings: dict[str, Any],
        mode: WriteMode = "new",
        checkpoint_every: int = 1000,
    ):
        self.out_dir = out_dir
        self.settings = settings
        self.checkpoint_every = checkpoint_every
        self.stats = Stats()
        self.rows_done = 0
        offsets = self._prepare(mode)
        self._data = self._open(DATA_FILE, offsets.get(DATA_FILE, 0))
        self._rejected = self._open(REJECTED_FILE, offsets.get(REJECTED_FILE, 0))
        self._ids = self._written_ids()
        self.checkpoint()

    def _prepare(self, mode: WriteMode) -> dict[str, int]:
        progress_path = self.out_dir / PROGRESS_FILE
        has_output = (self.out_dir / DATA_FILE).exists() or progress_path.exists()
        if mode == "overwrite" or not has_output or self._holds_nothing():
            self.out_dir.mkdir(parents=True, exist_ok=True)
            for name in (DATA_FILE, REJECTED_FILE, STATS_FILE, PROGRESS_FILE):
                (self.out_dir / name).unlink(missing_ok=True)
            return {}
        if mode == "new":
            raise FileExistsError(
                f"{self.out_dir} already holds a dataset; pass --resume to continue an "
                "interrupted run or --overwrite to start again"
            )
        if not progress_path.exists():
            raise FileExistsError(
                f"{self.out_dir} has no {PROGRESS_FILE} to resume from; pass --overwrite"
            )
        progress = json.loads(progress_path.read_text())
        self._check_settings(progress["settings"])
        self.rows_done = progress["rows_done"]
        self.stats = Stats.from_dict(progress["stats"])
        return progress["offsets"]

    def _holds_nothing(self) -> bool:
        """Whether the folder is the leftover of a run that failed before its first row: such
        a folder must not block the corrected command."""
        for name in (DATA_FILE, REJECTED_FILE):
            path = self.out_dir / name
            if path.exists() and path.stat().st_size > 0:
                return False
        progress = self.out_dir / PROGRESS_FILE
        if not progress.exists():
            return True
        try:
            return json.loads(progress.read_text())["rows_done"] == 0
        except (ValueError, KeyError, TypeError):
            return False

    def _written_ids(self) -> set[str]:
        """Ids already in data.jsonl (after a resume's truncation): an id is written once."""
        self._data.seek(0)
        ids = {json.loads(line)["id"] for line in self._data if line.strip()}
        self._data.seek(0, os.SEEK_END)
        return ids

    def _check_settings(self, saved: dict[str, Any]) -> None:
        differing = sorted(
            key
            for key in set(saved) | set(self.settings)
            if saved.get(key) != self.settings.get(key)
        )
        if differing:
            details = ", ".join(
                f"{key}: {saved.get(key)!r} -> {self.settings.get(key)!r}" for key in differing
            )
            raise ValueError(
                f"cannot resume {self.out_dir}: settings differ from the interrupted run "
                f"({details}); use the same settings or pass --overwrite"
            )

    def _open(self, name: str, offset: int):
        path = self.out_dir / name
        handle = path.open("a+b", buffering=WRITE_BUFFER_BYTES)
        handle.truncate(offset)
        handle.seek(offset)
        return handle

    def add_row(
        self,
        records: Sequence[Record | RecordLine],
        rejection: RecordError | None = None,
        row: dict[str, Any] | None = None,
        row_index: int | None = None,
    ) -> None:
        """Accounts for one input row: its records, or the reason it was rejected. A row whose
        record id is already written is rejected as a duplicate: the first one is kept."""
        self.stats.read += 1
        taken = [record.id for record in records if record.id in self._ids]
        if rejection is None and taken:
            rejection = RecordError("duplicate_id", f"id {taken[0]!r} is already written")
        if rejection is not None:
            self._write_rejection(rejection, row, row_index)
        else:
            self._data.write("".join(record.to_json() + "\n" for record in records).encode())
            self._ids.update(record.id for record in records)
            self.stats.augmented += len(records) - 1
            self.stats.written += len(records)
            for record in records:
                self.stats.kinds[record.kind] += 1
                if record.kind == "pairwise":
                    self.stats.label_balance[record.answer] += 1
        self.rows_done += 1
        if self.rows_done % self.checkpoint_every == 0:
            self.checkpoint()

    def add_rows(self, converted: ConvertedRows) -> None:
        """Accounts for consecutive input rows at once: their records in one write, their
        rejections, one checkpoint at the end if one fell due. Rows whose ids repeat each other
        or an id already written go one by one through `add_row`, so the first of an id is kept
        exactly as a one-row-at-a-time run keeps it."""
        ids = [record_id for record_id, _, _ in converted.records]
        if len(set(ids)) < len(ids) or not self._ids.isdisjoint(ids):
            self._add_one_by_one(converted)
            return
        for index, rejection, row in converted.rejected:
            self._write_rejection(rejection, row, index)
        self._data.write(converted.lines)
        self._ids.update(ids)
        self.stats.read += converted.rows
        self.stats.written += len(ids)
        self.stats.augmented += len(ids) - len(converted.accepted)
        self.stats.kinds.update(kind for _, kind, _ in converted.records)
        self.stats.label_balance.update(
            answer for _, kind, answer in converted.records if kind == "pairwise"
        )
        checkpoints_due = self.rows_done // self.checkpoint_every
        self.rows_done += converted.rows
        if self.rows_done // self.checkpoint_every > checkpoints_due:
            self.checkpoint()

    def _add_one_by_one(self, converted: ConvertedRows) -> None:
        lines = converted.lines.split(b"\n")[:-1]  # each line ends in a newline
        records = [
            RecordLine(record_id, kind, answer, line.decode())
            for (record_id, kind, answer), line in zip(converted.records, lines, strict=True)
        ]
        rejected = {index: (rejection, row) for index, rejection, row in converted.rejected}
        counts = dict(converted.accepted)
        taken = 0
        for index in sorted(counts.keys() | rejected.keys()):
            if index in rejected:
                self.add_row([], *rejected[index], index)
            else:
                self.add_row(records[taken : taken + counts[index]], row_index=index)
                taken += counts[index]

    def _write_rejection(
        self, rejection: RecordError, row: dict[str, Any] | None, row_index: int | None
    ) -> None:
        self.stats.rejected += 1
        self.stats.rejected_by_reason[rejection.reason] += 1
        line = {
            "row": row_index,
            "id": None if row is None else _jsonable(row.get("id")),
            "reason": rejection.reason,
            "message": rejection.message,
            "record": rejection.raw if row is None else row,
        }
        try:
            line["record"] = _jsonable(line["record"])
            text = json_text(line)
        except RecursionError:
            line["record"] = "<the row is nested too deeply to store>"
            text = json_text(line)
        self._rejected.write(text.encode("utf-8") + b"\n")

    def checkpoint(self, complete: bool = False) -> None:
        """Makes everything written so far durable and resumable."""
        for handle in (self._data, self._rejected):
            handle.flush()
            os.fsync(handle.fileno())
        progress = {
            "settings": self.settings,
            "rows_done": self.rows_done,
            "offsets": {DATA_FILE: self._data.tell(), REJECTED_FILE: self._rejected.tell()},
            "stats": self.stats.to_dict(),
            "complete": complete,
        }
        _atomic_write(self.out_dir / PROGRESS_FILE, json.dumps(progress, indent=1))

    def close(self) -> dict[str, Any]:
        """Finishes the folder: final checkpoint and `stats.json`."""
        self.checkpoint(complete=True)
        self._data.close()
        self._rejected.close()
        stats = self.stats.to_dict()
        _atomic_write(self.out_dir / STATS_FILE, json.dumps(stats, indent=2))
        return stats


def write_records(folder: Path, records: Sequence[Record], settings: dict[str, Any]) -> Path:
    """A dataset folder holding exactly `records`, replacing what it held: several sets merged
    into one to train on (their media paths are absolute, so they stay where they are)."""
    writer = DatasetWriter(folder, settings, "overwrite")
    for record in records:
        writer.add_row([record])
    writer.close()
    return folder


def data_kinds(folder: str | Path) -> list[str]:
    """The record kinds a dataset folder holds, from its stats (its records when it has none;
    pairwise when the folder is not there yet, as for a dry run)."""
    folder = Path(folder)
    stats = folder / STATS_FILE
    if stats.is_file():
        return sorted(json.loads(stats.read_text())["kinds"])
    if (folder / DATA_FILE).is_file():
        return sorted({record.kind for record in read_records(folder)})
    return ["pairwise"]


def read_records(folder: str | Path) -> list[Record]:
    """Records of a dataset folder, with media paths made absolute."""
    folder = Path(folder)
    path = folder / DATA_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{folder} is not a verifiable dataset folder: {DATA_FILE} is missing "
            "(make one with `mmcritic preprocess` or `mmcritic synth`)"
        )
    records = []
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = Record.from_dict(json.loads(line))
            except (json.JSONDecodeError, ValueError) as err:
                raise ValueError(f"{path} line {line_number}: {err}") from err
            record.images = [_absolute(folder, p) for p in record.images]
            record.videos = [_absolute(folder, p) for p in record.videos]
            records.append(record)
    return records


def _absolute(folder: Path, path: str) -> str:
    return path if Path(path).is_absolute() else str((folder / path).resolve())


def _atomic_write(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def _jsonable(value: Any) -> Any:
    """A JSON-safe copy of a raw row: bytes and images become short descriptions, huge strings
    are cut, so one bad row cannot make the rejected file unreadable."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, str) and len(value) > MAX_REJECTED_VALUE_CHARS:
        return value[:MAX_REJECTED_VALUE_CHARS] + f"... <{len(value)} characters in all>"
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)[:1000]
