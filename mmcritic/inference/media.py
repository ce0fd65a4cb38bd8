"""What a question is about: images and videos, each with the budget it is resized into.

A `Media` is one image or one video (a video file or a folder of frames); a question about
several passes a sequence of them (`MediaInput`). Media are loaded through qwen-vl-utils, the
resize and frame sampling the Qwen-VL references use, on the pixel grid of the model that reads
them (its patch size), so the model sees inputs shaped as in its own training. Loading happens
once per `Media` and grid and is cached on it: Best-of-N shows the same picture to the critic
hundreds of times.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from PIL import Image

from mmcritic.data.media import REMOTE, PixelBudget
from mmcritic.data.resize import PATCH_SIZE
from mmcritic.data.schema import RecordError
from mmcritic.data.video import LoadedVideo, VideoBudget, load_frames, load_video

# Images: the smallest side of LLaVA-Critic-R1's training budget, so small images look as they
# did in training, and the paper's evaluation cap of 1280 visual tokens.
IMAGE_MIN_PIXELS = PixelBudget.min_pixels
IMAGE_MAX_PIXELS = 1280 * 28 * 28  # in Qwen2.5-VL's tokens, as the paper states it
EVAL_IMAGES = PixelBudget(IMAGE_MIN_PIXELS, IMAGE_MAX_PIXELS)
# Video frames: qwen-vl-utils' own per-frame bounds (128 to 768 visual tokens a frame).
VIDEO_MIN_PIXELS = VideoBudget.min_pixels
VIDEO_MAX_PIXELS = VideoBudget.max_pixels

FRAME_SUFFIXES = (".bmp", ".jpeg", ".jpg", ".png", ".webp")

MediaKind = Literal["image", "video"]
TRAINING_VIDEO = VideoBudget()


@dataclass(frozen=True)
class Media:
    """One image or video and how to load it; build it with `Media.image`, `Media.video` or
    `Media.frames`. A video stored as frames has the frame paths as `source` and the rate they
    were taken at as `frame_rate`."""

    kind: MediaKind
    source: str | Image.Image | tuple[str, ...]
    min_pixels: int
    max_pixels: int
    fps: float | None = None
    max_frames: int | None = None
    frame_rate: float | None = None
    resize_twice: bool = False
    video_budget: VideoBudget = TRAINING_VIDEO
    _loaded: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        PixelBudget(self.min_pixels, self.max_pixels)
        for name, rate in (("fps", self.fps), ("frame_rate", self.frame_rate)):
            if rate is not None and rate <= 0:
                raise ValueError(f"{name} must be positive, got {rate}")
        if isinstance(self.source, tuple) and self.frame_rate is None:
            raise ValueError("a video given as frames needs its frame_rate; use Media.frames")
        if self.max_frames is not None and self.max_frames < 2:
            raise ValueError(
                f"max_frames must be at least 2 (Qwen2.5-VL groups frames in pairs), "
                f"got {self.max_frames}"
            )

    @classmethod
    def image(
        cls,
        source: str | Path | Image.Image,
        min_pixels: int = IMAGE_MIN_PIXELS,
        max_pixels: int = IMAGE_MAX_PIXELS,
        resize_twice: bool = False,
    ) -> Media:
        """An image file, URL or PIL image, resized into [min_pixels, max_pixels] on load
        (`resize_twice`: after qwen-vl-utils' default rounding, as `PixelBudget` says)."""
        if isinstance(source, Image.Image):
            source = source.convert("RGB")
        else:
            source = _checked_path(source, "image")
        return cls("image", source, min_pixels, max_pixels, resize_twice=resize_twice)

    @classmethod
    def video(
        cls,
        path: str | Path,
        fps: float | None = None,
        max_frames: int | None = None,
        min_pixels: int = VIDEO_MIN_PIXELS,
        max_pixels: int = VIDEO_MAX_PIXELS,
        budget: VideoBudget = TRAINING_VIDEO,
    ) -> Media:
        """A video file sampled at `fps` frames a second, at most `max_frames` frames, each frame
        resized into the pixel budget; None keeps `budget`'s value (the training default)."""
        path = _checked_path(path, "video")
        return cls("video", path, min_pixels, max_pixels, fps, max_frames, video_budget=budget)

    @classmethod
    def video_in(
        cls, path: str | Path, budget: VideoBudget, max_frames: int | None = None
    ) -> Media:
        """A video file sized by `budget` alone, e.g. an evaluation protocol's."""
        return cls.video(path, None, max_frames, budget.min_pixels, budget.max_pixels, budget)

    @classmethod
    def frames(
        cls,
        frames: str | Path | Sequence[str | Path],
        fps: float = VideoBudget.fps,
        max_frames: int | None = None,
        min_pixels: int = VIDEO_MIN_PIXELS,
        max_pixels: int = VIDEO_MAX_PIXELS,
        budget: VideoBudget = TRAINING_VIDEO,
    ) -> Media:
        """A video stored as image files, one a frame, taken at `fps` frames a second: a folder
        (its images in natural name order, so frame_2 precedes frame_10) or a list in playing
        order. Benchmarks such as MM-RLHF-RewardBench ship videos this way. Frames are sampled
        and resized under the same `VideoBudget` rules as a video file; the default `fps`, the
        budget's sampling rate, keeps every frame up to `max_frames`, evenly spaced beyond."""
        paths = _frame_paths(frames)
        return cls(
            "video",
            paths,
            min_pixels,
            max_pixels,
            None,
            max_frames,
            frame_rate=fps,
            video_budget=budget,
        )

    def load(self, patch_size: int = PATCH_SIZE) -> Image.Image | LoadedVideo:
        """The resized image, or the sampled and resized frames with their metadata, on the
        pixel grid of a model with this vision patch size (`Family.patch_size`)."""
        if patch_size not in self._loaded:
            self._loaded[patch_size] = (
                self._fetch_image(patch_size) if self.kind == "image" else self._fetch(patch_size)
            )
        return self._loaded[patch_size]

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary for logs and command output."""
        summary: dict[str, Any] = {"kind": self.kind, "source": self._source_name()}
        if self.kind == "video":
            summary |= {"fps": self.fps, "max_frames": self.max_frames}
        if isinstance(self.source, tuple):
            summary |= {"frames": len(self.source), "frame_rate": self.frame_rate}
        return summary

    def _source_name(self) -> str:
        if isinstance(self.source, tuple):
            return str(Path(self.source[0]).parent)
        return self.source if isinstance(self.source, str) else "<PIL image>"

    def _fetch_image(self, patch_size: int) -> Image.Image:
        from qwen_vl_utils import fetch_image

        source = self.source
        if self.resize_twice:
            source = fetch_image({"image": source}, image_patch_size=patch_size)
        spec = {"image": source, "min_pixels": self.min_pixels, "max_pixels": self.max_pixels}
        return fetch_image(spec, image_patch_size=patch_size)

    def _fetch(self, patch_size: int) -> LoadedVideo:
        settings = {"min_pixels": self.min_pixels, "max_pixels": self.max_pixels}
        settings |= {"fps": self.fps} if self.fps is not None else {}
        settings |= {"max_frames": self.max_frames} if self.max_frames is not None else {}
        budget = self.video_budget.with_overrides(settings)
        try:
            if isinstance(self.source, tuple):
                return load_frames(self.source, self.frame_rate, budget, patch_size)
            return load_video(str(self.source), budget, patch_size)
        except RecordError as err:
            raise ValueError(str(err)) from err


MediaInput = Media | Sequence[Media] | None


def media_list(media: MediaInput) -> tuple[Media, ...]:
    """What a question shows, in order: a single `Media` and None (text only) are the one- and
    zero-item cases of a sequence, so callers with one picture need not wrap it."""
    if media is None:
        return ()
    if isinstance(media, Media):
        return (media,)
    items = tuple(media)
    strays = sorted({type(item).__name__ for item in items if not isinstance(item, Media)})
    if strays:
        raise TypeError(
            f"media must be Media objects (Media.image, Media.video, Media.frames); got {strays}"
        )
    return items


def media_counts(media: MediaInput) -> tuple[int, int]:
    """(images, videos) shown, the numbers prompts are built from (`user_message`,
    `media_word`)."""
    kinds = [item.kind for item in media_list(media)]
    return kinds.count("image"), kinds.count("video")


def _frame_paths(frames: str | Path | Sequence[str | Path]) -> tuple[str, ...]:
    """Frame files in playing order; fails at construction, naming what is missing."""
    if isinstance(frames, str | Path):
        folder = Path(frames).expanduser()
        if not folder.is_dir():
            raise FileNotFoundError(
                f"frame folder not found: {folder}; pass a folder or a list of frame files"
            )
        frames = sorted(
            (path for path in folder.iterdir() if path.suffix.lower() in FRAME_SUFFIXES),
            key=lambda path: _natural_key(path.name),
        )
        if not frames:
            raise ValueError(f"no frame images ({', '.join(FRAME_SUFFIXES)}) in {folder}")
    paths = [Path(frame).expanduser() for frame in frames]
    if not paths:
        raise ValueError("Media.frames needs at least one frame file")
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"frame files not found: {missing[:3]} ({len(missing)} in all)")
    return tuple(str(path.resolve()) for path in paths)


def _natural_key(name: str) -> list[Any]:
    """`frame_2` before `frame_10`; zero-padded names sort as they would as plain text."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


def _checked_path(source: str | Path, kind: MediaKind) -> str:
    """Fails at construction, naming the file, rather than deep inside a batched generate."""
    text = str(source)
    if REMOTE.match(text):
        return text
    path = Path(text).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"{kind} file not found: {path}")
    return str(path.resolve())
