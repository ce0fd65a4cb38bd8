"""Recipe schema: every shipped recipe loads, typos name the nearest key, overrides apply."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mmcritic.train.config import RecipeError, load_recipe

ROOT = Path(__file__).parents[1] / "recipes"
ACCELERATE = ROOT / "accelerate"
# every YAML under recipes/, whatever the folder: a training recipe unless it is an accelerate
# launcher config
ALL_YAML = sorted(ROOT.rglob("*.yaml"))
ACCELERATE_CONFIGS = [path for path in ALL_YAML if ACCELERATE in path.parents]
RECIPES = [path for path in ALL_YAML if ACCELERATE not in path.parents]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return path


MINIMAL = "output_dir: runs/x\nmax_steps: 3\nmodel: {name_or_path: m}\ndata: {train: d}\n"


def test_every_yaml_under_recipes_is_checked():
    assert len(RECIPES) >= 5 and len(ACCELERATE_CONFIGS) >= 5
    assert len(RECIPES) + len(ACCELERATE_CONFIGS) == len(ALL_YAML)


@pytest.mark.parametrize("recipe", RECIPES, ids=[str(p.relative_to(ROOT)) for p in RECIPES])
def test_every_shipped_recipe_loads_and_has_a_launch_line(recipe):
    loaded = load_recipe(recipe)
    assert loaded.output_dir and loaded.max_steps > 0
    header = [line for line in recipe.read_text().splitlines() if line.startswith("#")]
    assert any(f"train {recipe.relative_to(ROOT.parent)}" in line for line in header)


@pytest.mark.parametrize("config", ACCELERATE_CONFIGS, ids=[p.name for p in ACCELERATE_CONFIGS])
def test_accelerate_configs_use_deepspeed(config):
    data = yaml.safe_load(config.read_text())
    assert data["distributed_type"] == "DEEPSPEED"
    assert data["deepspeed_config"]["zero_stage"] in (2, 3)


def test_r1_recipe_carries_the_paper_values():
    recipe = load_recipe(Path("recipes/llava_critic_r1_qwen2_5_vl_7b.yaml"))
    assert recipe.optim.learning_rate == 1e-6
    assert (recipe.grpo.epsilon, recipe.grpo.epsilon_high, recipe.grpo.delta) == (0.2, 0.3, 3.0)
    assert recipe.grpo.beta == 0.01 and recipe.grpo.num_generations == 8
    # the paper's top_p is 0.99; 1.0 keeps vLLM's importance-sampling ratios exact
    assert recipe.grpo.top_p == 1.0 and recipe.grpo.max_completion_length == 2048
    assert recipe.rewards.format_weight == 0.1


def test_r1_plus_is_the_r1_recipe_with_its_model_and_rate_changed():
    r1 = load_recipe(ROOT / "llava_critic_r1_qwen2_5_vl_7b.yaml")
    plus = load_recipe(ROOT / "llava_critic_r1plus_thinklite_7b.yaml")
    assert plus.model.name_or_path == "russwang/ThinkLite-VL-7B"
    assert plus.optim.learning_rate == r1.optim.learning_rate / 2
    assert plus.grpo == r1.grpo and plus.data == r1.data and plus.rewards == r1.rewards
    assert plus.optim.per_device_train_batch_size == r1.optim.per_device_train_batch_size


def test_a_base_recipe_is_merged_section_by_section(tmp_path):
    (tmp_path / "base.yaml").write_text(MINIMAL + "grpo: {num_generations: 4, beta: 0.5}\n")
    child = tmp_path / "child.yaml"
    child.write_text("base: base.yaml\nmax_steps: 7\ngrpo: {beta: 0.1}\n")
    recipe = load_recipe(child, ["grpo.num_generations=2"])
    assert (recipe.max_steps, recipe.grpo.beta, recipe.grpo.num_generations) == (7, 0.1, 2)
    assert recipe.model.name_or_path == "m"


def test_recipes_including_each_other_in_a_circle_are_refused(tmp_path):
    (tmp_path / "a.yaml").write_text("base: b.yaml\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\n")
    with pytest.raises(RecipeError, match="circle"):
        load_recipe(tmp_path / "a.yaml")


def test_a_missing_base_recipe_is_named(tmp_path):
    path = write(tmp_path, MINIMAL + "base: nowhere.yaml\n")
    with pytest.raises(RecipeError, match=r"nowhere\.yaml"):
        load_recipe(path)


def test_misspelt_key_names_the_nearest_valid_key(tmp_path):
    path = write(tmp_path, MINIMAL + "grpo: {num_generatons: 4}\n")
    with pytest.raises(RecipeError, match=r"did you mean grpo\.num_generations"):
        load_recipe(path)


def test_every_problem_is_reported_at_once(tmp_path):
    path = write(tmp_path, "stage: ppo\nmodel: {dtype: float8}\nlogging_steps: x\n")
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    message = str(caught.value)
    for expected in ("stage", "model.dtype", "logging_steps"):
        assert expected in message


def test_missing_required_fields_are_all_named(tmp_path):
    with pytest.raises(RecipeError) as caught:
        load_recipe(write(tmp_path, "max_steps: 0\n"))
    for expected in ("max_steps", "output_dir", "model.name_or_path", "data.train"):
        assert expected in str(caught.value)


def test_dotted_overrides_apply_after_the_file(tmp_path):
    recipe = load_recipe(
        write(tmp_path, MINIMAL),
        ["optim.learning_rate=5e-7", "grpo.dynamic_sampling=true", "max_steps=9"],
    )
    assert recipe.optim.learning_rate == 5e-7
    assert recipe.grpo.dynamic_sampling is True and recipe.max_steps == 9


def test_override_of_the_wrong_type_is_refused(tmp_path):
    with pytest.raises(RecipeError, match=r"grpo\.num_generations = .many."):
        load_recipe(write(tmp_path, MINIMAL), ["grpo.num_generations=many"])


def test_dual_clip_must_exceed_the_upper_ratio_bound(tmp_path):
    with pytest.raises(RecipeError, match=r"grpo\.delta"):
        load_recipe(write(tmp_path, MINIMAL), ["grpo.delta=1.1"])


def test_checkpoints_between_logging_steps_are_refused(tmp_path):
    with pytest.raises(RecipeError, match=r"save_steps \(10\) must be a multiple of logging_steps"):
        load_recipe(write(tmp_path, MINIMAL), ["save_steps=10", "logging_steps=4"])


def test_grpo_checkpoints_inside_a_rollout_batch_are_refused(tmp_path):
    path = write(tmp_path, MINIMAL)
    with pytest.raises(RecipeError, match="where a new rollout batch begins"):
        load_recipe(path, ["save_steps=3", "grpo.steps_per_generation=2"])
    assert load_recipe(path, ["save_steps=4", "grpo.steps_per_generation=2"]).save_steps == 4
    assert load_recipe(path, ["save_steps=3", "stage=sft"]).save_steps == 3


def test_importance_sampling_against_top_p_truncated_vllm_log_probs_is_refused(tmp_path):
    path = write(tmp_path, MINIMAL)
    vllm = ["grpo.use_vllm=true", "device=cuda"]
    with pytest.raises(RecipeError, match=r"grpo\.top_p \(0\.99\) below 1"):
        load_recipe(path, [*vllm, "grpo.top_p=0.99"])
    assert load_recipe(path, [*vllm, "grpo.top_p=1.0"]).grpo.top_p == 1.0
    corrected = load_recipe(
        path, [*vllm, "grpo.top_p=0.99", "grpo.vllm_importance_sampling_correction=false"]
    )
    assert corrected.grpo.top_p == 0.99
    assert load_recipe(path, ["grpo.top_p=0.99"]).grpo.top_p == 0.99  # no vLLM, no ratio


def test_r1_recipe_rolls_out_in_vllm_with_room_for_the_longest_prompt_and_response():
    recipe = load_recipe(ROOT / "llava_critic_r1_qwen2_5_vl_7b.yaml")
    grpo = recipe.grpo
    assert grpo.use_vllm and grpo.vllm_mode == "colocate" and grpo.vllm_enable_sleep_mode
    needed = recipe.data.max_prompt_tokens + grpo.max_completion_length
    assert grpo.vllm_max_model_length >= needed


def test_speed_settings_reach_trl_under_trl_names(tmp_path, tiny_model_dir):
    from mmcritic.train.run import build_trl_config

    recipe = load_recipe(
        write(tmp_path, MINIMAL),
        [
            f"model.name_or_path={tiny_model_dir}",
            "device=cpu",
            "grpo.generation_batch_size=16",
            "grpo.ds3_gather_for_generation=false",
            "grpo.use_transformers_continuous_batching=true",
            "grpo.vllm_tensor_parallel_size=2",
            "grpo.vllm_max_model_length=4096",
            "grpo.vllm_enable_sleep_mode=true",
            "grpo.vllm_importance_sampling_mode=token_truncate",
            "grpo.vllm_importance_sampling_clip_max=2.0",
            "model.cast_lm_head_to_fp32=true",
            "model.gradient_checkpointing_reentrant=true",
            "data.dataloader_num_workers=3",
        ],
    )
    config = build_trl_config(recipe)
    assert config.generation_batch_size == 16 and config.ds3_gather_for_generation is False
    assert config.use_transformers_continuous_batching is True
    assert (config.vllm_tensor_parallel_size, config.vllm_max_model_length) == (2, 4096)
    assert config.vllm_enable_sleep_mode is True
    assert config.vllm_importance_sampling_mode == "token_truncate"
    assert config.vllm_importance_sampling_clip_max == 2.0
    assert config.cast_lm_head_to_fp32 is True
    assert config.activation_checkpointing_kwargs == {"use_reentrant": True}
    assert config.dataloader_num_workers == 3


def test_sft_packing_reaches_trl(tmp_path):
    from mmcritic.train.run import build_trl_config

    recipe = load_recipe(write(tmp_path, MINIMAL), ["stage=sft", "device=cpu", "sft.packing=true"])
    config = build_trl_config(recipe)
    assert config.packing is True and config.padding_free is False


def test_trls_old_name_for_paged_generation_points_to_the_current_one(tmp_path):
    with pytest.raises(RecipeError, match="use_transformers_continuous_batching"):
        load_recipe(write(tmp_path, MINIMAL), ["grpo.use_transformers_paged=true"])


@pytest.mark.parametrize(
    ("preference", "device", "flash", "expected"),
    [
        ("auto", "cpu", True, "sdpa"),
        ("auto", "cuda", True, "flash_attention_2"),
        ("auto", "cuda", False, "sdpa"),
        (None, "cuda", True, "flash_attention_2"),
        ("eager", "cuda", True, "eager"),
    ],
)
def test_attention_auto_takes_flash_attention_where_it_is_installed(
    monkeypatch, preference, device, flash, expected
):
    import importlib.util

    from mmcritic.models.loading import resolve_attention

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: (object() if flash else None) if name == "flash_attn" else real(name, *a),
    )
    assert resolve_attention(preference, device) == expected


FAMILY_RECIPES = {
    "llava_critic_r1_qwen2_vl_7b.yaml": "qwen2-vl",
    "llava_critic_r1_qwen2_5_vl_7b.yaml": "qwen2.5-vl",
    "llava_critic_r1_qwen3_vl_8b.yaml": "qwen3-vl",
}


@pytest.mark.parametrize("name", sorted(FAMILY_RECIPES))
def test_each_family_recipe_dry_runs_on_a_tiny_model_of_its_family(
    name, tiny_family, color_data, tmp_path, capsys
):
    """The released checkpoint is not here (no hub): its family's tiny build stands in, so the
    dry run resolves every setting of the recipe for a model of that family."""
    import json

    from mmcritic.cli import main

    family = FAMILY_RECIPES[name]
    args = ["--quiet", "train", str(ROOT / name), "--dry-run", f"output_dir={tmp_path}"]
    overrides = [f"model.name_or_path={tiny_family(family)}", f"data.train={color_data}"]
    assert main([*args, *overrides]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model_family"] == family and report["problems"] == []
    assert report["trl_config"]["learning_rate"] == 1e-6

    assert main([*args, f"data.train={color_data}"]) == 2  # the hub id cannot be read offline
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [problem.split(":")[0] for problem in problems] == ["model.name_or_path"]


@pytest.mark.parametrize("size", [(120, 90), (400, 300), (3000, 2000), (4000, 4000)])
def test_the_qwen3_vl_recipe_gives_images_at_its_bounds_the_7b_recipe_tokens(size):
    """Qwen3-VL's tokens cover 32x32 pixels: the 7B recipe's pixel bounds would cap an image at
    about 23% fewer tokens and floor it at fewer too, so the 8B recipe scales the bounds and an
    image resized to either bound gets within a few percent of the 7B recipe's tokens."""
    from mmcritic.data.media import PixelBudget, image_token_count

    seven, eight = (
        load_recipe(ROOT / name).data
        for name in ("llava_critic_r1_qwen2_5_vl_7b.yaml", "llava_critic_r1_qwen3_vl_8b.yaml")
    )
    tokens_7b = image_token_count(*size, PixelBudget(seven.min_pixels, seven.max_pixels), 14)
    tokens_8b = image_token_count(*size, PixelBudget(eight.min_pixels, eight.max_pixels), 16)
    unscaled = image_token_count(*size, PixelBudget(seven.min_pixels, seven.max_pixels), 16)
    assert abs(tokens_8b - tokens_7b) <= 0.05 * tokens_7b
    assert unscaled < 0.85 * tokens_7b
