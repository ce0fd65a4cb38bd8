"""Reading raw rows from a local file, a saved dataset folder or a hub id.

Parquet, CSV, Arrow, saved folders and hub ids go through `datasets` in streaming mode, the same
code path for a local parquet file and for `lmms-lab/llava-critic-113k`, so memory stays flat on
100k+ rows. JSON is read here instead, JSON Lines line by line and a JSON array element by
element: one malformed row in a 100k-row file must be one rejected record, whereas Arrow's JSON
reader fails the whole file on it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmcritic.data.schema import RecordError

DATASETS_BUILDERS = {".parquet": "parquet", ".csv": "csv", ".arrow": "arrow"}
TEXT_JSON_SUFFIXES = (".jsonl", ".json")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
HUB_TIMEOUT_S = 10
BOM = b"\xef\xbb\xbf"
SURROGATE = re.compile("[\ud800-\udfff]")
# strict UTF-8 decoding refuses encoded surrogates, so one can only come from a \uD8XX escape
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
QUOTE, BACKSLASH, COMMA = ord('"'), ord("\\"), ord(",")
OPENERS, CLOSERS = frozenset(b"[{"), frozenset(b"]}")


@dataclass(frozen=True)
class Source:
    """Where raw rows come from: a path or hub id, plus the hub config and split, and for a hub
    repository that holds several data files, the one to read (`data_files`)."""

    location: str
    config: str | None = None
    split: str = "train"
    data_files: str | None = None

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

    def check(self) -> None:
        """Fails at once, in one line, for a source that cannot be read: a local path that does
        not exist (named, not taken for a hub id), a malformed hub id, or the hub out of reach."""
        if self.local_path is not None:
            return
        if looks_like_path(self.location):
            raise FileNotFoundError(
                f"--input {self.location}: no such file or folder (a hub id is NAMESPACE/NAME)"
            )
        if not HUB_ID.match(self.location):
            raise ValueError(
                f"--input {self.location!r} is neither an existing local path nor a hub id "
                "(NAMESPACE/NAME, e.g. lmms-lab/llava-critic-113k)"
            )
        check_hub_dataset(self.location)

    def row_count(self) -> int | None:
        """Rows in the source when known cheaply, for the progress bar's total."""
        path = self.local_path
        if path is not None and path.suffix == ".jsonl":
            with path.open("rb") as handle:
                return sum(1 for line in handle if line.strip())
        return None


def looks_like_path(location: str) -> bool:
    """Whether an --input that does not exist was meant as a local path: it has a data-file
    suffix, starts like a path, or has more parts than NAMESPACE/NAME."""
    return (
        Path(location).suffix.lower() in (*TEXT_JSON_SUFFIXES, *DATASETS_BUILDERS)
        or location.startswith(("/", ".", "~"))
        or location.count("/") > 1
        or "\\" in location
    )


def check_hub_dataset(repo_id: str) -> None:
    """One quick question to the hub before a conversion starts, so an offline machine or a
    mistyped id fails in seconds with one line, not after retries and a long traceback."""
    from huggingface_hub import dataset_info
    from huggingface_hub.errors import OfflineModeIsEnabled, RepositoryNotFoundError

    try:
        dataset_info(repo_id, timeout=HUB_TIMEOUT_S)
    except RepositoryNotFoundError as err:
        raise ValueError(f"--input {repo_id}: no such dataset on the hub (or it is gated)") from err
    except OfflineModeIsEnabled as err:
        raise ValueError(
            f"--input {repo_id}: the hub is switched off (HF_HUB_OFFLINE); pass a local file"
        ) from err
    except Exception as err:  # the hub client's own connection, timeout and server errors
        raise ValueError(
            f"--input {repo_id}: the hub cannot be reached ({type(err).__name__}); download "
            "the dataset elsewhere and pass its local file or folder"
        ) from err


def iter_rows(source: Source, start: int = 0) -> Iterator[tuple[int, dict[str, Any] | RecordError]]:
    """Yields (row index, row) from `start` on; a row that cannot be read is a RecordError
    carrying the raw text, so it is rejected with a reason instead of stopping the run."""
    for index, raw in iter_raw_rows(source, start):
        yield index, read_row(raw)


def iter_raw_rows(source: Source, start: int = 0) -> Iterator[tuple[int, bytes | dict[str, Any]]]:
    """(row index, row) from `start` on, a text source's rows still as their bytes: parsing
    them is left to `read_row`, which conversion workers run in parallel."""
    path = source.local_path
    if path is not None and path.suffix in TEXT_JSON_SUFFIXES and path.is_file():
        lines = _json_array_elements(path) if _is_json_array(path) else _json_lines(path)
        yield from _numbered_texts(lines, start)
        return
    dataset = _streaming_dataset(source)
    for index, row in enumerate(dataset.skip(start) if start else dataset, start=start):
        yield index, dict(row)


