"""Every path on every supported family: Qwen2-VL, Qwen2.5-VL and Qwen3-VL, each a tiny local
build with the family's own classes, processor, pixel grid and chat template.

The shared-prefix equality on each family is in `tests/test_shared_prefix.py`; here are the
registry, the builds, the token estimates, training (SFT, GRPO with and without the shared
prefix, video GRPO, resume), critique, best-of-n, evaluation under each protocol and the demo.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import torch
from PIL import Image

from mmcritic.cli import main
from mmcritic.data.media import PixelBudget, image_token_count
from mmcritic.data.synth import synthesize
from mmcritic.data.video import VideoBudget, load_video, probe_video, video_token_count
from mmcritic.eval.protocols import PROTOCOL_NAMES, PROTOCOLS
from mmcritic.eval.runner import samples_path
from mmcritic.inference.critic import Critic
from mmcritic.inference.media import Media
from mmcritic.inference.policy import Policy
from mmcritic.inference.self_critique import best_of_n
from mmcritic.models.families import FAMILIES, UnsupportedModelError, family_of_model
from mmcritic.models.loading import check_model, load_model, load_processor
from mmcritic.train.run import train
from tests.conftest import FAMILY_NAMES
from tests.media_factory import write_png
from tests.test_eval_fixtures import all_task_data
from tests.test_resume import GRPO, assert_learned_at_every_step, assert_same_run, resume_case
from tests.test_train import changed_tensors, format_warm_start, tiny_recipe, weights

# SHA-256 of the chat templates in the released checkpoints' tokenizer configs
# (Qwen/Qwen2.5-VL-7B-Instruct, which Qwen/Qwen2-VL-7B-Instruct ships byte for byte, and
# Qwen/Qwen3-VL-8B-Instruct).
RELEASED_TEMPLATES = {
    "qwen2.5-vl": "a0bc6f6fc7a29a80017a433e8f03a1cc1236e838a944a2d034295a60c4f2fddb",
    "qwen2-vl": "a0bc6f6fc7a29a80017a433e8f03a1cc1236e838a944a2d034295a60c4f2fddb",
    "qwen3-vl": "3636d0f0bd6bef02654cdffdc447b79cb2cef8ab02cc75267345946291a489e4",
}
RELEASED_CLASSES = {
    "qwen2-vl": ("Qwen2VLForConditionalGeneration", "Qwen2VLProcessor", 14),
    "qwen2.5-vl": ("Qwen2_5_VLForConditionalGeneration", "Qwen2_5_VLProcessor", 14),
    "qwen3-vl": ("Qwen3VLForConditionalGeneration", "Qwen3VLProcessor", 16),
}
IMAGE_SIZES = [(64, 64), (333, 97), (97, 333), (500, 420), (1000, 30)]
MAX_BYTES_ON_DISK = 10 * 1024 * 1024


@pytest.fixture(scope="module")
def motion_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("motion")
    synthesize("motion", 4, folder, seed=2, overwrite=True)
    return folder


@pytest.fixture(scope="module")
def warm_family(tiny_family, color_data, tmp_path_factory):
    """`warm_family(name)`: that family's tiny model after the format warm start (an SFT run),
    so GRPO rollouts earn different rewards."""
    warmed: dict[str, Path] = {}

    def warm(family: str) -> Path:
        if family not in warmed:
            out = tmp_path_factory.mktemp(f"warm_{family}")
            warmed[family] = format_warm_start(tiny_family(family), color_data, out)
        return warmed[family]

    return warm


def test_the_registry_lists_the_three_families_with_their_released_classes():
    assert sorted(FAMILIES) == sorted(FAMILY_NAMES)
    for name, (model_class, processor_class, patch) in RELEASED_CLASSES.items():
        family = FAMILIES[name]
        assert (family.model_class, family.processor_class, family.patch_size) == (
            model_class,
            processor_class,
            patch,
        )
        assert family.token_side == 2 * patch


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_each_family_ships_its_released_chat_template_the_one_trl_recognises(family):
    """TRL swaps in its training template (assistant-only loss) by comparing the tokenizer's
    template with the released ones it knows, byte for byte."""
    from trl import chat_template_utils

    template = FAMILIES[family].chat_template
    assert hashlib.sha256(template.encode()).hexdigest() == RELEASED_TEMPLATES[family]
    known = "qwen3_vl" if family == "qwen3-vl" else "qwen2_5_vl"
    assert template == getattr(chat_template_utils, f"{known}_chat_template")


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_tiny_build_reloads_through_the_loaders_with_the_family_classes(tiny_family, family):
    folder = tiny_family(family)
    model_class, processor_class, patch = RELEASED_CLASSES[family]
    model = load_model(str(folder), torch.float32)
    processor = load_processor(str(folder))
    assert type(model).__name__ == model_class
    assert type(processor).__name__ == processor_class
    assert processor.image_processor.patch_size == patch
    assert processor.video_processor.patch_size == patch
    assert family_of_model(str(folder)).name == family
    assert sum(path.stat().st_size for path in folder.iterdir()) < MAX_BYTES_ON_DISK


def test_cli_builds_a_tiny_model_of_the_family_asked_for(tmp_path, capsys):
    assert main(["--quiet", "tiny-model", str(tmp_path / "q3"), "--family", "qwen3-vl"]) == 0
    assert family_of_model(str(tmp_path / "q3")).name == "qwen3-vl"
    config = json.loads((tmp_path / "q3" / "config.json").read_text())
    assert config["vision_config"]["deepstack_visual_indexes"], "DeepStack is exercised"
    assert config["text_config"]["rope_parameters"]["mrope_interleaved"] is True


def test_a_model_of_another_family_is_refused_before_its_weights_load(tiny_model_dir, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(tiny_model_dir, other)
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "model_type": "llava"}))
    for load in (check_model, lambda path: load_model(path, torch.float32)):
        with pytest.raises(UnsupportedModelError) as refused:
            load(str(other))
        message = str(refused.value)
        assert "'llava'" in message
        assert all(name in message for name in FAMILY_NAMES)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_image_token_estimate_is_what_the_family_processor_spends(tiny_family, tmp_path, family):
    """Preprocess counts visual tokens from the image header on the family's grid; the real
    processor, given the image resized as training resizes it, spends exactly that many."""
    from mmcritic.train.examples import MediaLoader

    budget = FAMILIES[family].media_budget(_small_budget())
    processor = load_processor(str(tiny_family(family)), budget)
    loader = MediaLoader(budget)
    image_token = processor.image_token_id
    for width, height in IMAGE_SIZES:
        path = write_png(tmp_path / f"{width}x{height}.png", (width, height))
        image = loader({"images": [[str(path)]]})["images"][0]
        encoded = processor(text=[processor.image_token], images=image, return_tensors="pt")
        spent = int((encoded["input_ids"] == image_token).sum())
        estimate = image_token_count(width, height, budget.image, budget.patch_size)
        assert spent == estimate, (family, width, height)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_video_token_estimate_is_what_the_family_processor_spends(tiny_family, motion_data, family):
    from mmcritic.data.video import processor_video_kwargs

    processor = load_processor(str(tiny_family(family)))
    patch = FAMILIES[family].patch_size
    budget = VideoBudget(min_pixels=64 * 28 * 28, max_pixels=128 * 28 * 28, max_frames=8)
    for path in sorted((motion_data / "media").iterdir()):
        video = load_video(str(path), budget, patch)
        message = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "?"}]}]
        text = processor.apply_chat_template(message, add_generation_prompt=True, tokenize=False)
        encoded = processor(text=[text], return_tensors="pt", **processor_video_kwargs([video]))
        spent = int((encoded["input_ids"] == processor.video_token_id).sum())
        assert spent == video_token_count(probe_video(str(path)), budget, patch), (family, path)


def _small_budget():
    from mmcritic.data.media import MediaBudget

    return MediaBudget(PixelBudget(16 * 32 * 32, 96 * 32 * 32))


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("shared_prefix", [False, True], ids=["standard", "shared_prefix"])
def test_sft_then_grpo_train_every_family(warm_family, color_data, tmp_path, family, shared_prefix):
    """The warm start is an SFT run; GRPO from it moves the weights, through the grouped pass
    when the shared prefix is on (its token fraction is logged) and the standard one when off."""
    warm = warm_family(family)
    recipe = tiny_recipe(
        warm,
        color_data,
        tmp_path / "run",
        "grpo.num_generations=4",
        "grpo.max_completion_length=12",
        "optim.per_device_train_batch_size=8",
        f"grpo.shared_prefix={str(shared_prefix).lower()}",
        "report_to=[]",
    )
    summary = train(recipe)
    assert summary["global_step"] == 2
    assert changed_tensors(weights(warm), weights(Path(summary["final_model"])))
    logged = set().union(*json.loads((tmp_path / "run" / "log_history.json").read_text()))
    assert ("shared_prefix/token_fraction" in logged) == shared_prefix


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_video_sft_then_grpo_train_every_family(tiny_family, motion_data, tmp_path, family):
    """Video prompts (on Qwen3-VL, a timestamp before each frame pair) through SFT, rollouts
    and both GRPO passes, as the video quickstart runs them."""
    warm = format_warm_start(
        tiny_family(family),
        motion_data,
        tmp_path / "sft",
        "data.video.max_frames=4",
        "max_steps=16",
    )
    recipe = tiny_recipe(
        warm,
        motion_data,
        tmp_path / "run",
        "grpo.num_generations=4",
        "grpo.max_completion_length=12",
        "optim.per_device_train_batch_size=8",
        "data.video.max_frames=4",
        "report_to=[]",
    )
    summary = train(recipe)
    assert summary["global_step"] == 2
    assert changed_tensors(weights(warm), weights(Path(summary["final_model"])))


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_lora_grpo_trains_adapters_that_load_back_merged(warm_family, color_data, tmp_path, family):
    """The default LoRA targets (attention and MLP projections) exist in every family's language
    model; the saved adapter loads strictly onto its base and merges."""
    warm = warm_family(family)
    recipe = tiny_recipe(
        warm,
        color_data,
        tmp_path / "run",
        "model.lora.enabled=true",
        "model.lora.r=4",
        "grpo.num_generations=4",
        "grpo.max_completion_length=12",
        "optim.per_device_train_batch_size=8",
        "report_to=[]",
    )
    saved = Path(train(recipe)["final_model"])
    assert (saved / "adapter_model.safetensors").is_file()
    merged = load_model(str(saved), torch.float32).state_dict()
    base = load_model(str(warm), torch.float32).state_dict()
    moved = [name for name in base if not torch.equal(base[name], merged[name])]
    assert moved and all(name.endswith("proj.weight") for name in moved), moved


@pytest.mark.parametrize("family", ["qwen2-vl", "qwen3-vl"])
def test_resumed_grpo_run_matches_the_uninterrupted_run_on_other_families(
    warm_family, color_data, tmp_path, family
):
    """Qwen2.5-VL's resume is covered in `tests/test_resume.py`."""
    straight, stopped = resume_case(warm_family(family), color_data, tmp_path, GRPO, crash_at=2)
    assert_learned_at_every_step(straight)
    assert_same_run(straight, stopped)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_critique_and_best_of_n_run_on_every_family(tiny_family, motion_data, tmp_path, family):
    folder = str(tiny_family(family))
    model, processor = load_model(folder, torch.float32).eval(), load_processor(folder)
    critic = Critic(model, processor, max_new_tokens=6)
    policy = Policy(model, processor, max_new_tokens=6)
    image = Media.image(Image.new("RGB", (90, 60), "red"))
    video = Media.video(next((motion_data / "media").iterdir()), max_frames=4)

    judged = critic.compare([image, video], "What moves?", "A red dot.", "Nothing.", True)
    assert judged.both_orders and judged.raw and judged.swapped_raw
    answers = policy.answer(image, "What colour?", 3, 1.0, 0)
    chosen = best_of_n(critic, image, "What colour?", [a.text for a in answers], seed=0)
    assert chosen.chosen in range(3) and chosen.comparisons == 2
    patch = FAMILIES[family].patch_size
    assert all(side % (2 * patch) == 0 for side in image.load(patch).size)


