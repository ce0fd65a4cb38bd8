"""Videos end to end: header probe and token estimate, bad files, video and mixed training."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import torch

from mmcritic.data.convert import BuildOptions, PreprocessOptions, preprocess
from mmcritic.data.dataset import read_records
from mmcritic.data.media import MediaBudget
from mmcritic.data.schema import RecordError
from mmcritic.data.sources import Source
from mmcritic.data.synth import synthesize
from mmcritic.data.video import (
    VideoBudget,
    load_video,
    probe_video,
    processor_video_kwargs,
    video_token_count,
)
from mmcritic.train.examples import prompt_token_count
from mmcritic.train.run import train
from tests.media_factory import write_mp4, write_one_frame_mp4
from tests.test_train import changed_tensors, format_warm_start, tiny_recipe, weights

SMALL = {"min_pixels": 4 * 784, "max_pixels": 16 * 784, "total_pixels": 64 * 784}
VIDEO_OVERRIDES = [f"data.video.{key}={value}" for key, value in SMALL.items()] + [
    "data.video.max_frames=4"
]


def processor_token_count(processor, video) -> int:
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "?"}]}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    out = processor(text=[text], return_tensors="pt", **processor_video_kwargs([video]))
    assert (out["input_ids"] == processor.tokenizer.convert_tokens_to_ids("<|video_pad|>")).sum()
    return int(out["video_grid_thw"].prod(dim=-1).sum()) // 4


@pytest.mark.parametrize(
    ("size", "frames", "fps", "budget"),
    [
        ((64, 48), 16, 8, VideoBudget(**SMALL)),
        ((64, 48), 16, 8, VideoBudget(fps=4.0, max_frames=16, **SMALL)),
        ((200, 90), 25, 25, VideoBudget(fps=1.0, min_frames=2, **SMALL)),
        ((96, 96), 9, 3, VideoBudget(fps=2.0, min_pixels=3136, max_pixels=100_000)),
        ((320, 240), 40, 10, VideoBudget(max_frames=8, total_pixels=8 * 784 * 2)),
    ],
)
def test_token_estimate_from_the_header_matches_the_processor(
    tiny_model_and_processor, tmp_path, size, frames, fps, budget
):
    _, processor = tiny_model_and_processor
    path = write_mp4(tmp_path / "clip.mp4", size=size, frames=frames, fps=fps)
    estimate = video_token_count(probe_video(path), budget)
    assert estimate == processor_token_count(processor, load_video(str(path), budget))


def test_probe_reads_the_header(tmp_path):
    info = probe_video(write_mp4(tmp_path / "clip.mp4", size=(64, 48), frames=12, fps=6))
    assert (info.frames, info.fps, info.width, info.height, info.rotation) == (12, 6.0, 64, 48, 0)
    assert info.duration == 2.0


def test_record_video_options_override_the_run_budget(tiny_model_and_processor, tmp_path):
    _, processor = tiny_model_and_processor
    synthesize("motion", 2, tmp_path / "motion", seed=3)
    record = read_records(tmp_path / "motion")[0]
    budget = MediaBudget(video=VideoBudget(max_frames=8, **SMALL))
    full = prompt_token_count(record, processor, budget)
    record.meta["video"] = {"max_frames": 2}
    assert prompt_token_count(record, processor, budget) < full


def test_unknown_record_video_option_is_a_clear_error():
    with pytest.raises(RecordError, match=r"unknown video options.*max_frame"):
        VideoBudget().with_overrides({"max_frame": 2})


def bad_videos(folder: Path) -> dict[str, str]:
    """One video per failure mode, by the reason it must be rejected with."""
    good = write_mp4(folder / "good.mp4")
    (folder / "truncated.mp4").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    (folder / "noise.mp4").write_bytes(b"not a video at all " * 50)
    (folder / "empty.mp4").write_bytes(b"")
    write_one_frame_mp4(folder / "one_frame.mp4")
    write_mp4(folder / "rotated.mp4", rotation=90)
    write_mp4(folder / "sliver.mp4", size=(2000, 8), frames=4)
    return {
        "missing.mp4": "media_missing",
        "truncated.mp4": "media_corrupt",
        "noise.mp4": "media_corrupt",
        "empty.mp4": "video_empty",
        "one_frame.mp4": "video_empty",
        "rotated.mp4": "video_rotated",
        "sliver.mp4": "video_size",
    }


def test_each_bad_video_is_rejected_with_its_reason_and_the_run_goes_on(tmp_path):
    expected = bad_videos(tmp_path)
    names = ["good.mp4", *expected]
    rows = [
        {"id": name, "question": "Where?", "chosen": "Right.", "rejected": "Left.", "video": name}
        for name in names
    ]
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    options = PreprocessOptions(
        format="chosen-rejected", build=BuildOptions(video=VideoBudget(**SMALL))
    )
    stats = preprocess(Source(str(source)), tmp_path / "out", options, show_progress=False)
    assert stats["written"] == 1 and stats["reconciles"]
    rejected = [json.loads(line) for line in (tmp_path / "out" / "rejected.jsonl").open()]
    assert {row["id"]: row["reason"] for row in rejected} == expected
    for row in rejected:
        assert row["id"] in row["message"], row


def test_verifiable_rows_accept_videos_and_count_their_tokens(tmp_path):
    write_mp4(tmp_path / "clip.mp4")
    source = tmp_path / "rows.jsonl"
    source.write_text(json.dumps({"question": "Where?", "answer": "right", "video": "clip.mp4"}))
    options = PreprocessOptions(format="verifiable", build=BuildOptions(video=VideoBudget(**SMALL)))
    stats = preprocess(Source(str(source)), tmp_path / "out", options, show_progress=False)
    record = json.loads((tmp_path / "out" / "data.jsonl").read_text())
    assert stats["written"] == 1 and record["videos"] == [str((tmp_path / "clip.mp4").resolve())]
    assert record["prompt"][0]["content"][0] == {"type": "video"}
    assert record["meta"]["prompt_tokens_est"] > video_token_count(
        probe_video(tmp_path / "clip.mp4"), VideoBudget(**SMALL)
    )


@pytest.fixture(scope="module")
def motion_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("motion")
    synthesize("motion", 8, folder, seed=0, overwrite=True)
    return folder


@pytest.fixture(scope="module")
def mixed_data(motion_data, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Colour images and motion videos in one dataset folder, interleaved."""
    color = tmp_path_factory.mktemp("mixed_color")
    synthesize("color", 8, color, seed=1, overwrite=True)
    folder = tmp_path_factory.mktemp("mixed")
    lines = []
    for images, videos in zip(read_records(color), read_records(motion_data), strict=True):
        lines += [images.to_json(), videos.to_json()]
    (folder / "data.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def warm_video_model(tiny_model_dir, mixed_data, tmp_path_factory) -> Path:
    """A format warm start on mixed image and video records, so GRPO rewards differ."""
    out = tmp_path_factory.mktemp("warm_video")
    return format_warm_start(tiny_model_dir, mixed_data, out, *VIDEO_OVERRIDES)


class MediaSpy:
    """Records each time the model encodes images or videos, and whether gradients were on
    (a training pass) or off (generation, old or reference log-probs)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel

        self.calls: list[tuple[str, bool]] = []
        for kind in ("image", "video"):
            original = getattr(Qwen2_5_VLModel, f"get_{kind}_features")
            monkeypatch.setattr(Qwen2_5_VLModel, f"get_{kind}_features", self._spy(kind, original))

    def _spy(self, kind: str, original):
        @functools.wraps(original)
        def encode(model, *args, **kwargs):
            self.calls.append((kind, torch.is_grad_enabled()))
            return original(model, *args, **kwargs)

        return encode

    def count(self, kind: str, training: bool) -> int:
        return self.calls.count((kind, training))


def test_two_grpo_steps_on_motion_videos_change_the_weights(
    warm_video_model, motion_data, tmp_path, monkeypatch
):
    spy = MediaSpy(monkeypatch)
    recipe = tiny_recipe(
        warm_video_model,
        motion_data,
        tmp_path / "run",
        "grpo.num_generations=4",
        "grpo.max_completion_length=16",
        "optim.per_device_train_batch_size=8",
        *VIDEO_OVERRIDES,
    )
    summary = train(recipe)
    assert summary["global_step"] == 2
    assert changed_tensors(weights(warm_video_model), weights(Path(summary["final_model"])))
    assert spy.count("video", training=False) >= 2, "generation did not see the videos"
    assert spy.count("video", training=True) == 2, "the loss passes did not see the videos"


def test_poise_trains_on_videos_with_its_probe_reading_them(
    warm_video_model, motion_data, tmp_path, monkeypatch
):
    """The probe's no-grad pass over each rollout batch encodes the rows' videos, as the loss
    pass does (its features are checked against the grouped pass in tests/test_poise.py)."""
    spy = MediaSpy(monkeypatch)
    out = tmp_path / "run"
    recipe = tiny_recipe(
        warm_video_model,
        motion_data,
        out,
        "grpo.num_generations=2",
        "grpo.baseline=poise",
        "grpo.scale_rewards=batch",
        "grpo.max_completion_length=16",
        "optim.per_device_train_batch_size=8",
        *VIDEO_OVERRIDES,
    )
    summary = train(recipe)
    assert summary["global_step"] == 2
    assert changed_tensors(weights(warm_video_model), weights(Path(summary["final_model"])))
    history = json.loads((out / "log_history.json").read_text())
    assert [entry["poise/extra_pass"] for entry in history if "poise/extra_pass" in entry] == [
        1.0,
        1.0,
    ]
    assert spy.count("video", training=True) == 2, "the loss passes did not see the videos"
    assert spy.count("video", training=False) >= 4, "generation and the probe's pass: 2 each"


def test_mixed_image_and_video_batches_train(warm_video_model, mixed_data, tmp_path, monkeypatch):
    spy = MediaSpy(monkeypatch)
    recipe = tiny_recipe(
        warm_video_model,
        mixed_data,
        tmp_path / "run",
        "grpo.num_generations=2",
        "grpo.max_completion_length=16",
        "optim.per_device_train_batch_size=8",
        "grpo.beta=0.04",
        *VIDEO_OVERRIDES,
    )
    summary = train(recipe)
    assert summary["global_step"] == 2
    # with a reference model (beta > 0) every pass of a mixed batch encodes both media
    for kind in ("image", "video"):
        assert spy.count(kind, training=True) == 2, kind
        assert spy.count(kind, training=False) >= 4, kind


def test_sft_warm_start_on_videos_sees_the_frames(
    tiny_model_dir, motion_data, tmp_path, monkeypatch
):
    spy = MediaSpy(monkeypatch)
    recipe = tiny_recipe(
        tiny_model_dir, motion_data, tmp_path / "sft", "stage=sft", "report_to=[]", *VIDEO_OVERRIDES
    )
    summary = train(recipe)
    assert changed_tensors(weights(tiny_model_dir), weights(Path(summary["final_model"])))
    assert spy.count("video", training=True) == 2
