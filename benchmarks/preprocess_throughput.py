"""Preprocess throughput and memory on synthetic LLaVA-Critic pairwise rows.

Writes N raw rows (five wordings, a handful of real PNGs), converts them with the real
`mmcritic preprocess` pipeline in a child process, and prints records/s and the child's peak
resident memory. Running two sizes shows whether memory stays flat as the input grows.

    python benchmarks/preprocess_throughput.py --rows 10000 100000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

from mmcritic_dev.raw_synth import write_raw_pairwise


def measure(rows: int, work: Path) -> dict:
    images = []
    for index, size in enumerate([(640, 480), (1024, 768), (333, 500), (1920, 1080)]):
        path = work / "images" / f"{index}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", size, (40 * index, 90, 160)).save(path)
        images.append(f"images/{path.name}")
    source = write_raw_pairwise(work / f"raw_{rows}.jsonl", rows, images)
    command = [
        sys.executable,
        "-m",
        "mmcritic.cli",
        "--quiet",
        "preprocess",
        "--format",
        "llava-critic-pairwise",
        "--input",
        str(source),
        "--output",
        str(work / f"out_{rows}"),
        "--overwrite",
    ]
    started = time.perf_counter()
    result = subprocess.run(command, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    stats = json.loads(result.stdout)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "rows": rows,
        "written": stats["written"],
        "rejected": stats["rejected"],
        "seconds": round(seconds, 1),
        "rows_per_s": round(rows / seconds),
        "peak_rss_mib_so_far": round(peak_mib),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for rows in sorted(args.rows):
            print(json.dumps(measure(rows, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
