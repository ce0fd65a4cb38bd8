"""Benchmark fixtures: a few rows of every task with the benchmark's own column names, built into
the formats the hub serves (parquet with image columns) or the release ships (json with media
paths), and read back through the same `datasets` code as a hub id.

`tests/fixtures/eval/<task>.json` holds the rows; `"<png>"` in an image column becomes a PNG
generated here, `image_files` and `video_files` are written next to the data file. Prompt
snapshots live in `tests/fixtures/eval/prompts.json`; to accept an intended prompt change, run
`MMCRITIC_UPDATE_SNAPSHOTS=1 pytest tests/test_eval_fixtures.py`.
"""

from __future__ import annotations

import io
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from mmcritic.eval.registry import get_task, task_names
from mmcritic.eval.rows import TaskRows, image_value
from mmcritic.eval.runner import make_sample
from mmcritic.eval.tasks import Pair, Problem

FIXTURES = Path(__file__).parent / "fixtures" / "eval"
PNG_MARKER = "<png>"
PROMPT_SNAPSHOTS = FIXTURES / "prompts.json"


def _png(index: int) -> bytes:
    buffer = io.BytesIO()
    color = ((index * 67) % 256, (index * 131) % 256, (index * 29 + 90) % 256)
    Image.new("RGB", (40 + 8 * index, 32), color).save(buffer, format="PNG")
    return buffer.getvalue()


