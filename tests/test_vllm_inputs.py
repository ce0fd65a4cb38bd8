"""Prompts for vLLM: what vLLM's own processor for each model family (Qwen2-VL, Qwen2.5-VL,
Qwen3-VL) makes of them must be exactly what the trainer encoded, token for token, for images,
videos and mixed batches at the recipe's budget.

The processor tests need vLLM, which pins its own torch: `bash scripts/test_vllm.sh` runs them in
a separate environment; elsewhere they are skipped."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from PIL import Image
from trl import GRPOTrainer

from mmcritic.data.media import MediaBudget
from mmcritic.data.video import VideoBudget, load_video
from mmcritic.models.families import FAMILIES, Family
from mmcritic.models.loading import load_processor
from mmcritic.train.media_rollout import encode_prompts
from mmcritic.train.vllm_inputs import (
    MediaPromptLLM,
    MediaTokens,
    SameSizeServerImages,
    collapse_media_pads,
    vllm_prompt,
)
from tests.conftest import FAMILY_NAMES
from tests.media_factory import write_mp4

BUDGET = MediaBudget()  # the 7B recipe's: images in [262,144; 4,194,304] pixels
IMAGE, VIDEO, START, END = 7, 8, 2, 3
TOKENS = MediaTokens(IMAGE, VIDEO, START, END)


def test_each_run_of_pads_becomes_one_pad_per_item():
    ids = [1, 2, IMAGE, IMAGE, IMAGE, 3, 2, IMAGE, 3, 2, VIDEO, VIDEO, 3, 4]
    assert collapse_media_pads(ids, TOKENS) == [1, 2, IMAGE, 3, 2, IMAGE, 3, 2, VIDEO, 3, 4]


def test_a_qwen3_vl_video_with_frame_timestamps_becomes_one_placeholder():
    """Qwen3-VL writes `<t seconds>` and a wrapped run of pads per frame pair inside the video's
    own start and end tokens; vLLM expects the template's placeholder back."""
    seconds = [40, 41, 42]  # the tokens of "<0.5 seconds>"
    video = [START, *seconds, START, VIDEO, VIDEO, END, *seconds, START, VIDEO, VIDEO, END, END]
    ids = [1, START, IMAGE, IMAGE, END, 5, *video, 6, START, VIDEO, END]
    expected = [1, START, IMAGE, END, 5, START, VIDEO, END, 6, START, VIDEO, END]
    assert collapse_media_pads(ids, TOKENS) == expected


def test_a_prompt_whose_placeholders_do_not_match_its_media_is_refused():
    ids = [2, IMAGE, IMAGE, 3, 2, IMAGE, 3]
    with pytest.raises(ValueError, match="2 image placeholder"):
        vllm_prompt(ids, [Image.new("RGB", (28, 28))], [], TOKENS, {"shortest_edge": 1})


def test_a_text_prompt_goes_to_vllm_as_its_ids_alone():
    assert vllm_prompt([1, 2, 3], [], [], TOKENS, {}) == {"prompt_token_ids": [1, 2, 3]}


# -- vLLM's own processor -----------------------------------------------------------------


@pytest.fixture(scope="module", params=FAMILY_NAMES)
def family(request: pytest.FixtureRequest) -> Family:
    return FAMILIES[request.param]


@pytest.fixture(scope="module")
def budget(family: Family) -> MediaBudget:
    """The 7B recipe's budget on the family's pixel grid."""
    return family.media_budget(BUDGET)


@pytest.fixture(scope="module")
def processor(tiny_family, family: Family, budget: MediaBudget) -> Any:
    return load_processor(str(tiny_family(family.name)), budget)


@pytest.fixture(scope="module")
def vllm_processor(tiny_family, family: Family) -> Any:
    """vLLM's multimodal processor for the family's tiny checkpoint: the step of `LLM.generate`
    that turns a prompt dict into the token ids and media inputs the engine runs."""
    pytest.importorskip("vllm", reason="vLLM is not installed here: bash scripts/test_vllm.sh")
    from vllm.config import ModelConfig
    from vllm.multimodal import MULTIMODAL_REGISTRY

    folder = str(tiny_family(family.name))
    return MULTIMODAL_REGISTRY.create_processor(ModelConfig(model=folder, tokenizer=folder))


