"""One writer per output folder: `train`, `eval` and `preprocess` hold a lock file in the folder
they write, so a second run on it stops at once, naming the first, instead of interleaving its
lines with it (two evals resuming one folder would otherwise log every sample twice).

The lock is a file created atomically (`O_CREAT | O_EXCL`) holding the owner's host, process id,
command and start time. A lock whose process is gone (a run killed with SIGKILL, a crashed
machine's on the same host) is stale: the next run takes it over and says so. Processes of one
distributed run share the lock of their first rank.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

LOCK_NAME = ".mmcritic.lock"
HALF_WRITTEN_S = 5.0


class FolderInUse(FileExistsError):
    """Another live run writes the folder."""


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Holds `folder`'s lock for the block (only on the first rank of a distributed run)."""
    if os.environ.get("RANK", "0") != "0":
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    _acquire(path)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def _acquire(path: Path) -> None:
    for _ in range(2):
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            _clear_if_stale(path)
            continue
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(_owner(), handle)
        return
    raise FolderInUse(f"{path.parent}: could not take its lock {path}")


def _owner() -> dict[str, Any]:
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "command": " ".join(sys.argv)[:500],
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _clear_if_stale(path: Path) -> None:
    """Removes a lock whose process is gone; a live one is `FolderInUse` naming it."""
    try:
        owner = json.loads(path.read_text(encoding="utf-8"))
        host, pid = str(owner["host"]), int(owner["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        # being written this instant, or left half-written by a writer that died
        fresh = time.time() - path.stat().st_mtime < HALF_WRITTEN_S if path.exists() else False
        owner, host, pid = {}, socket.gethostname(), os.getpid() if fresh else -1
    if host == socket.gethostname() and not _alive(pid):
        logger.warning("%s: taking over the stale lock of process %s (gone)", path.parent, pid)
        path.unlink(missing_ok=True)
        return
    raise FolderInUse(
        f"{path.parent} is in use by process {pid} on {host} (`{owner.get('command', '?')}`, "
        f"since {owner.get('started', '?')}); wait for it, stop it, or choose another folder "
        f"(remove {path} only if that process is gone)"
    )


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