def fixture_spec(task: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{task}.json").read_text(encoding="utf-8"))


def build_task_data(task: str, out_dir: Path) -> Path:
    """Writes the task's fixture as its real format under `out_dir/task`; returns the data file."""
    import datasets

    from mmcritic.data.synth import write_motion_video
    from tests.media_factory import write_png

    spec = fixture_spec(task)
    folder = out_dir / task
    folder.mkdir(parents=True, exist_ok=True)
    for index, name in enumerate(spec.get("image_files", [])):
        write_png(folder / name, size=(48 + 8 * index, 40), color=(30 * index % 256, 120, 200))
    for name in spec.get("video_files", []):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        write_motion_video(folder / name, "right", random.Random(0))
    counter = iter(range(10_000))
    rows = [
        {
            key: {"bytes": _png(next(counter)), "path": None} if value == PNG_MARKER else value
            for key, value in row.items()
        }
        for row in spec["rows"]
    ]
    if spec["format"] == "parquet":
        dataset = datasets.Dataset.from_list(rows)
        for column in spec.get("image_columns", []):
            dataset = dataset.cast_column(column, datasets.Image())
        path = folder / f"{task}.parquet"
        dataset.to_parquet(str(path))
        return path
    path = folder / spec.get("data_name", f"{task}.json")
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


_BUILT: dict[str, Path] = {}


def all_task_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every task's fixture data file, built once per test session and shared by the eval test
    modules (each declares an `eval_data` fixture over this)."""
    if not _BUILT:
        root = tmp_path_factory.mktemp("eval_data")
        _BUILT.update({task: build_task_data(task, root) for task in task_names()})
    return _BUILT


@pytest.fixture(scope="session")
def eval_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return all_task_data(tmp_path_factory)


def built_items(task: str, path: Path) -> list[Problem | Pair]:
    rows = TaskRows(get_task(task), str(path))
    return [make_sample(get_task(task), doc_id, row, rows.base_dir()).item for doc_id, row in rows]


def test_every_registered_task_has_a_fixture_and_replay_lines() -> None:
    replay_tasks = {
        json.loads(line)["task"]
        for line in (FIXTURES / "replay.jsonl").read_text(encoding="utf-8").splitlines()
    }
    fixtures = {path.stem for path in FIXTURES.glob("*.json")} - {PROMPT_SNAPSHOTS.stem}

    assert fixtures == set(task_names())
    assert replay_tasks == set(task_names())


@pytest.mark.parametrize("task", task_names())
def test_fixture_rows_load_through_datasets_and_build_items(task: str, eval_data) -> None:
    rows = TaskRows(get_task(task), str(eval_data[task]))
    doc_ids = [doc_id for doc_id, _ in rows]
    items = built_items(task, eval_data[task])

    assert rows.location == str(eval_data[task])
    assert doc_ids == list(range(len(fixture_spec(task)["rows"])))
    assert len(items) == len(doc_ids)
    for item in items:
        media = item.images + item.videos
        assert media or task == "hallusionbench"
        for value in item.images:
            image = image_value(value, rows.base_dir())
            assert isinstance(image, Image.Image) or Path(image).is_file()


def test_image_columns_arrive_as_encoded_bytes_like_hub_parquet(eval_data) -> None:
    items = built_items("blink", eval_data["blink"])

    assert [len(item.images) for item in items] == [1, 3, 3]
    assert set(items[0].images[0]) == {"bytes", "path"}


def test_multi_image_items_show_each_image_whole_and_in_order(eval_data) -> None:
    from mmcritic.eval.backends import sample_media

    task = get_task("blink")
    rows = TaskRows(task, str(eval_data["blink"]))
    shown = [sample_media(make_sample(task, i, row, rows.base_dir()), None) for i, row in rows]

    kinds = [[media.kind for media in row] for row in shown]
    assert kinds == [["image"], ["image"] * 3, ["image"] * 3]
    assert [media.source.size for media in shown[1]] == [(48, 32), (56, 32), (64, 32)]


def test_mmmu_shows_the_images_its_markers_name_in_ascending_order(tmp_path) -> None:
    row = {
        "id": "validation_Math_9",
        "question": "Is the shape in <image 3> larger than the one in <image 1>?",
        "options": "['Yes', 'No']",
        "answer": "A",
        "question_type": "multiple-choice",
        **{f"image_{n}": f"picture {n}" for n in (1, 2, 3)},
    }

    problem = make_sample(get_task("mmmu_val"), 0, row, tmp_path).item

    assert problem.images == ["picture 1", "picture 3"]
    assert "<image 3>" in problem.text and "<image 1>" in problem.text


def test_video_tasks_resolve_hub_urls_and_ids_to_files_under_the_media_root(eval_data) -> None:
    from mmcritic.eval.rows import video_path

    for task in ("mmvu", "videomme"):
        base = eval_data[task].parent
        for item in built_items(task, eval_data[task]):
            assert Path(video_path(item.videos[0], base)).is_file()


def _prompt_snapshot(eval_data) -> dict[str, str]:
    snapshot = {}
    for task in task_names():
        item = built_items(task, eval_data[task])[0]
        if isinstance(item, Problem):
            snapshot[task] = item.text
        else:
            snapshot[task] = " | ".join(
                (item.question, item.response_1, item.response_2, f"truth {item.truth}")
            )
    return snapshot


def test_prompts_match_the_snapshot(eval_data) -> None:
    prompts = _prompt_snapshot(eval_data)
    if os.environ.get("MMCRITIC_UPDATE_SNAPSHOTS"):
        PROMPT_SNAPSHOTS.write_text(json.dumps(prompts, indent=1) + "\n", encoding="utf-8")

    assert prompts == json.loads(PROMPT_SNAPSHOTS.read_text(encoding="utf-8"))


def test_rows_fall_back_to_the_next_mirror_when_one_cannot_be_opened(tmp_path, eval_data) -> None:
    import dataclasses

    from mmcritic.eval.tasks import DatasetRef

    unreadable = tmp_path / "not_a_dataset"
    unreadable.mkdir()
    mirrors = DatasetRef((str(unreadable), str(eval_data["ai2d"])), "test")
    rows = TaskRows(dataclasses.replace(get_task("ai2d"), dataset=mirrors))

    assert [doc_id for doc_id, _ in rows] == [0, 1]
    assert rows.location == str(eval_data["ai2d"])


def test_rows_from_no_readable_mirror_say_how_to_point_at_a_local_copy(tmp_path) -> None:
    import dataclasses

    from mmcritic.eval.tasks import DatasetRef

    unreadable = tmp_path / "not_a_dataset"
    unreadable.mkdir()
    task = dataclasses.replace(get_task("ai2d"), dataset=DatasetRef((str(unreadable),), "test"))

    with pytest.raises(ValueError, match="pass --task-data ai2d=PATH"):
        list(TaskRows(task))
