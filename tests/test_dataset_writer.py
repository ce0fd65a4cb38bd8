"""The dataset writer takes rows one at a time or many at once and writes the same folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmcritic.data.dataset import PROGRESS_FILE, DatasetWriter
from mmcritic.data.schema import ConvertedRows, Record, RecordError

SETTINGS = {"format": "test"}


def record(record_id: str, answer: str = "1") -> Record:
    prompt = [{"role": "user", "content": [{"type": "text", "text": f"judge {record_id}"}]}]
    return Record(record_id, "test", "pairwise", prompt, answer, meta={"n": len(record_id)})


# (row index, records, rejection): row 3 repeats row 0's id; row 2 has a swapped twin
ROWS = [
    (0, [record("a")], None),
    (1, [], RecordError("bad_label", "no verdict")),
    (2, [record("b", "2"), record("b#swap", "1")], None),
    (3, [record("a", "2")], None),
    (4, [record("c", "2")], None),
    (5, [], RecordError("empty_question", "the question is empty")),
]


def converted(rows: list) -> ConvertedRows:
    accepted = [(index, len(records)) for index, records, err in rows if err is None]
    rejected = [(index, err, {"id": f"row{index}"}) for index, _, err in rows if err is not None]
    built = [record for _, records, err in rows if err is None for record in records]
    lines = "".join(record.to_json() + "\n" for record in built).encode()
    return ConvertedRows(lines, [(r.id, r.kind, r.answer) for r in built], accepted, rejected)


def one_by_one(out: Path, rows: list) -> DatasetWriter:
    writer = DatasetWriter(out, SETTINGS, checkpoint_every=2)
    for index, records, err in rows:
        writer.add_row(records, err, {"id": f"row{index}"} if err else None, index)
    return writer


def folder(writer: DatasetWriter) -> dict[str, str]:
    stats = writer.close()
    files = {name: (writer.out_dir / name).read_text() for name in ("data.jsonl", "rejected.jsonl")}
    return {**files, "stats": json.dumps(stats)}


@pytest.mark.parametrize(
    "chunks",
    [[ROWS], [ROWS[:3], ROWS[3:]], [ROWS[:1], ROWS[1:4], ROWS[4:]]],
    ids=["duplicate-in-the-chunk", "duplicate-in-a-later-chunk", "three-chunks"],
)
def test_rows_added_at_once_write_what_one_by_one_writes(tmp_path, chunks):
    expected = folder(one_by_one(tmp_path / "single", ROWS))
    writer = DatasetWriter(tmp_path / "chunked", SETTINGS, checkpoint_every=2)
    for chunk in chunks:
        writer.add_rows(converted(chunk))
    written = folder(writer)
    assert written == expected
    assert json.loads(written["stats"])["rejected_by_reason"] == {
        "bad_label": 1,
        "duplicate_id": 1,
        "empty_question": 1,
    }


def test_rows_without_repeated_ids_are_written_at_once_and_checkpointed_at_the_end(tmp_path):
    rows = [row for row in ROWS if row[0] != 3]
    expected = folder(one_by_one(tmp_path / "single", rows))
    writer = DatasetWriter(tmp_path / "chunked", SETTINGS, checkpoint_every=2)
    writer.add_rows(converted(rows[:3]))
    progress = json.loads((tmp_path / "chunked" / PROGRESS_FILE).read_text())
    # a checkpoint fell due inside the chunk: it is taken after the chunk's last row
    assert progress["rows_done"] == 3
    assert progress["offsets"]["data.jsonl"] == len(converted(rows[:3]).lines)
    writer.add_rows(converted(rows[3:]))
    assert folder(writer) == expected
