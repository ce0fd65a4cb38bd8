"""Recipe schema: every shipped recipe loads, typos name the nearest key, overrides apply."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mmcritic.train.config import RecipeError, load_recipe

RECIPES = sorted((Path(__file__).parents[1] / "recipes").glob("*.yaml"))
ACCELERATE_CONFIGS = sorted((Path(__file__).parents[1] / "recipes" / "accelerate").glob("*.yaml"))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return path


MINIMAL = "output_dir: runs/x\nmax_steps: 3\nmodel: {name_or_path: m}\ndata: {train: d}\n"


@pytest.mark.parametrize("recipe", RECIPES, ids=[p.name for p in RECIPES])
def test_every_shipped_recipe_loads_and_has_a_launch_line(recipe):
    loaded = load_recipe(recipe)
    assert loaded.output_dir and loaded.max_steps > 0
    header = [line for line in recipe.read_text().splitlines() if line.startswith("#")]
    assert any("train recipes/" + recipe.name in line for line in header)


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
    assert recipe.grpo.top_p == 0.99 and recipe.grpo.max_completion_length == 2048
    assert recipe.rewards.format_weight == 0.1


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
