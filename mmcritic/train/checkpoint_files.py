"""Whether a checkpoint folder can be resumed from, file by file, and making its files durable.

A checkpoint is complete only when every file a resumed run reads is present and readable: the
weights (safetensors, whose header must cover the file; or DeepSpeed's shards), the optimizer and
scheduler (torch zip archives whose directory and member checksums hold, up to `CRC_LIMIT`
bytes), the RNG state, `mmcritic_state.json` and `trainer_state.json` (JSON whose step is the
folder's). transformers skips a missing optimizer or scheduler and starts a fresh one; here that
checkpoint is incomplete. Bit flips inside a tensor payload of safetensors are not detectable
without reading every byte against a checksum, and are not looked for.

Files are flushed to disk (`fsync`) before `trainer_state.json`, which completes a checkpoint,
is written, so a power loss never leaves a checkpoint that looks complete but is not.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import struct
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CRC_LIMIT = 4 * 1024**3
TRAINER_STATE = "trainer_state.json"
EXTRA_STATE = "mmcritic_state.json"


def checkpoint_problems(folder: Path, processes: int = 1) -> list[str]:
    """Why `folder` cannot be resumed from, one line a file; empty when it can."""
    if not folder.is_dir():
        return [f"{folder} is not a folder"]
    problems = _state_problems(folder) + _weight_problems(folder)
    deepspeed = any(folder.glob("global_step*"))
    if not deepspeed:
        problems += [_torch_file(folder / name) for name in ("optimizer.pt", "scheduler.pt")]
    rng = ["rng_state.pth"] if processes == 1 else [f"rng_state_{i}.pth" for i in range(processes)]
    problems += [_torch_file(folder / name) for name in rng]
    return [problem for problem in problems if problem]


def _state_problems(folder: Path) -> list[str]:
    problems = [_json_file(folder / EXTRA_STATE)]
    state_problem = _json_file(folder / TRAINER_STATE)
    if state_problem:
        return [*problems, state_problem]
    state = json.loads((folder / TRAINER_STATE).read_text(encoding="utf-8"))
    step = state.get("global_step") if isinstance(state, dict) else None
    named = folder.name.rpartition("-")[2]
    if not isinstance(step, int) or not named.isdigit() or step != int(named):
        problems.append(
            f"{folder / TRAINER_STATE}: global_step {step!r} is not the folder's step {named}"
        )
    return problems


def _weight_problems(folder: Path) -> list[str]:
    shards = sorted(folder.glob("global_step*/*.pt"))
    if shards:
        return [_torch_file(shard) for shard in shards]
    for name in ("model.safetensors", "adapter_model.safetensors"):
        if (folder / name).exists():
            return [_safetensors_file(folder / name)]
    index = folder / "model.safetensors.index.json"
    if index.exists():
        problem = _json_file(index)
        if problem:
            return [problem]
        files = set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values())
        return [_safetensors_file(folder / name) for name in sorted(files)]
    return [f"{folder / 'model.safetensors'} is missing (nor an adapter or DeepSpeed shards)"]


def _json_file(path: Path) -> str:
    if not path.is_file():
        return f"{path} is missing"
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return f"{path} is not readable JSON ({type(err).__name__}: {str(err)[:100]})"
    return ""


def _safetensors_file(path: Path) -> str:
    """A safetensors file whose header parses and whose tensors fill the file exactly."""
    if not path.is_file():
        return f"{path} is missing"
    size = path.stat().st_size
    try:
        with path.open("rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if length > size - 8:
                raise ValueError(f"header of {length:,} bytes in a {size:,}-byte file")
            header = json.loads(handle.read(length))
        ends = [entry["data_offsets"][1] for key, entry in header.items() if key != "__metadata__"]
    except (OSError, ValueError, KeyError, TypeError, struct.error) as err:
        return f"{path} is damaged ({type(err).__name__}: {str(err)[:100]})"
    if 8 + length + max(ends, default=0) != size:
        return f"{path} is truncated or padded: its tensors do not fill its {size:,} bytes"
    return ""


def _torch_file(path: Path) -> str:
    """A `torch.save` zip archive whose directory reads and, up to `CRC_LIMIT` bytes, whose
    members match their checksums."""
    if not path.is_file():
        return f"{path} is missing"
    if not zipfile.is_zipfile(path):
        return _legacy_torch_file(path)
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip() if path.stat().st_size <= CRC_LIMIT else None
    except (OSError, zipfile.BadZipFile, EOFError, ValueError) as err:
        return f"{path} is damaged ({type(err).__name__}: {str(err)[:100]})"
    return f"{path} is damaged: member {bad} fails its checksum" if bad else ""


def _legacy_torch_file(path: Path) -> str:
    """A file in torch's pre-zip format (DeepSpeed writes it when told to): it has no
    directory or checksums, so only an empty file or one that is not a pickle is seen."""
    with path.open("rb") as handle:
        start = handle.read(2)
    return (
        "" if start[:1] == b"\x80" else f"{path} is damaged: neither a torch archive nor a pickle"
    )


def make_durable(folder: Path) -> None:
    """Flushes every file under `folder`, then the folder and its parent, to disk."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            _fsync(path, os.O_RDONLY)
    for directory in (*sorted(p for p in folder.rglob("*") if p.is_dir()), folder, folder.parent):
        _fsync(directory, os.O_RDONLY)


def _fsync(path: Path, flags: int) -> None:
    descriptor = os.open(path, flags)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


# torch's writer reports a full disk as a failed write position, not as ENOSPC
_DISK_FULL_SIGNS = ("No space left on device", "unexpected pos", "file write failed")
LOW_SPACE_BYTES = 64 * 1024**2


@contextmanager
def disk_full_named(folder: Path) -> Iterator[None]:
    """Turns a write that failed for want of space into "no space left on device" naming the
    folder and the space left."""
    try:
        yield
    except (OSError, RuntimeError) as err:
        if not _disk_full(err, folder):
            raise
        free = shutil.disk_usage(folder).free
        raise OSError(
            errno.ENOSPC,
            f"no space left on device while writing {folder} ({free / 1024**2:,.0f} MiB free); "
            "free space or move output_dir, then resume",
        ) from err


def _disk_full(err: BaseException, folder: Path) -> bool:
    if isinstance(err, OSError) and err.errno == errno.ENOSPC:
        return True
    said = str(err)
    if not any(sign in said for sign in _DISK_FULL_SIGNS):
        return False
    return "No space left on device" in said or shutil.disk_usage(folder).free < LOW_SPACE_BYTES
