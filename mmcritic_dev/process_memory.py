"""Run a Python command and measure its wall time and the peak memory of its process tree.

`ru_maxrss` gives one process's peak, which says nothing of worker processes; here a thread
samples the resident memory of the command and all its descendants every `interval` seconds
(from /proc, Linux) and keeps the largest sum; the tree itself is looked up every `TREE_EVERY`
samples (the command's workers start once, at its beginning).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
# samples between two walks of /proc for the process tree: a walk reads every process's stat
# file, which on a two-core machine takes CPU from the command being measured
TREE_EVERY = 25


def run_measured(arguments: list[str], interval: float = 0.02) -> dict:
    """Runs `python arguments...`; returns seconds, peak_rss_mib (tree sum) and stdout."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        tree: set[int] = set()
        for tick in itertools.count():
            if done.is_set():
                return
            if tick % TREE_EVERY == 0:  # reading all of /proc is the costly part; do it rarely
                tree = _descendants(process.pid) | {process.pid}
            peak[0] = max(peak[0], sum(_rss_bytes(pid) for pid in tree))
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments)} failed:\n{stderr[-3000:]}")
    return {"seconds": seconds, "peak_rss_mib": peak[0] / 2**20, "stdout": stdout}


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, frontier = set(), [root]
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


def _rss_bytes(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_BYTES
    except (OSError, IndexError, ValueError):
        return 0
