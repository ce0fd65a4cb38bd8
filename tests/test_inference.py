"""Critic, policy, self-critique and their commands end to end on the tiny random model.

The tiny model writes gibberish, so these tests check that every path runs on real inputs
(images and videos through qwen-vl-utils and the real processor) and reports what it could not
read, not that the judgements are good.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from mmcritic.cli import main
from mmcritic.data.synth import write_motion_video
from mmcritic.data.video import LoadedVideo
from mmcritic.inference import (
    Answer,
    Comparison,
    Critic,
    Media,
    Policy,
    Score,
    best_of_n,
    load_model_for_inference,
)
from mmcritic.inference.engines import Request, Sampling
from mmcritic.inference.engines.hf import HFEngine
from mmcritic.inference.engines.vllm import VLLMEngine
from mmcritic.models.generation import generate
from mmcritic.rewards import REASONS
from tests.media_factory import write_png

# Small budgets keep the tiny model's prompts short: 16 to 64 visual tokens an image or frame.
BUDGET = {"min_pixels": 16 * 28 * 28, "max_pixels": 64 * 28 * 28}
BUDGET_FLAGS = [
    "--min-pixels",
    str(BUDGET["min_pixels"]),
    "--max-pixels",
    str(BUDGET["max_pixels"]),
]
PAIR = ("What colour is the square?", "It is red.", "It is blue.")


def write_frames(folder: Path, count: int, size: tuple[int, int] = (64, 48)) -> Path:
    """PNG frames of a bright square moving right, named frame_1.png .. frame_<count>.png."""
    width, height = size
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(1, count + 1):
        frame = Image.new("RGB", size, (30, 30, 30))
        left = index * (width - 8) // count
        frame.paste((240, 240, 240), (left, height // 3, left + 8, height // 3 + 8))
        frame.save(folder / f"frame_{index}.png")
    return folder


@pytest.fixture(scope="module")
def media_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inference_media")
    video = folder / "motion.mp4"
    write_motion_video(video, "left", random.Random(0))
    return {
        "image": write_png(folder / "red.png", (96, 72)),
        "blue": write_png(folder / "blue.png", (72, 96), color=(30, 30, 200)),
        "video": video,
        "frames": write_frames(folder / "frames", 11),
    }


@pytest.fixture(scope="module")
def image(media_files) -> Media:
    return Media.image(media_files["image"], **BUDGET)


@pytest.fixture(scope="module")
def video(media_files) -> Media:
    return Media.video(media_files["video"], fps=2.0, max_frames=4, **BUDGET)


@pytest.fixture(scope="module")
def frames(media_files) -> Media:
    return Media.frames(media_files["frames"], max_frames=4, **BUDGET)


@pytest.fixture(scope="module")
def two_images(media_files, image) -> list[Media]:
    return [image, Media.image(media_files["blue"], **BUDGET)]


@pytest.fixture(scope="module")
def critic(tiny_model_and_processor) -> Critic:
    return Critic(*tiny_model_and_processor, max_new_tokens=12)


@pytest.fixture(scope="module")
def policy(tiny_model_and_processor) -> Policy:
    return Policy(*tiny_model_and_processor, max_new_tokens=12)


def assert_reported(comparison: Comparison) -> None:
    assert comparison.verdict in ("1", "2", "tie", None)
    assert comparison.reason in REASONS
    assert (comparison.verdict is None) == (comparison.reason != "ok")
    assert isinstance(comparison.raw, str) and isinstance(comparison.rationale, str)


@pytest.mark.parametrize("kind", ["image", "video"])
def test_compare_judges_both_orders_for_images_and_videos(critic, kind, request):
    media = request.getfixturevalue(kind)
    judged = critic.compare(media, *PAIR, both_orders=True)
    assert_reported(judged)
    assert judged.both_orders and judged.swapped_raw is not None
    assert judged.swapped_reason in REASONS


def test_compare_many_returns_one_comparison_per_item_in_order(critic, image, video):
    items = [(image, *PAIR), (video, *PAIR), (image, PAIR[0], PAIR[2], PAIR[1])]
    judged = critic.compare_many(items)
    assert len(judged) == 3 and not any(c.both_orders for c in judged)
    for comparison in judged:
        assert_reported(comparison)


def test_score_reports_a_number_or_the_reason_there_is_none(critic, image, video):
    for scored in critic.score_many([(image, PAIR[0], PAIR[1]), (video, PAIR[0], PAIR[2])]):
        assert isinstance(scored, Score)
        assert (scored.score is None) == (scored.reason != "ok")


def test_policy_samples_n_answers_reproducibly_under_a_seed(policy, image):
    first = policy.answer(image, PAIR[0], n=3, temperature=1.0, seed=7)
    again = policy.answer(image, PAIR[0], n=3, temperature=1.0, seed=7)
    assert len(first) == 3 and all(isinstance(answer, Answer) for answer in first)
    assert first == again
    assert len({answer.text for answer in first}) > 1


def test_policy_answers_many_questions_about_images_and_videos(policy, image, video):
    answers = policy.answer_many(
        [(image, PAIR[0]), (video, "Where does the dot go?")], n=2, temperature=1.0
    )
    assert [len(samples) for samples in answers] == [2, 2]


def test_critic_and_policy_take_several_images_and_a_frame_video_in_one_question(
    critic, policy, two_images, frames
):
    shown = [*two_images, frames]
    assert_reported(critic.compare(shown, *PAIR, both_orders=True))
    assert isinstance(critic.score(two_images, PAIR[0], PAIR[1]), Score)
    answers = policy.answer_many([(shown, PAIR[0]), (frames, "Where does the square go?")])
    assert [len(samples) for samples in answers] == [1, 1]
    result = best_of_n(critic, two_images, PAIR[0], ["<think>a</think> \\boxed{red}"] * 3)
    assert result.comparisons == 2


def test_a_batch_gives_each_prompt_its_placeholders_and_the_processor_every_item_in_order(
    monkeypatch, two_images, frames, video
):
    seen = {}

    def spy(model, processor, prompts, images, **kwargs):
        seen.update(prompts=prompts, images=images, videos=kwargs["videos"])
        return [["done"] for _ in prompts]

    monkeypatch.setattr("mmcritic.inference.engines.hf.generate", spy)
    requests = [
        Request("Q1", [*two_images, frames, video]),
        Request("Q2", two_images[1]),
        Request("Q3", None),
    ]
    qwen2_5_vl = SimpleNamespace(config=SimpleNamespace(model_type="qwen2_5_vl"))
    HFEngine(qwen2_5_vl, None).generate(requests, Sampling())

    parts = [[part["type"] for part in prompt[0]["content"]] for prompt in seen["prompts"]]
    assert parts == [["image", "image", "video", "video", "text"], ["image", "text"], ["text"]]
    shown = [[id(item) for item in row] for row in (*seen["images"], *seen["videos"])]
    images = [id(media.load()) for media in two_images]
    videos = [id(frames.load()), id(video.load())]
    assert shown == [images, images[1:], [], videos, [], []]


def test_vllm_prompts_carry_every_item_with_the_processor_settings(two_images, frames):
    class Processor:
        image_processor = SimpleNamespace(size={"shortest_edge": 3136, "longest_edge": 1003520})

        def apply_chat_template(self, messages, **kwargs):
            return str([part["type"] for part in messages[0]["content"]])

    engine = VLLMEngine(None, Processor())
    several = engine.prompt(Request("Q", [*two_images, frames]))
    one = engine.prompt(Request("Q", two_images[0]))

    assert several["prompt"] == "['image', 'image', 'video', 'text']"
    assert several["multi_modal_data"]["image"] == [media.load() for media in two_images]
    [(shown, metadata)] = several["multi_modal_data"]["video"]
    assert shown is frames.load().frames and metadata == frames.load().metadata
    kwargs = several["mm_processor_kwargs"]
    assert kwargs["images_kwargs"]["size"] == Processor.image_processor.size
    assert kwargs["videos_kwargs"]["video_metadata"] == [frames.load().metadata]
    assert one["multi_modal_data"] == {"image": [two_images[0].load()]}
    assert engine.prompt(Request("Q", None)) == {"prompt": "['text']"}


def test_media_must_be_media_objects(image):
    with pytest.raises(TypeError, match=r"Media\.image"):
        Request("Q", [image, "cat.png"]).message()


def test_a_folder_of_frames_becomes_a_video_under_the_frame_cap_and_pixel_budget(frames):
    loaded = frames.load()
    assert isinstance(loaded, LoadedVideo)
    count, _, height, width = loaded.frames.shape
    assert count == 4 and height * width <= BUDGET["max_pixels"]
    assert loaded.metadata == {"fps": 2.0, "frames_indices": [0, 3, 7, 10], "total_num_frames": 11}
    assert loaded.sample_fps == pytest.approx(4 / 11 * 2.0)
    assert frames.describe()["frames"] == 11


def test_frames_in_a_folder_play_in_natural_name_order(media_files):
    names = [Path(path).name for path in Media.frames(media_files["frames"]).source]
    assert names == [f"frame_{index}.png" for index in range(1, 12)]


def test_frames_given_as_a_list_keep_their_order_and_rate(media_files):
    paths = sorted(media_files["frames"].glob("*.png"), reverse=True)
    media = Media.frames(paths, fps=4.0, **BUDGET)
    loaded = media.load()
    assert media.source == tuple(str(path.resolve()) for path in paths)
    assert loaded.metadata["fps"] == 4.0
    assert loaded.sample_fps == pytest.approx(len(loaded.metadata["frames_indices"]) / 11 * 4.0)


def test_frames_of_different_sizes_are_refused_when_loaded(tmp_path):
    write_png(tmp_path / "a.png", (64, 48))
    write_png(tmp_path / "b.png", (48, 64))
    media = Media.frames(tmp_path)
    with pytest.raises(ValueError, match="differ in size"):
        media.load()


def test_a_frame_folder_without_images_fails_when_the_media_is_made(tmp_path):
    (tmp_path / "notes.txt").write_text("no frames here")
    with pytest.raises(ValueError, match="no frame images"):
        Media.frames(tmp_path)
    with pytest.raises(FileNotFoundError, match="frame folder not found"):
        Media.frames(tmp_path / "absent")


def test_policy_refuses_several_greedy_answers(policy, image):
    with pytest.raises(ValueError, match="temperature > 0"):
        policy.answer(image, PAIR[0], n=4)


@pytest.mark.parametrize(
    ("strategy", "comparisons"),
    [("knockout", 4), ("round_robin", 6), ("pointwise", 3), ("majority", 0)],
)
def test_every_strategy_runs_with_the_tiny_model_as_critic(
    critic, policy, video, strategy, comparisons
):
    candidates = [a.text for a in policy.answer(video, "Where?", n=3, temperature=1.0)]
    result = best_of_n(critic, video, "Where?", candidates, strategy, both_orders=True)
    assert result.comparisons == comparisons and 0 <= result.chosen < 3
    json.dumps(result.to_dict(raw=True))


def test_video_media_is_sampled_within_the_frame_cap_and_pixel_budget(video):
    loaded = video.load()
    assert isinstance(loaded, LoadedVideo)
    frames, _, height, width = loaded.frames.shape
    assert 2 <= frames <= 4 and frames % 2 == 0
    assert height * width <= BUDGET["max_pixels"] and loaded.sample_fps > 0
    assert video.load() is loaded


def test_generate_still_serves_image_only_callers(tiny_model_and_processor, image):
    prompt = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Hi"}]}]
    outputs = generate(*tiny_model_and_processor, [prompt], [[image.load()]], max_new_tokens=4)
    assert len(outputs) == 1 and isinstance(outputs[0][0], str)


def test_missing_media_files_fail_when_the_media_is_made(tmp_path):
    with pytest.raises(FileNotFoundError, match="video file not found"):
        Media.video(tmp_path / "absent.mp4")


def test_pil_images_are_accepted_as_media():
    media = Media.image(Image.new("RGB", (40, 30), (0, 200, 0)), **BUDGET)
    assert media.load().size[0] % 28 == 0


def test_vllm_engine_says_how_to_install_it(tiny_model_dir):
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"pip install \"mmcritic\[vllm\]\""):
            load_model_for_inference(str(tiny_model_dir), engine="vllm")
    else:
        pytest.skip("vllm is installed; the missing-dependency message cannot be seen")


def run_command(capsys: pytest.CaptureFixture, model: Path, command: str, *flags: str) -> dict:
    """Runs `mmcritic COMMAND --model MODEL FLAGS` in process and parses its JSON output."""
    argv = ["--quiet", command, "--model", str(model), "--max-new-tokens", "8", *BUDGET_FLAGS]
    assert main([*argv, *flags]) == 0
    return json.loads(capsys.readouterr().out)


def test_critique_command_prints_a_pairwise_verdict_for_a_video(
    tiny_model_dir, media_files, capsys
):
    video, (question, a, b) = str(media_files["video"]), PAIR
    pair = ["--response-a", a, "--response-b", b, "--both-orders"]
    flags = ["--video", video, "--max-frames", "4", "--question", question, *pair]
    output = run_command(capsys, tiny_model_dir, "critique", *flags)
    assert output["mode"] == "pairwise" and output["media"]["kind"] == "video"
    assert {"verdict", "swapped_verdict", "agreement", "decision", "raw"} <= output.keys()


def test_critique_command_scores_a_single_response(tiny_model_dir, media_files, capsys):
    flags = ["--image", str(media_files["image"]), "--question", PAIR[0], "--response", PAIR[1]]
    output = run_command(capsys, tiny_model_dir, "critique", *flags)
    assert output["mode"] == "pointwise" and "score" in output


def test_critique_command_rejects_half_a_pair(tiny_model_dir, media_files):
    argv = ["critique", "--model", str(tiny_model_dir), "--image", str(media_files["image"])]
    assert main([*argv, "--question", "Q", "--response-a", "only one"]) == 2


@pytest.mark.parametrize(
    ("flags", "comparisons"),
    [(["--strategy", "knockout", "--both-orders"], 6), (["--strategy", "round_robin"], 6)],
)
def test_best_of_n_command_prints_the_choice_and_its_bracket(
    tiny_model_dir, media_files, capsys, flags, comparisons
):
    question = ["--image", str(media_files["image"]), "--question", PAIR[0]]
    sampling = ["--n", "4", "--temperature", "0.8", "--seed", "3"]
    output = run_command(capsys, tiny_model_dir, "best-of-n", *question, *sampling, *flags)
    assert {"chosen", "answer", "candidates", "comparisons", "rounds"} <= output.keys()
    assert len(output["candidates"]) == 4 and 0 <= output["chosen"] < 4
    assert output["comparisons"] == comparisons


def test_self_critique_cost_counts_comparisons_and_times_one_by_one_knockout(
    tiny_model_and_processor, image
):
    from mmcritic_dev.self_critique_cost import cost_table, self_critique_cost

    rows = self_critique_cost(
        *tiny_model_and_processor, image, "Q", sizes=(3,), max_new_tokens=2, batch_size=4
    )
    assert [(r.strategy, r.comparisons, r.rounds) for r in rows] == [
        ("knockout", 2, 2),
        ("round_robin", 3, 1),
        ("pointwise", 3, 1),
    ]
    assert rows[0].speedup is not None and rows[1].speedup is None
    assert "speed-up" in cost_table(rows)
