"""Which decoder reads videos: decord, whatever else is installed.

qwen-vl-utils picks its reader by what it finds: torchcodec whenever the package is present
(vLLM brings it), else decord, else torchvision. The registry's torchcodec is CUDA-linked and
fails to load without FFmpeg's shared libraries; qwen-vl-utils then falls back to torchvision,
whose `io.read_video` no longer exists, so every video failed to decode. These tests build that
environment and check that mmcritic's loader decodes with decord in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest
import torch

from mmcritic.data.schema import RecordError
from mmcritic.data.video import (
    VideoBudget,
    frame_max_pixels,
    frame_size,
    load_video,
    probe_video,
    sampled_frames,
)
from tests.media_factory import write_mp4

SMALL = VideoBudget(min_pixels=4 * 784, max_pixels=16 * 784, total_pixels=64 * 784)
# what torchcodec 0.17 raises, beside the registry's torch 2.13.0, when FFmpeg's shared libraries
# are missing: the package imports, and its decoder fails when first used
TORCHCODEC_ERROR = (
    "Could not load libtorchcodec. Likely causes:\n"
    "  1. FFmpeg is not properly installed in your environment."
)


def broken_torchcodec(site: Path) -> Path:
    """An installed torchcodec (package and dist-info, as pip leaves them) whose video decoder
    fails as the real one does without FFmpeg. Importing it leaves a mark, to show who tried."""
    package = site / "torchcodec"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from pathlib import Path\nPath(__file__).with_name('imported').touch()\n"
    )
    (package / "decoders.py").write_text(
        "class VideoDecoder:\n"
        "    def __init__(self, *args, **kwargs):\n"
        f"        raise RuntimeError({TORCHCODEC_ERROR!r})\n"
    )
    dist_info = site / "torchcodec-0.17.0.dist-info"
    dist_info.mkdir()
    metadata = "Metadata-Version: 2.1\nName: torchcodec\nVersion: 0.17.0\n"
    (dist_info / "METADATA").write_text(metadata)
    return package / "imported"


PROBE = """
import json, os, sys
from qwen_vl_utils import fetch_video, vision_process
from mmcritic.data.video import VideoBudget, load_video

path, budget = sys.argv[1], VideoBudget(**json.loads(sys.argv[2]))
video = load_video(path, budget)
result = {
    "shape": list(video.frames.shape),
    "sum": float(video.frames.sum()),
    "metadata": video.metadata,
    "torchcodec_touched": os.path.exists(sys.argv[3]),
    "qwen_vl_utils_picks": vision_process.get_video_reader_backend(),
}
try:
    fetch_video(budget.fetch_spec(path))
    result["qwen_vl_utils_error"] = None
except Exception as err:
    result["qwen_vl_utils_error"] = str(err)