def vllm_expand(vllm_processor: Any, prompt: dict[str, Any]) -> dict[str, Any]:
    """What vLLM makes of a prompt dict, as its renderer does (`_process_multimodal`)."""
    from vllm.multimodal.parse import parse_mm_uuids
    from vllm.multimodal.processing.context import TimingContext
    from vllm.multimodal.processing.inputs import ProcessorInputs

    if "multi_modal_data" not in prompt:
        return {"prompt_token_ids": prompt["prompt_token_ids"], "mm_kwargs": {}}
    inputs = ProcessorInputs(
        prompt["prompt_token_ids"],
        vllm_processor.info.parse_mm_data(prompt["multi_modal_data"]),
        parse_mm_uuids(prompt.get("multi_modal_uuids")),
        hf_processor_mm_kwargs=prompt.get("mm_processor_kwargs") or {},
    )
    return vllm_processor.apply(inputs, TimingContext())


class ProcessingLLM:
    """Stands in for the engine behind `LLM.generate`, which needs a GPU: it runs vLLM's own
    processor on each prompt and answers with what the engine would be given."""

    def __init__(self, vllm_processor: Any):
        self.vllm_processor = vllm_processor

    def generate(self, prompts: list[dict[str, Any]], **_: Any) -> list[dict[str, Any]]:
        return [vllm_expand(self.vllm_processor, prompt) for prompt in prompts]


def budget_image(
    budget: MediaBudget, size: tuple[int, int], color: tuple[int, int, int]
) -> Image.Image:
    """An image resized into the run's budget as the training data loader resizes it."""
    from qwen_vl_utils import fetch_image

    pixels = budget.image
    image = Image.new("RGB", size, color)
    return fetch_image(
        {"image": image, "min_pixels": pixels.min_pixels, "max_pixels": pixels.max_pixels},
        image_patch_size=budget.patch_size,
    )


