"""Reading raw rows from a local file, a saved dataset folder or a hub id.

Everything but JSON Lines goes through `datasets` in streaming mode, the same code path for a
local parquet file and for `lmms-lab/llava-critic-113k`, so memory stays flat on 100k+ rows.
JSON Lines files are read line by line instead: one malformed line in a 100k-line file should be
one rejected record, whereas Arrow's JSON reader fails the whole file on it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmcritic.data.schema import RecordError

DATASETS_BUILDERS = {".json": "json", ".parquet": "parquet", ".csv": "csv", ".arrow": "arrow"}


@dataclass(frozen=True)
class Source:
    """Where raw rows come from: a path or hub id, plus the hub config and split."""

    location: str
    config: str | None = None
    split: str = "train"

    @property
    def local_path(self) -> Path | None:
        path = Path(self.location).expanduser()
        return path if path.exists() else None

    @property
    def base_dir(self) -> Path:
        """The folder relative media paths resolve against when no --media-root is given."""
        path = self.local_path
        if path is None:
            return Path.cwd()
        return path if path.is_dir() else path.parent

    def row_count(self) -> int | None:
        """Rows in the source when known cheaply, for the progress bar's total."""
        path = self.local_path
        if path is not None and path.suffix == ".jsonl":
            with path.open("rb") as handle:
                return sum(1 for line in handle if line.strip())
        return None


def iter_rows(source: Source, start: int = 0) -> Iterator[tuple[int, dict[str, Any] | RecordError]]:
    """Yields (row index, row) from `start` on; a row that cannot be read is a RecordError."""
    path = source.local_path
    if path is not None and path.suffix == ".jsonl":
        yield from _iter_jsonl(path, start)
        return
    dataset = _streaming_dataset(source)
    for index, row in enumerate(dataset.skip(start) if start else dataset, start=start):
        yield index, dict(row)


def _iter_jsonl(path: Path, start: int) -> Iterator[tuple[int, dict[str, Any] | RecordError]]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        index = -1
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            index += 1
            if index < start:
                continue
            yield index, _parse_json_line(line, path, line_number)


def _parse_json_line(line: str, path: Path, line_number: int) -> dict[str, Any] | RecordError:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as err:
        return RecordError("invalid_json", f"{path.name} line {line_number}: invalid JSON ({err})")
    if not isinstance(row, dict):
        kind = type(row).__name__
        return RecordError("invalid_json", f"{path.name} line {line_number}: a {kind}, not a row")
    return row


def _streaming_dataset(source: Source) -> Any:
    import datasets

    path = source.local_path
    if path is None:
        dataset = datasets.load_dataset(
            source.location, source.config, split=source.split, streaming=True
        )
    elif path.is_dir() and (path / "dataset_info.json").exists():
        dataset = datasets.load_from_disk(str(path)).to_iterable_dataset()
    elif path.is_dir():
        dataset = datasets.load_dataset(str(path), split=source.split, streaming=True)
    elif path.suffix in DATASETS_BUILDERS:
        dataset = datasets.load_dataset(
            DATASETS_BUILDERS[path.suffix], data_files=str(path), split="train", streaming=True
        )
    else:
        raise ValueError(
            f"cannot read {path}: expected one of .jsonl {sorted(DATASETS_BUILDERS)}, a saved "
            "dataset folder, or a hub id"
        )
    return _without_image_decoding(dataset)


def _without_image_decoding(dataset: Any) -> Any:
    """Keeps images as encoded bytes: converting needs their size, not their decoded pixels."""
    import datasets

    features = getattr(dataset, "features", None) or {}
    for name, feature in features.items():
        if isinstance(feature, datasets.Image):
            dataset = dataset.cast_column(name, datasets.Image(decode=False))
        elif isinstance(getattr(feature, "feature", None), datasets.Image):
            dataset = dataset.cast_column(name, datasets.List(datasets.Image(decode=False)))
    return dataset