def read_row(raw: bytes | dict[str, Any]) -> dict[str, Any] | RecordError:
    """A row from `iter_raw_rows`, parsed if it is still text."""
    return parse_row(raw) if isinstance(raw, bytes) else raw


def _numbered_texts(texts: Iterator[bytes], start: int) -> Iterator[tuple[int, bytes]]:
    index = -1
    for text in texts:
        if not text.strip():
            continue
        index += 1
        if index >= start:
            yield index, text


def parse_row(raw: bytes) -> dict[str, Any] | RecordError:
    """One JSON object from raw bytes, or a RecordError naming what is wrong with it.

    Never raises: bytes that are not UTF-8, a lone surrogate, nesting too deep for the parser,
    an integer too long to convert and anything but an object are rejections."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return RecordError(
            "encoding",
            f"the row is not valid UTF-8 ({err.reason} at byte {err.start})",
            _escaped(raw),
        )
    try:
        row = json.loads(text, strict=False)
    except json.JSONDecodeError as err:
        return RecordError("invalid_json", f"invalid JSON ({err})", text)
    except RecursionError:
        return RecordError("invalid_json", "JSON nested too deeply to read", text)
    except ValueError as err:  # an integer literal past Python's digit limit
        return RecordError("invalid_json", f"a value cannot be read: {err}", text)
    if not isinstance(row, dict):
        return RecordError("invalid_json", f"a JSON {type(row).__name__}, not an object", text)
    if SURROGATE_ESCAPE.search(raw) and _has_lone_surrogate(row):
        return RecordError("encoding", "a string holds a lone UTF-16 surrogate escape", text)
    return row


def _escaped(raw: bytes) -> str:
    return raw.decode("utf-8", errors="backslashreplace")


def _has_lone_surrogate(value: Any) -> bool:
    """Whether any key or string in a parsed JSON value holds a lone surrogate (which cannot be
    written back as UTF-8). Iterative: the value may be as deep as the parser allowed."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _json_lines(path: Path) -> Iterator[bytes]:
    """The lines of a JSON Lines file as bytes, split at \n only (a bare \r inside a row is
    not a line break), with a UTF-8 byte-order mark removed from the first."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle):
            yield line[len(BOM) :] if number == 0 and line.startswith(BOM) else line


def _is_json_array(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(4096)
    head = head[len(BOM) :] if head.startswith(BOM) else head
    return head.lstrip().startswith(b"[")


def _json_array_elements(path: Path, chunk_bytes: int = 1 << 20) -> Iterator[bytes]:
    """The elements of a top-level JSON array as raw bytes, one at a time, so a 100k-element
    file streams and one bad element is one rejected row. Elements are cut at their closing
    bracket at depth zero, outside strings; what cannot be cut (a truncated file) is yielded
    whole and rejected as invalid JSON, and so is an array that is never closed ("[")."""
    with path.open("rb") as handle:
        buffer = handle.read(chunk_bytes)
        buffer = buffer[len(BOM) :] if buffer.startswith(BOM) else buffer
        position = buffer.index(b"[") + 1
        closed = False
        while True:
            end = _element_end(buffer, position)
            if end is None:
                more = handle.read(chunk_bytes)
                if not more:
                    tail = buffer[position:].strip()
                    rest = tail.rstrip(b"]").strip()
                    if rest or not (closed or tail.endswith(b"]")):
                        yield rest or b"["  # an array never closed is rejected, not empty
                    return
                buffer, position = buffer[position:] + more, 0
                continue
            element = buffer[position:end].strip().lstrip(b",").strip()
            closed = closed or element == b"]"
            if element and element != b"]":
                yield element
            position = end


def _element_end(data: bytes, start: int) -> int | None:
    """Where the array element from `start` ends: at a comma or the closing bracket at depth 0,
    outside strings; None when `data` ends first."""
    depth, seen, offset = 0, False, start
    while offset < len(data):
        char = data[offset]
        if char == QUOTE:
            closing = _string_end(data, offset + 1)
            if closing is None:
                return None
            offset, seen = closing, True
        elif char in OPENERS:
            depth, seen = depth + 1, True
        elif char in CLOSERS:
            if depth == 0:
                return offset + 1 if not seen else offset
            depth -= 1
        elif char == COMMA and depth == 0:
            if seen:
                return offset
        elif not chr(char).isspace():
            seen = True
        offset += 1
    return None


def _string_end(data: bytes, start: int) -> int | None:
    """The offset of the quote that closes a JSON string whose text begins at `start`, past
    escaped quotes; None when `data` ends first."""
    escaped = False
    for offset in range(start, len(data)):
        if escaped:
            escaped = False
        elif data[offset] == BACKSLASH:
            escaped = True
        elif data[offset] == QUOTE:
            return offset
    return None


def _streaming_dataset(source: Source) -> Any:
    import datasets

    path = source.local_path
    if path is None:
        dataset = datasets.load_dataset(
            source.location,
            source.config,
            data_files=source.data_files,
            split=source.split,
            streaming=True,
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