@pytest.fixture(scope="module")
def videos(budget: MediaBudget, tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """Two clips loaded at the recipe's video budget, sampled at different rates, so each
    video's own timing must reach vLLM."""
    from qwen_vl_utils import vision_process

    folder = tmp_path_factory.mktemp("clips")
    with pytest.MonkeyPatch.context() as patch:
        # torchcodec, which vLLM installs, crashes on a CPU machine: read with decord
        patch.setattr(vision_process, "FORCE_QWENVL_VIDEO_READER", "decord")
        vision_process.get_video_reader_backend.cache_clear()
        clips = [
            load_video(
                str(write_mp4(folder / "a.mp4", (320, 240), 24, 8)), budget.video, budget.patch_size
            ),
            load_video(
                str(write_mp4(folder / "b.mp4", (160, 120), 30, 10)),
                VideoBudget(fps=1.0),
                budget.patch_size,
            ),
        ]
    vision_process.get_video_reader_backend.cache_clear()
    assert clips[0].sample_fps != clips[1].sample_fps
    return clips


def message(images: int, videos: int) -> list[dict[str, Any]]:
    content = [{"type": "image"}] * images + [{"type": "video"}] * videos
    return [{"role": "user", "content": [*content, {"type": "text", "text": "Which is better?"}]}]


def trainer_encoding(processor: Any, rows: list[tuple[list, list]]) -> Any:
    """The trainer's expanded prompt ids and media for rows of (images, videos)."""
    prompts = [message(len(images), len(videos)) for images, videos in rows]
    return encode_prompts(processor, prompts, *map(list, zip(*rows, strict=True)))


def ours(
    processor: Any, family: Family, prompt_ids: list[int], images: list, videos: list
) -> dict[str, Any]:
    size = processor.image_processor.size
    return vllm_prompt(prompt_ids, images, videos, MediaTokens.of(processor), size, family)


def assert_same_as_trainer(expanded: dict[str, Any], prompt_ids: list[int], media: Any) -> None:
    assert expanded["prompt_token_ids"] == prompt_ids
    for modality in ("image", "video"):
        items = expanded["mm_kwargs"].get(modality, [])
        grids = getattr(media, f"{modality}_grid_thw")
        assert [item[f"{modality}_grid_thw"].data.tolist() for item in items] == (
            grids.tolist() if grids is not None else []
        )
    if media.second_per_grid_ts is not None:
        seconds = [item["second_per_grid_ts"].data for item in expanded["mm_kwargs"]["video"]]
        assert torch.stack(seconds).tolist() == media.second_per_grid_ts.to(torch.bfloat16).tolist()


def test_trl_own_image_prompt_doubles_the_pads_in_vllm(processor, vllm_processor, budget):
    """TRL 1.16's input for an image row: expanded ids plus the image. vLLM expands again."""
    image = budget_image(budget, (640, 480), (200, 30, 30))
    encoded = trainer_encoding(processor, [([image], [])])
    prompt_ids = encoded.prompt_ids[0]
    trl_prompt = {"prompt_token_ids": prompt_ids, "multi_modal_data": {"image": image}}
    expanded = vllm_expand(vllm_processor, trl_prompt)["prompt_token_ids"]
    pad = processor.image_token_id
    assert expanded != prompt_ids
    assert expanded.count(pad) > prompt_ids.count(pad) > 100


def test_an_image_prompt_expands_in_vllm_to_the_trainer_ids(
    processor, vllm_processor, budget, family
):
    image = budget_image(budget, (640, 480), (200, 30, 30))
    encoded = trainer_encoding(processor, [([image], [])])
    prompt = ours(processor, family, encoded.prompt_ids[0], [image], [])
    assert len(prompt["prompt_token_ids"]) < len(encoded.prompt_ids[0]) - 100
    assert_same_as_trainer(
        vllm_expand(vllm_processor, prompt), encoded.prompt_ids[0], encoded.rows[0]
    )


def test_the_image_budget_reaches_vllm(processor, vllm_processor, budget, family):
    """Without the run's budget vLLM sizes the image by the checkpoint's own (small here)."""
    image = budget_image(budget, (640, 480), (200, 30, 30))
    encoded = trainer_encoding(processor, [([image], [])])
    prompt = ours(processor, family, encoded.prompt_ids[0], [image], [])
    del prompt["mm_processor_kwargs"]
    expanded = vllm_expand(vllm_processor, prompt)["prompt_token_ids"]
    pad = processor.image_token_id
    assert expanded.count(pad) < encoded.prompt_ids[0].count(pad)


def test_a_video_prompt_expands_in_vllm_to_the_trainer_ids_and_timing(
    processor, vllm_processor, videos, family
):
    encoded = trainer_encoding(processor, [([], videos)])
    if not family.vllm_video:
        with pytest.raises(ValueError, match="vllm#46817"):
            ours(processor, family, encoded.prompt_ids[0], [], videos)
        return
    prompt = ours(processor, family, encoded.prompt_ids[0], [], videos)
    assert_same_as_trainer(
        vllm_expand(vllm_processor, prompt), encoded.prompt_ids[0], encoded.rows[0]
    )


def test_a_mixed_batch_reaches_vllm_with_each_row_media(
    processor, vllm_processor, videos, budget, family
):
    """A batch holding a video: the trainer hands every row's media to the adapter TRL calls."""
    red, blue = (
        budget_image(budget, (640, 480), (200, 30, 30)),
        budget_image(budget, (300, 500), (30, 30, 200)),
    )
    rows = [([red], [videos[0]]), ([blue, red], []), ([], []), ([], videos)]
    encoded = trainer_encoding(processor, rows)
    llm = MediaPromptLLM(
        ProcessingLLM(vllm_processor),
        MediaTokens.of(processor),
        processor.image_processor.size,
        family,
    )
    trl_prompts = [{"prompt_token_ids": ids} for ids in encoded.prompt_ids]
    with llm.media(*map(list, zip(*rows, strict=True))):
        if not family.vllm_video:
            with pytest.raises(ValueError, match="vllm#46817"):
                llm.generate(trl_prompts)
            return
        expanded = llm.generate(trl_prompts)
    for row, prompt_ids, media in zip(expanded, encoded.prompt_ids, encoded.rows, strict=True):
        assert_same_as_trainer(row, prompt_ids, media)


def test_an_image_batch_reaches_vllm_with_the_images_trl_gives(
    processor, vllm_processor, budget, family
):
    """A batch without video: the images come from the prompt dicts TRL builds."""
    red, blue = (
        budget_image(budget, (640, 480), (200, 30, 30)),
        budget_image(budget, (300, 500), (30, 30, 200)),
    )
    rows = [([red], []), ([blue, red], [])]
    encoded = trainer_encoding(processor, rows)
    llm = MediaPromptLLM(
        ProcessingLLM(vllm_processor),
        MediaTokens.of(processor),
        processor.image_processor.size,
        family,
    )
    trl_prompts = [
        {"prompt_token_ids": encoded.prompt_ids[0], "multi_modal_data": {"image": red}},
        {"prompt_token_ids": encoded.prompt_ids[1], "multi_modal_data": {"image": [blue, red]}},
    ]
    expanded = llm.generate(trl_prompts)
    for row, prompt_ids, media in zip(expanded, encoded.prompt_ids, encoded.rows, strict=True):
        assert_same_as_trainer(row, prompt_ids, media)


def test_the_vllm_engine_asks_what_the_hf_engine_encodes(
    processor, vllm_processor, family, budget, tmp_path
):
    """Inference through `--engine vllm`: chat text with one placeholder per item, which vLLM
    expands into the ids and grids the hf engine's processor call gives."""
    from vllm import SamplingParams

    from mmcritic.inference import Media
    from mmcritic.inference.engines import Request, Sampling
    from mmcritic.inference.engines.vllm import VLLMEngine
    from mmcritic.models.generation import encode_batch

    pixels = budget.image
    red = Media.image(
        Image.new("RGB", (640, 480), (200, 30, 30)), pixels.min_pixels, pixels.max_pixels
    )
    clip = Media.video(write_mp4(tmp_path / "c.mp4", (320, 240), 24, 8), budget=budget.video)
    engine = VLLMEngine(None, processor, family)
    patch = family.patch_size
    with_video = Request("Which?", [red, clip])
    if not family.vllm_video:
        with pytest.raises(ValueError, match="vllm#46817"):
            engine.prompt(with_video)
    for request in (Request("Which?", red), with_video, Request("Hi", None)):
        if request is with_video and not family.vllm_video:
            continue
        images, videos = [request.loaded("image", patch)], [request.loaded("video", patch)]
        expected = encode_batch(processor, [request.message()], images, videos)
        prompt = engine.prompt(request)
        ids = processor.tokenizer(prompt.pop("prompt"))["input_ids"]
        expanded = vllm_expand(vllm_processor, {"prompt_token_ids": ids, **prompt})
        assert expanded["prompt_token_ids"] == expected["input_ids"][0].tolist()
    params = engine.sampling_params(Sampling(16, n=2, temperature=0.7, stop=("</answer>",)))
    assert isinstance(params, SamplingParams) and params.n == 2 and params.top_k in (0, -1)
    assert {processor.image_token_id, processor.video_token_id} <= set(params.logit_bias)


def test_a_server_that_sized_the_images_otherwise_is_refused():
    from trl.generation.vllm_generation import VLLMGeneration

    placer = SimpleNamespace(processing_class=SimpleNamespace(image_token_id=7))
    place = VLLMGeneration._place_features.__get__(placer)
    checked = SameSizeServerImages(place, {"shortest_edge": 3136, "longest_edge": 12544})
    prompt = [1, 2, 7, 7, 7, 7, 3, 2, 7, 7, 3]  # two images: 4 and 2 tokens
    served = {
        "mm_placeholders": {"image": [{"offset": 5, "length": 4}, {"offset": 15, "length": 2}]}
    }
    placed = checked(served, prompt)
    assert placed["mm_placeholders"]["image"] == [
        {"offset": 2, "length": 4},
        {"offset": 8, "length": 2},
    ]
    larger = {
        "mm_placeholders": {"image": [{"offset": 5, "length": 16}, {"offset": 30, "length": 2}]}
    }
    with pytest.raises(ValueError, match=r"--mm-processor-kwargs .*longest_edge.: 12544"):
        checked(larger, prompt)
    assert checked(None, prompt) is None


# -- the trainer's hook -------------------------------------------------------------------


@pytest.fixture(scope="module")
def video_trainer(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A CriticGRPOTrainer on video records, built without vLLM (which needs a GPU); the tests
    switch it to vLLM afterwards, as TRL's constructor leaves it."""
    from mmcritic.data.dataset import read_records
    from mmcritic.data.synth import synthesize
    from mmcritic.train.examples import to_dataset
    from mmcritic.train.run import make_trainer
    from tests.test_train import tiny_recipe

    data = tmp_path_factory.mktemp("motion")
    synthesize("motion", 4, data, seed=0, overwrite=True)
    recipe = tiny_recipe(tiny_model_dir, data, tmp_path_factory.mktemp("run"))
    processor = load_processor(str(tiny_model_dir), recipe.data.media_budget)
    dataset = to_dataset(read_records(data), recipe.data.media_budget)
    return make_trainer(recipe, processor, dataset)


class Engine:
    """The part of vLLM's `LLM` the adapter reaches: prompts in, prompts back."""

    def generate(self, prompts: list[dict[str, Any]], **_: Any) -> list[dict[str, Any]]:
        return prompts


def test_a_vllm_server_refuses_videos_naming_the_setting(video_trainer, monkeypatch):
    monkeypatch.setattr(video_trainer, "use_vllm", True, raising=False)
    monkeypatch.setattr(video_trainer, "vllm_mode", "server", raising=False)
    with pytest.raises(ValueError, match=r"grpo\.vllm_mode: colocate"):
        video_trainer._send_media_to_vllm()


def test_colocated_vllm_refuses_qwen3_vl_videos_before_the_first_step(
    tiny_family, tmp_path, monkeypatch
):
    from types import SimpleNamespace

    from mmcritic.data.dataset import read_records
    from mmcritic.data.synth import synthesize
    from mmcritic.train.examples import to_dataset
    from mmcritic.train.run import make_trainer
    from tests.test_train import tiny_recipe

    model = tiny_family("qwen3-vl")
    synthesize("motion", 2, tmp_path / "motion", seed=0, overwrite=True)
    recipe = tiny_recipe(model, tmp_path / "motion", tmp_path / "run")
    budget = FAMILIES["qwen3-vl"].media_budget(recipe.data.media_budget)
    dataset = to_dataset(read_records(tmp_path / "motion"), budget)
    trainer = make_trainer(recipe, load_processor(str(model), budget), dataset)
    generation = SimpleNamespace(llm=Engine(), tensor_parallel_size=1)
    monkeypatch.setattr(trainer, "use_vllm", True, raising=False)
    monkeypatch.setattr(trainer, "vllm_mode", "colocate", raising=False)
    monkeypatch.setattr(trainer, "vllm_generation", generation, raising=False)
    with pytest.raises(ValueError, match=r"qwen3-vl video prompts.*grpo\.use_vllm: false"):
        trainer._send_media_to_vllm()


def test_colocated_vllm_is_wrapped_and_gets_each_video_row_media(video_trainer, monkeypatch):
    from types import SimpleNamespace

    generation = SimpleNamespace(llm=Engine(), tensor_parallel_size=1)
    monkeypatch.setattr(video_trainer, "use_vllm", True, raising=False)
    monkeypatch.setattr(video_trainer, "vllm_mode", "colocate", raising=False)
    monkeypatch.setattr(video_trainer, "vllm_generation", generation, raising=False)
    video_trainer._send_media_to_vllm()
    assert isinstance(generation.llm, MediaPromptLLM)

    tokens = MediaTokens.of(video_trainer.processing_class)
    clip = SimpleNamespace(frames=torch.zeros(2, 3, 28, 28), metadata={"fps": 2.0})
    sent = []

    def generate(trainer, prompt_ids, images, multimodal_fields, num_generations, **_):
        sent.extend(generation.llm.generate([{"prompt_token_ids": ids} for ids in prompt_ids]))
        return [], []

    monkeypatch.setattr(GRPOTrainer, "_generate_single_turn", generate)
    video_trainer._pending_media = ([[]], [[clip]])
    try:
        video_trainer._generate_single_turn([[1, tokens.video, tokens.video, 2]], None, {}, 1)
    finally:
        video_trainer._pending_media = None
    assert sent[0]["prompt_token_ids"] == [1, tokens.video, 2]
    assert sent[0]["multi_modal_data"]["video"][0][0] is clip.frames