@pytest.fixture(scope="module")
def eval_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return all_task_data(tmp_path_factory)


EVAL_TASKS = ["chartqa", "vl_rewardbench", "videomme", "mm_rlhf_rewardbench"]


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("protocol", PROTOCOL_NAMES)
def test_eval_answers_image_and_video_tasks_under_each_protocol(
    tiny_family, eval_data, tmp_path, family, protocol
):
    out = tmp_path / "eval"
    code = main(
        [
            "--quiet",
            "eval",
            f"--model={tiny_family(family)}",
            f"--tasks={','.join(EVAL_TASKS)}",
            f"--output={out}",
            f"--protocol={protocol}",
            "--max-new-tokens=4",
            "--batch-size=2",
            "--device=cpu",
            "--limit=1",
            *(f"--task-data={task}={eval_data[task]}" for task in EVAL_TASKS),
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    for task in EVAL_TASKS:
        [line] = samples_path(out, task).read_text().splitlines()
        assert "rejected" not in json.loads(line), (task, line)
        recorded = results["tasks"][task]["protocol"]
        assert recorded["model_family"] == family
        expected = PROTOCOLS[protocol].media_for(family).patch_size
        assert recorded["media"]["patch_size"] == expected


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_demo_compares_on_every_family(tiny_family, family):
    from mmcritic.demo.model import DemoModel

    demo = DemoModel.load(str(tiny_family(family)), device="cpu", max_new_tokens=6)
    outputs = list(
        demo.compare(Image.new("RGB", (80, 80), "blue"), "Colour?", "Blue.", "Red.", True)
    )
    assert outputs[-1].raw and outputs[-1].swapped_raw


@pytest.mark.parametrize(
    ("family", "patch", "max_pixels"),
    [("qwen2-vl", 14, 602_112), ("qwen2.5-vl", 14, 1_605_632), ("qwen3-vl", 16, 1_605_632)],
)
def test_lmms_eval_sizes_media_as_its_class_for_the_family_does(
    tiny_family, tmp_path, family, patch, max_pixels
):
    """lmms-eval's qwen2_vl, qwen2_5_vl and qwen3_vl classes size media each their own way; the
    eval run picks the budget from the model it opened."""
    from mmcritic.eval.runner import EvalOptions, _backend

    options = EvalOptions(
        str(tiny_family(family)), ("chartqa",), tmp_path, protocol="lmms-eval", device="cpu"
    )
    media = _backend(options).media
    assert (media.patch_size, media.image.max_pixels) == (patch, max_pixels)
    r1 = _backend(EvalOptions(str(tiny_family(family)), ("chartqa",), tmp_path, device="cpu"))
    assert r1.media.image.max_pixels == 1280 * 28 * 28


def test_a_served_qwen3_vl_answers_as_in_process_with_media_on_its_grid(
    tiny_family, motion_data, tmp_path
):
    """`transformers serve` runs the tiny Qwen3-VL; the served engine reads the family from the
    model's config here, sends images sized on the 32-pixel grid (the server's processor leaves
    them as they are) and greedy answers equal the in-process engine's."""
    from mmcritic.inference.engines import EngineOptions, Request, Sampling, open_engine
    from mmcritic_dev.local_server import start_server

    folder = tiny_family("qwen3-vl")
    server = start_server(folder, tmp_path / "serve.log")
    try:
        served = open_engine(EngineOptions("openai", str(folder), base_urls=(server.url,)))
        here = open_engine(EngineOptions("hf", str(folder), "cpu", "float32", batch_size=2))
        assert served.family.name == here.family.name == "qwen3-vl"
        picture = Media.image(Image.new("RGB", (150, 100), "green"))
        requests = [Request("What colour is it?", picture), Request("And now?", [picture])]
        sampling = Sampling(max_new_tokens=12)
        there = served.generate(requests, sampling)
        assert [
            [text.strip() for text in row] for row in here.generate(requests, sampling)
        ] == there
        assert all(side % 32 == 0 for side in picture.load(16).size)
    finally:
        server.kill()


def test_preprocess_counts_visual_tokens_on_the_family_grid(tmp_path, capsys):
    """`--family qwen3-vl`: a 4000x3000 image capped at the same 4.2 M pixels costs 4,015
    tokens of 32x32 pixels rather than 5,292 of 28x28, and the estimate says so."""
    image = write_png(tmp_path / "large.png", (4000, 3000))
    row = {
        "id": "a",
        "question": "What?",
        "chosen": "Red.",
        "rejected": "Blue.",
        "image": "large.png",
    }
    (tmp_path / "pairs.jsonl").write_text(json.dumps(row) + "\n")
    estimates = {}
    for family in ("qwen2.5-vl", "qwen3-vl"):
        out = tmp_path / family
        args = ["--quiet", "preprocess", "--format", "chosen-rejected", "--family", family]
        assert main([*args, "--input", str(tmp_path / "pairs.jsonl"), "--output", str(out)]) == 0
        capsys.readouterr()
        [record] = [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]
        estimates[family] = record["meta"]["prompt_tokens_est"]
    budget = PixelBudget()
    visual = {
        family: image_token_count(4000, 3000, budget, FAMILIES[family].patch_size)
        for family in estimates
    }
    assert image.is_file() and visual["qwen3-vl"] < 0.8 * visual["qwen2.5-vl"]
    text_tokens = estimates["qwen2.5-vl"] - visual["qwen2.5-vl"]
    assert estimates["qwen3-vl"] == text_tokens + visual["qwen3-vl"]
