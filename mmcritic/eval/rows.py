"""A task's rows and media: hub ids with mirror fallback, local copies, and model-ready media.

A sample's media reach the model as they are: every image of a multi-image question, each in
its own pixel budget, and a video stored as a folder of frames as a video (`Media.frames`).

Rows are read with `mmcritic.data.sources.iter_rows`, the reader the preprocessing stage uses: a
local json/parquet file or saved dataset goes through `datasets` exactly like a hub id, so a local
copy of a benchmark behaves as the hub dataset does. `doc_id` is the 0-based row index in the
split (configs read one after another), the key a replay file uses.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import astuple
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from mmcritic.data.media import REMOTE, MediaBudget
from mmcritic.data.schema import RecordError
from mmcritic.data.sources import Source, iter_rows
from mmcritic.eval.tasks import Task
from mmcritic.hub import hub_reachable

if TYPE_CHECKING:
    from mmcritic.inference import Media

logger = logging.getLogger(__name__)

_HUB_FILE_URL = re.compile(r"^https?://[^/]+/datasets/[^/]+/[^/]+/resolve/[^/]+/(?P<path>.+)$")
_DATA_SUFFIXES = {".json", ".jsonl", ".parquet", ".csv", ".arrow"}


class TaskRows:
    """The rows of one task, from a local copy or hub id (`override`) or from the task's hub ids
    in order, falling back to the next mirror when one cannot be opened. A row the reader cannot
    parse (a torn JSON line, a lone surrogate escape) comes as the `RecordError` that says why,
    under its own `doc_id`, for the caller to reject. `location` names the source that was
    read, once iteration has started."""

    def __init__(self, task: Task, override: str | None = None):
        self.task, self.override = task, override
        self.location: str | None = None

    def base_dir(self) -> Path:
        """The folder relative media paths resolve against by default."""
        return Source(self.override).base_dir if self.override else Path.cwd()

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any] | RecordError]]:
        path = Path(self.override).expanduser() if self.override else None
        if path is not None and path.suffix in _DATA_SUFFIXES and not path.exists():
            raise FileNotFoundError(f"--task-data for {self.task.name}: {path} not found")
        locations = (self.override,) if self.override else self.task.dataset.hub_ids
        if any(Source(location).local_path is None for location in locations):
            hub_reachable()  # offline, a hub id fails at once instead of after many retries
        if not locations:
            raise ValueError(
                f"task {self.task.name} has no hub copy: {self.task.dataset.local_hint}"
            )
        doc_id = 0
        for config in self._configs():
            for row in self._config_rows(locations, config):
                yield doc_id, row
                doc_id += 1

    def _configs(self) -> Sequence[str | None]:
        if self.override and Source(self.override).local_path is not None:
            return (None,)
        return self.task.dataset.configs

    def _config_rows(
        self, locations: Sequence[str], config: str | None
    ) -> Iterator[dict[str, Any] | RecordError]:
        errors = []
        for location in locations:
            rows = iter_rows(Source(location, config, self.task.dataset.split))
            try:
                first = next(rows, None)
            except (OSError, ValueError) as err:
                errors.append(f"{location}: {err}")
                logger.warning("cannot open %s (%s); trying the next mirror", location, err)
                continue
            self.location = location
            if first is not None:
                yield first[1]
            for _, row in rows:
                yield row
            return
        raise ValueError(
            f"cannot read task {self.task.name} (config {config}) from {list(locations)}: "
            f"{'; '.join(errors)}. Download it and pass --task-data {self.task.name}=PATH"
        )


def image_value(value: Any, base_dir: Path) -> Image.Image | str:
    """A PIL image or file path for a row's image, whichever form the source holds it in:
    encoded bytes (parquet and hub datasets), a `{"path"}` struct, a PIL image or a path."""
    if isinstance(value, Image.Image):
        return value.convert("RGB")
    if isinstance(value, dict):
        if value.get("bytes"):
            with Image.open(io.BytesIO(value["bytes"])) as image:
                return image.convert("RGB")
        value = value.get("path")
    if isinstance(value, str) and value.strip():
        return _local_path(value, base_dir, "image")
    raise ValueError(f"image value is empty or not an image: {value!r}")


def video_path(value: Any, base_dir: Path) -> str:
    """A local video file, or folder of frames, for a row's video value. A hub file URL
    (`.../datasets/<org>/<name>/resolve/<rev>/videos/a.mp4`) maps to `videos/a.mp4` under the
    media root, so downloading the dataset's files is all a user has to do."""
    if isinstance(value, dict):
        value = value.get("path")
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"video value is empty or not a path: {value!r}")
    hub_file = _HUB_FILE_URL.match(value)
    return _local_path(hub_file.group("path") if hub_file else value, base_dir, "video")


def _local_path(value: str, base_dir: Path, kind: str) -> str:
    if REMOTE.match(value):
        raise ValueError(
            f"{kind} {value!r} is a URL; download the files and pass --media-root TASK=DIR"
        )
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base_dir / path)


def model_media(
    images: Sequence[Any],
    videos: Sequence[Any],
    base_dir: Path,
    max_frames: int | None,
    budget: MediaBudget | None = None,
) -> list[Media]:
    """The `Media` of a sample, images then videos (the indices a `Prompt`'s parts use), each
    sized by `budget` (the r1 evaluation budget by default)."""
    from mmcritic.inference import Media
    from mmcritic.inference.media import EVAL_IMAGES

    budget = budget or MediaBudget(EVAL_IMAGES)
    pixels = budget.image
    shown = [Media.image(image_value(value, base_dir), *astuple(pixels)) for value in images]
    return shown + [_video_media(value, base_dir, max_frames, budget) for value in videos]


def _video_media(value: Any, base_dir: Path, max_frames: int | None, budget: MediaBudget) -> Media:
    from mmcritic.inference import Media

    path, video = video_path(value, base_dir), budget.video
    if Path(path).is_dir():
        return Media.frames(
            path,
            max_frames=max_frames,
            min_pixels=video.min_pixels,
            max_pixels=video.max_pixels,
            budget=video,
        )
    return Media.video_in(path, video, max_frames)
