"""Videos: a budget, a metadata probe, a token estimate that needs no decoding, and the loader.

Frames are decoded and sampled by qwen-vl-utils' decord reader and resized as its `fetch_video`
resizes them, the way Qwen2.5-VL was trained. The reader is chosen here rather than left to
qwen-vl-utils, which takes torchcodec whenever it is installed (vLLM brings it) and falls back to
torchvision when torchcodec cannot load: the registry's torchcodec fails without FFmpeg's shared
libraries, and torchvision no longer reads video, so left to itself no video would decode.
The token estimate repeats qwen-vl-utils' own arithmetic (`smart_nframes`, then `smart_resize`
under the per-frame share of the total pixel budget) on the container's header, so an over-long
video is caught before a single frame is decoded. Streams a model would see wrongly (rotated,
degenerate sizes) or not at all (empty, unreadable) are rejected with a reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from PIL import Image

from mmcritic.data.resize import MAX_ASPECT_RATIO, PATCH_SIZE, smart_resize, token_side
from mmcritic.data.schema import RecordError

TOKEN_SIDE = token_side(PATCH_SIZE)  # the pixel defaults below count Qwen2.5-VL's tokens
FRAME_FACTOR = 2  # every Qwen-VL family merges two frames into one temporal patch


@dataclass(frozen=True)
class VideoBudget:
    """How a video becomes visual tokens: frames sampled at `fps` within [min, max] frames, each
    resized into [min_pixels, max_pixels] and all frames together into `total_pixels`.

    Defaults follow qwen-vl-utils, except `max_frames` (32, MMVU's setting) and `total_pixels`
    (about 4k visual tokens), which keep a clip inside a critic prompt.
    """

    fps: float = 2.0
    min_frames: int = 4
    max_frames: int = 32
    min_pixels: int = 128 * TOKEN_SIDE * TOKEN_SIDE
    max_pixels: int = 768 * TOKEN_SIDE * TOKEN_SIDE
    total_pixels: int = 4096 * FRAME_FACTOR * TOKEN_SIDE * TOKEN_SIDE

    def __post_init__(self) -> None:
        if self.fps <= 0:
            raise ValueError(f"video fps must be positive, got {self.fps}")
        if not FRAME_FACTOR <= self.min_frames <= self.max_frames:
            raise ValueError(
                f"video frames need {FRAME_FACTOR} <= min_frames <= max_frames, got "
                f"min_frames={self.min_frames}, max_frames={self.max_frames}"
            )
        if not 0 < self.min_pixels <= self.max_pixels:
            raise ValueError(
                f"video pixels need 0 < min_pixels <= max_pixels, got "
                f"min_pixels={self.min_pixels}, max_pixels={self.max_pixels}"
            )

    def with_overrides(self, overrides: dict[str, Any] | None) -> VideoBudget:
        """This budget with a record's own settings (`meta.video`) applied on top."""
        if not overrides:
            return self
        unknown = sorted(set(overrides) - set(asdict(self)))
        if unknown:
            raise RecordError(
                "bad_video_options",
                f"unknown video options {unknown}; valid: {sorted(asdict(self))}",
            )
        values = {**asdict(self), **overrides}
        if "min_frames" not in overrides:  # a lower frame cap alone lowers the floor with it
            values["min_frames"] = min(self.min_frames, values["max_frames"])
        try:
            return VideoBudget(**values)
        except (TypeError, ValueError) as err:
            raise RecordError("bad_video_options", f"video options {overrides}: {err}") from err

    def fetch_spec(self, path: str) -> dict[str, Any]:
        """The element dict qwen-vl-utils' video readers and `fetch_video` read."""
        return {
            "video": path,
            "fps": self.fps,
            "min_frames": self.min_frames,
            "max_frames": self.max_frames,
            "min_pixels": self.min_pixels,
            "max_pixels": self.max_pixels,
            "total_pixels": self.total_pixels,
        }


@dataclass(frozen=True)
class VideoInfo:
    """What the container header says (and, for the rotation, the first frame)."""

    frames: int
    fps: float
    width: int
    height: int
    rotation: int

    @property
    def duration(self) -> float:
        return self.frames / self.fps


def probe_video(path: str | Path) -> VideoInfo:
    """The header of a video file; a RecordError says why a file cannot be used."""
    import av

    path = Path(path)
    if not path.is_file():
        raise RecordError("media_missing", f"video file not found: {path}")
    if path.stat().st_size == 0:
        raise RecordError("video_empty", f"video file is empty (0 bytes): {path}")
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise RecordError("media_corrupt", f"no video stream in {path}")
            info = _stream_info(container, container.streams.video[0])
    except av.error.FFmpegError as err:
        raise RecordError("media_corrupt", f"cannot read video {path}: {err}") from err
    check_video(info, path)
    return info


def _stream_info(container: Any, stream: Any) -> VideoInfo:
    rate = float(stream.average_rate or stream.guessed_rate or 0)
    frames = stream.frames
    if not frames and rate:
        seconds = _seconds(container, stream)
        frames = round(seconds * rate)
    return VideoInfo(
        frames=int(frames or 0),
        fps=rate,
        width=int(stream.codec_context.width or 0),
        height=int(stream.codec_context.height or 0),
        rotation=_rotation(container, stream),
    )


def _seconds(container: Any, stream: Any) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    return container.duration / 1_000_000 if container.duration else 0.0


def _rotation(container: Any, stream: Any) -> int:
    """Display rotation in degrees. FFmpeg exposes it on decoded frames only, so this decodes the
    first frame (a key frame) and nothing more."""
    for frame in container.decode(stream):
        return round(frame.rotation) % 360
    return 0


def check_video(info: VideoInfo, path: str | Path) -> None:
    """Rejects streams the model would see wrongly or not at all."""
    if info.frames <= 0 or info.fps <= 0:
        raise RecordError("video_empty", f"video has no frames: {path}")
    if info.frames < FRAME_FACTOR:
        raise RecordError(
            "video_empty",
            f"video {path} has {info.frames} frame; at least {FRAME_FACTOR} are needed",
        )
    if info.rotation:
        raise RecordError(
            "video_rotated",
            f"video {path} is stored rotated by {info.rotation} degrees; the decoder ignores the "
            "rotation, so the model would see it sideways: re-encode it upright",
        )
    short, long = sorted((info.width, info.height))
    if short < PATCH_SIZE or long / short > MAX_ASPECT_RATIO:
        raise RecordError(
            "video_size",
            f"video {path} is {info.width}x{info.height}: sides must be at least {PATCH_SIZE} "
            f"pixels and the aspect ratio at most {MAX_ASPECT_RATIO}",
        )


def sampled_frames(info: VideoInfo, budget: VideoBudget) -> int:
    """Frames qwen-vl-utils will sample from this video under the budget."""
    from qwen_vl_utils.vision_process import smart_nframes

    spec = {"fps": budget.fps, "min_frames": budget.min_frames, "max_frames": budget.max_frames}
    spec["max_frames"] = min(budget.max_frames, info.frames)
    spec["min_frames"] = min(budget.min_frames, spec["max_frames"])
    return smart_nframes(spec, total_frames=info.frames, video_fps=info.fps)


def frame_size(
    info: VideoInfo, frames: int, budget: VideoBudget, patch_size: int = PATCH_SIZE
) -> tuple[int, int]:
    """(height, width) each sampled frame is resized to, as `fetch_video` computes it for a
    model of this patch size."""
    return smart_resize(
        info.height,
        info.width,
        factor=token_side(patch_size),
        min_pixels=budget.min_pixels,
        max_pixels=frame_max_pixels(frames, budget),
    )


def frame_max_pixels(frames: int, budget: VideoBudget) -> int:
    """Each frame's pixel cap: its share of `total_pixels`, within the per-frame bounds."""
    share = budget.total_pixels / frames * FRAME_FACTOR
    return int(max(min(budget.max_pixels, share), int(budget.min_pixels * 1.05)))


def video_token_count(info: VideoInfo, budget: VideoBudget, patch_size: int = PATCH_SIZE) -> int:
    """Visual tokens the processor will spend on this video, from the header alone."""
    frames = sampled_frames(info, budget)
    height, width = frame_size(info, frames, budget, patch_size)
    temporal = math.ceil(frames / FRAME_FACTOR)
    side = token_side(patch_size)
    return temporal * (height // side) * (width // side)


@dataclass
class LoadedVideo:
    """Frames ready for the processor, with the metadata it derives the model's temporal
    positions from (`second_per_grid_ts`): source fps, total frames, sampled frame indices."""

    frames: Any
    metadata: dict[str, Any]

    @property
    def sample_fps(self) -> float:
        return (
            len(self.metadata["frames_indices"])
            / self.metadata["total_num_frames"]
            * (self.metadata["fps"])
        )


def load_video(path: str, budget: VideoBudget, patch_size: int = PATCH_SIZE) -> LoadedVideo:
    """Decodes and samples a video with decord, resizes it as qwen-vl-utils' `fetch_video` does
    for a model of this patch size; a RecordError when the file cannot be decoded, an
    ImportError when decord is missing."""
    info = probe_video(path)
    budget = replace(
        budget,
        max_frames=min(budget.max_frames, info.frames),
        min_frames=min(budget.min_frames, info.frames),
    )
    read = decord_reader()
    try:
        frames, metadata, _ = read(budget.fetch_spec(path))
    except Exception as err:  # decoders raise many unrelated types on damaged files
        raise RecordError("media_corrupt", f"cannot decode video {path}: {err}") from err
    metadata = {key: metadata[key] for key in ("fps", "frames_indices", "total_num_frames")}
    return LoadedVideo(
        frames=_resize(frames, frame_size(info, len(frames), budget, patch_size)),
        metadata=metadata,
    )


def decord_reader() -> Callable[[dict[str, Any]], tuple[Any, dict[str, Any], float]]:
    """qwen-vl-utils' decord reader, named rather than left to its `get_video_reader_backend`:
    that picks torchcodec whenever it is installed, and on any reader error falls back to
    torchvision, which cannot read video any more. Naming it keeps decord's own error on a bad
    file and changes nothing for other users of qwen-vl-utils in the process."""
    try:
        import decord  # noqa: F401
    except ImportError as err:
        raise ImportError(
            "mmcritic decodes videos with decord, which is not installed: "
            'pip install "mmcritic[video]"'
        ) from err
    from qwen_vl_utils.vision_process import VIDEO_READER_BACKENDS

    return VIDEO_READER_BACKENDS["decord"]


def _resize(frames: Any, size: tuple[int, int]) -> Any:
    """The resize `fetch_video` applies to decoded frames: bicubic, antialiased, as floats."""
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms.functional import resize

    return resize(
        frames, list(size), interpolation=InterpolationMode.BICUBIC, antialias=True
    ).float()


def processor_video_kwargs(videos: list[LoadedVideo]) -> dict[str, Any]:
    """Processor arguments for videos loaded here. The frames are already sampled and resized as
    qwen-vl-utils does; sampling or resizing again would change the token count the budget chose."""
    if not videos:
        return {}
    return {
        "videos": [video.frames for video in videos],
        "video_metadata": [video.metadata for video in videos],
        "videos_kwargs": {"do_resize": False, "do_sample_frames": False},
    }


def load_frames(
    paths: Sequence[str], fps: float, budget: VideoBudget, patch_size: int = PATCH_SIZE
) -> LoadedVideo:
    """Samples and resizes frame files as `load_video` does a video file: the frame count comes
    from the budget (`sampled_frames`), the frames are picked evenly as qwen-vl-utils' video
    readers pick them, and qwen-vl-utils' `fetch_video` resizes them. The metadata names the
    frames picked among all, so the model's temporal positions follow the real frame rate."""
    import torch
    from qwen_vl_utils import fetch_video

    folder = Path(paths[0]).parent
    info = _frames_info(paths, fps)
    check_video(info, folder)
    count = sampled_frames(info, budget)
    indices = torch.linspace(0, len(paths) - 1, count).round().long().tolist()
    spec = {
        "video": [paths[index] for index in indices],
        "sample_fps": count / len(paths) * fps,
        "min_pixels": budget.min_pixels,
        "max_pixels": budget.max_pixels,
        "total_pixels": budget.total_pixels,
    }
    try:
        frames = fetch_video(spec, image_patch_size=patch_size)
    except Exception as err:  # PIL and torch raise many unrelated types on damaged files
        raise RecordError("media_corrupt", f"cannot load the frames in {folder}: {err}") from err
    metadata = {"fps": fps, "frames_indices": indices, "total_num_frames": len(paths)}
    return LoadedVideo(frames=frames, metadata=metadata)


def _frames_info(paths: Sequence[str], fps: float) -> VideoInfo:
    """A video header for frame files, from the image headers: frames of different sizes
    cannot be stacked into one video, so they are refused here, naming the sizes."""
    sizes = set()
    for path in paths:
        try:
            with Image.open(path) as image:
                sizes.add(image.size)
        except OSError as err:
            raise RecordError("media_corrupt", f"cannot read frame {path}: {err}") from err
    if len(sizes) > 1:
        raise RecordError(
            "video_size",
            f"the frames in {Path(paths[0]).parent} differ in size {sorted(sizes)}; "
            "resize them to one size",
        )
    ((width, height),) = sizes
    return VideoInfo(frames=len(paths), fps=fps, width=width, height=height, rotation=0)