print(json.dumps(result))
"""


@pytest.mark.slow
def test_videos_decode_with_decord_while_a_broken_torchcodec_is_installed(tmp_path):
    path = write_mp4(tmp_path / "clip.mp4")
    marker = broken_torchcodec(tmp_path / "site")
    env = {key: value for key, value in os.environ.items() if key != "FORCE_QWENVL_VIDEO_READER"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), json.dumps(asdict(SMALL)), str(marker)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    # the trap is real: left to itself, qwen-vl-utils tries torchcodec, then torchvision, and fails
    assert result["qwen_vl_utils_picks"] == "torchcodec"
    assert marker.exists()
    assert "read_video" in result["qwen_vl_utils_error"]
    # and mmcritic never went near it
    assert not result["torchcodec_touched"]
    expected = load_video(str(path), SMALL)
    assert result["shape"] == list(expected.frames.shape) == [4, 3, 56, 56]
    assert result["sum"] == float(expected.frames.sum())
    assert result["metadata"] == {
        "fps": 8.0,
        "frames_indices": [0, 5, 10, 15],
        "total_num_frames": 16,
    }


@pytest.fixture
def qwen_vl_utils_reader(monkeypatch: pytest.MonkeyPatch):
    """Sets the reader qwen-vl-utils' own `fetch_video` uses. It reads FORCE_QWENVL_VIDEO_READER
    once, at import, and caches its choice, so the module attribute and the cache are reset."""
    from qwen_vl_utils import vision_process

    def use(backend: str) -> None:
        monkeypatch.setattr(vision_process, "FORCE_QWENVL_VIDEO_READER", backend)
        vision_process.get_video_reader_backend.cache_clear()

    yield use
    vision_process.get_video_reader_backend.cache_clear()


@pytest.mark.parametrize("preferred", ["torchcodec", "torchvision"])
def test_loader_decodes_with_decord_whatever_qwen_vl_utils_prefers(
    qwen_vl_utils_reader, monkeypatch, tmp_path, preferred
):
    monkeypatch.setitem(sys.modules, "torchcodec", None)  # installed or not, it cannot load
    qwen_vl_utils_reader(preferred)
    video = load_video(str(write_mp4(tmp_path / "clip.mp4")), SMALL)
    assert video.frames.shape == (4, 3, 56, 56)
    assert video.metadata["frames_indices"] == [0, 5, 10, 15]


@pytest.mark.parametrize(
    ("size", "frames", "fps", "budget"),
    [
        ((64, 48), 16, 8, SMALL),
        ((200, 90), 25, 25, VideoBudget(fps=1.0, min_frames=2, min_pixels=3136, max_pixels=20_000)),
        ((320, 240), 40, 10, VideoBudget(max_frames=8, total_pixels=8 * 784 * 2)),
        ((96, 96), 9, 3, VideoBudget(min_pixels=3136, max_pixels=100_000)),
    ],
)
def test_loaded_frames_equal_qwen_vl_utils_fetch_video_with_decord(
    qwen_vl_utils_reader, tmp_path, size, frames, fps, budget
):
    """The loader decodes with qwen-vl-utils' decord reader and resizes as its `fetch_video`
    does; this pins the two to the same pixels, so the resize cannot drift from the library's."""
    from qwen_vl_utils import fetch_video

    path = write_mp4(tmp_path / "clip.mp4", size=size, frames=frames, fps=fps)
    info = probe_video(path)
    qwen_vl_utils_reader("decord")
    capped = replace(
        budget,
        min_frames=min(budget.min_frames, info.frames),
        max_frames=min(budget.max_frames, info.frames),
    )
    spec = capped.fetch_spec(str(path))
    spec["max_pixels"] = frame_max_pixels(sampled_frames(info, capped), capped)
    reference, metadata = fetch_video(spec, return_video_metadata=True)

    video = load_video(str(path), budget)
    assert metadata["video_backend"] == "decord"
    assert video.frames.dtype == reference.dtype
    assert torch.equal(video.frames, reference)
    assert video.metadata == {key: metadata[key] for key in video.metadata}


def test_frames_follow_the_budget_above_qwen_vl_utils_default_frame_cap(tmp_path):
    """`fetch_video` caps each frame at 768 visual tokens whatever it is asked; the loader
    resizes to the size the header estimate computed, so the estimate holds above that cap."""
    path = write_mp4(tmp_path / "wide.mp4", size=(1280, 720), frames=4, fps=2)
    video = load_video(str(path), VideoBudget(max_pixels=1000 * 784))
    height, width = frame_size(probe_video(path), 4, VideoBudget(max_pixels=1000 * 784))
    assert video.frames.shape == (4, 3, height, width)
    assert height * width > 768 * 784


def test_missing_decord_names_the_extra_to_install(monkeypatch, tmp_path):
    path = str(write_mp4(tmp_path / "clip.mp4"))
    monkeypatch.setitem(sys.modules, "decord", None)
    with pytest.raises(ImportError, match=r'pip install "mmcritic\[video\]"') as raised:
        load_video(path, SMALL)
    assert not isinstance(raised.value, RecordError)
