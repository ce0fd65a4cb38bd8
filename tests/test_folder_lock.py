"""One writer per output folder: a second run on a folder in use stops at once naming the first;
a lock left by a killed run is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmcritic.cli import main
from mmcritic.data.folder_lock import LOCK_NAME, FolderInUse, folder_lock
from mmcritic.train.config import load_recipe
from mmcritic.train.run import train
from tests.test_eval_runner import REPLAY

RECIPE = Path(__file__).parents[1] / "recipes" / "quickstart_cpu.yaml"


def _hold(folder: Path) -> subprocess.Popen:
    """Another process holding `folder`'s lock until killed."""
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from mmcritic.data.folder_lock import folder_lock\n"
        "with folder_lock(Path(sys.argv[1])):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(120)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def _eval(out: Path, data: Path, *extra: str) -> int:
    return main(
        [
            "--quiet",
            "eval",
            f"--model={REPLAY}",
            "--tasks=chartqa",
            f"--output={out}",
            f"--task-data=chartqa={data}",
            *extra,
        ]
    )


@pytest.fixture(scope="module")
def chartqa(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.test_eval_fixtures import all_task_data

    return all_task_data(tmp_path_factory)["chartqa"]


def test_a_second_eval_on_a_folder_in_use_stops_at_once_naming_the_first(
    tmp_path, chartqa, caplog
) -> None:
    out = tmp_path / "run"
    holder = _hold(out)
    try:
        started = time.perf_counter()
        assert _eval(out, chartqa, "--resume") == 2
        assert time.perf_counter() - started < 10
        assert f"in use by process {holder.pid}" in caplog.text
        assert not list(out.glob("samples_*.jsonl"))
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_left_by_a_killed_run_is_taken_over(tmp_path, chartqa, caplog) -> None:
    out = tmp_path / "run"
    holder = _hold(out)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (out / LOCK_NAME).exists()

    assert _eval(out, chartqa) == 0
    assert "stale lock" in caplog.text
    assert not (out / LOCK_NAME).exists()
    lines = (out / "samples_chartqa.jsonl").read_text().splitlines()
    assert len({json.loads(line)["doc_id"] for line in lines}) == len(lines) > 0


def test_train_refuses_a_folder_another_run_writes(tiny_model_dir, tmp_path) -> None:
    out = tmp_path / "run"
    holder = _hold(out)
    recipe = load_recipe(RECIPE, [f"output_dir={out}", f"model.name_or_path={tiny_model_dir}"])
    try:
        with pytest.raises(FolderInUse, match=f"process {holder.pid}"):
            train(recipe)
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_is_released_when_the_run_ends_or_fails(tmp_path) -> None:
    with folder_lock(tmp_path):
        assert (tmp_path / LOCK_NAME).exists()
    assert not (tmp_path / LOCK_NAME).exists()
    with pytest.raises(RuntimeError), folder_lock(tmp_path):
        raise RuntimeError("the run failed")
    assert not (tmp_path / LOCK_NAME).exists()


def test_preprocess_refuses_a_folder_another_run_writes(tmp_path) -> None:
    from mmcritic.data.convert import PreprocessOptions, preprocess
    from mmcritic.data.sources import Source

    raw = tmp_path / "raw.jsonl"
    raw.write_text('{"question": "q", "chosen": "a", "rejected": "b"}\n')
    out = tmp_path / "data"
    holder = _hold(out)
    try:
        with pytest.raises(FolderInUse, match=f"process {holder.pid}"):
            preprocess(Source(str(raw)), out, PreprocessOptions(format="chosen-rejected"))
    finally:
        holder.kill()
        holder.wait()
    assert not (out / "data.jsonl").exists()
