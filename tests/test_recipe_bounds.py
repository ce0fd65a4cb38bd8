"""Hostile recipes are refused fast and in full: YAML aliases (a billion items in ten lines),
endless base chains, numbers outside their field's range, each named with an excerpt of its
value only."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from mmcritic.train.config import (
    FIELD_RANGES,
    MAX_BASE_DEPTH,
    Bound,
    Recipe,
    RecipeError,
    load_recipe,
)

REPO = Path(__file__).parents[1]
QUICKSTART = REPO / "recipes" / "quickstart_cpu.yaml"
MINIMAL = "output_dir: runs/x\nmax_steps: 3\nmodel: {name_or_path: m}\ndata: {train: d}\n"

# ten strings, then eight levels of ten aliases each to the level below: 10^9 strings in all
BOMB_LEVELS = [f"&a0 [{', '.join(['lol'] * 10)}]"] + [
    f"&a{level} [{', '.join([f'*a{level - 1}'] * 10)}]" for level in range(1, 9)
]

# load_recipe in a child process, timed, its allocations traced
PROBE = """
import json, sys, time, tracemalloc
from mmcritic.train.config import RecipeError, load_recipe
path, overrides = json.loads(sys.argv[1])
tracemalloc.start()
start = time.perf_counter()
try:
    load_recipe(path, overrides)
    message = None
except RecipeError as err:
    message = str(err)
seconds = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"seconds": seconds, "peak_bytes": peak, "message": message}))
"""


def probe(path: Path, overrides: list[str]) -> dict[str, typing.Any]:
    """Runs load_recipe apart from the test process, so a bomb that does expand costs a killed
    child after 30 s rather than minutes and gigabytes of the test run."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, json.dumps([str(path), overrides])],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=REPO,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("load_recipe still ran after 30 s: the aliases were expanded")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def numeric_fields(cls: type = Recipe, prefix: str = "") -> dict[str, type]:
    """Every int and float field of a recipe by dotted key, with its number type."""
    found: dict[str, type] = {}
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        if dataclasses.is_dataclass(hint):
            found |= numeric_fields(hint, f"{prefix}{field.name}.")
            continue
        numbers = [kind for kind in typing.get_args(hint) or (hint,) if kind in (int, float)]
        if numbers:
            found[prefix + field.name] = numbers[0]
    return found


def refused_values(bound: Bound, kind: type) -> list[str]:
    """Override values the bound must refuse: negative, zero and just past each end where those
    fall outside it, and NaN and both infinities for a float field."""
    step = 1 if kind is int else 0.5
    candidates = [-1, 0, bound.low - step, bound.low, bound.high, bound.high + step]
    refused = sorted({kind(v) for v in candidates if math.isfinite(v) and not bound.admits(v)})
    return [str(v) for v in refused] + (["nan", "inf", "-inf"] if kind is float else [])


NUMBER_TYPES = numeric_fields()
BAD_VALUES = [
    (key, value)
    for key, bound in FIELD_RANGES.items()
    for value in refused_values(bound, NUMBER_TYPES[key])
]


def test_every_numeric_field_has_a_range():
    assert set(FIELD_RANGES) == set(NUMBER_TYPES)


@pytest.mark.parametrize(("key", "value"), BAD_VALUES, ids=[f"{k}={v}" for k, v in BAD_VALUES])
def test_a_value_outside_its_range_is_reported_by_field(key, value):
    with pytest.raises(RecipeError, match=re.escape(f"{key} = ") + r"\S+ must be "):
        load_recipe(QUICKSTART, [f"{key}={value}"])


@pytest.mark.parametrize(
    "override",
    [
        "grpo.beta=0",
        "grpo.epsilon=0",
        "grpo.top_p=1",
        "grpo.delta=null",
        "optim.max_grad_norm=0",
        "optim.warmup_ratio=0",
        "optim.weight_decay=0",
        "rewards.format_weight=0",
        "rewards.format_weight=1",
        "data.eval_every=0",
        "data.dataloader_num_workers=0",
        "seed=0",
        "seed=4294967295",
        "grpo.vllm_server_port=65535",
    ],
)
def test_values_at_the_edge_of_a_range_load(override):
    load_recipe(QUICKSTART, [override])


def test_several_bad_values_are_all_reported_at_once():
    bad = {
        "optim.learning_rate": "nan",
        "grpo.beta": "nan",
        "grpo.top_p": "2",
        "grpo.temperature": "-1",
        "optim.max_grad_norm": "nan",
        "optim.gradient_accumulation_steps": "0",
        "rewards.format_weight": "nan",
        "data.max_prompt_tokens": "-5",
    }
    with pytest.raises(RecipeError) as caught:
        load_recipe(QUICKSTART, [f"{key}={value}" for key, value in bad.items()])
    lines = str(caught.value).splitlines()[1:]
    assert len(lines) == len(bad)
    for key in bad:
        assert any(line.startswith(f"  - {key} = ") for line in lines), key


def test_zero_accumulation_steps_is_reported_not_divided_by():
    with pytest.raises(RecipeError, match=r"optim\.gradient_accumulation_steps = 0 must be"):
        load_recipe(QUICKSTART, ["optim.gradient_accumulation_steps=0"])


def test_required_fields_are_named_beside_a_value_out_of_range(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text("optim: {learning_rate: .nan}\n")
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    for expected in ("optim.learning_rate = nan", "output_dir", "model.name_or_path"):
        assert expected in str(caught.value)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("optim.learning_rate=1" + "0" * 400, r"optim\.learning_rate = inf must be"),
        ("max_steps=1" + "0" * 5000, "digits"),
    ],
    ids=["too-large-for-a-float", "too-long-for-an-int"],
)
def test_numbers_past_what_python_converts_are_refused(override, message):
    with pytest.raises(RecipeError, match=message):
        load_recipe(QUICKSTART, [override])


def test_a_video_budget_the_video_settings_refuse_is_reported():
    with pytest.raises(RecipeError, match=r"data\.video: .*min_frames=40"):
        load_recipe(QUICKSTART, ["data.video.min_frames=40"])


def test_an_alias_bomb_in_a_file_is_refused_at_once(tmp_path):
    path = tmp_path / "bomb.yaml"
    lines = [f"level{n}: {level}" for n, level in enumerate(BOMB_LEVELS)]
    path.write_text("\n".join(lines) + "\n" + MINIMAL.replace("runs/x", "*a8"))
    result = probe(path, [])
    assert result["seconds"] < 0.5 and result["peak_bytes"] < 10_000_000
    assert "bomb.yaml, line 1: recipes do not take YAML anchors or aliases" in result["message"]


def test_an_alias_bomb_in_an_override_is_refused_at_once():
    result = probe(QUICKSTART, [f"output_dir=[{', '.join(BOMB_LEVELS)}]"])
    assert result["seconds"] < 0.5 and result["peak_bytes"] < 10_000_000
    assert "line 1: recipes do not take YAML anchors or aliases" in result["message"]
    assert len(result["message"]) < 1000


def test_an_anchor_alone_is_refused_with_its_line(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(MINIMAL + "grpo: &g {beta: 0.1}\n")
    with pytest.raises(RecipeError, match=r"recipe\.yaml, line 5: .*anchors or aliases"):
        load_recipe(path)


def test_values_nested_past_any_recipe_are_refused():
    with pytest.raises(RecipeError, match="nest more than"):
        load_recipe(QUICKSTART, ["output_dir=" + "[" * 5000 + "]" * 5000])


def test_an_endless_base_chain_is_refused_naming_the_chain(tmp_path):
    for n in range(2000):
        (tmp_path / f"r{n}.yaml").write_text(f"base: r{n + 1}.yaml\n")
    (tmp_path / "r2000.yaml").write_text(MINIMAL)
    with pytest.raises(RecipeError) as caught:
        load_recipe(tmp_path / "r0.yaml")
    message = str(caught.value)
    assert f"at most {MAX_BASE_DEPTH} base: recipes" in message
    assert "r0.yaml -> " in message and f"r{MAX_BASE_DEPTH + 1}.yaml" in message
    assert "r100.yaml" not in message


def test_a_base_chain_at_the_limit_loads(tmp_path):
    for n in range(MAX_BASE_DEPTH):
        (tmp_path / f"r{n}.yaml").write_text(f"base: r{n + 1}.yaml\n")
    (tmp_path / f"r{MAX_BASE_DEPTH}.yaml").write_text(MINIMAL)
    assert load_recipe(tmp_path / "r0.yaml").max_steps == 3


@pytest.mark.parametrize(
    ("override", "letter"),
    [
        ("optim.learning_rate=" + "x" * 200_000, "x"),
        ("grpo." + "y" * 200_000 + "=1", "y"),
        ("output_dir=[" + ", ".join(["u" * 1000] * 1000) + "]", "u"),
    ],
    ids=["value", "key", "list"],
)
def test_a_huge_value_is_quoted_only_in_part(override, letter):
    with pytest.raises(RecipeError) as caught:
        load_recipe(QUICKSTART, [override])
    runs = re.findall(f"{letter}{{10,}}", str(caught.value))
    assert runs and sum(map(len, runs)) <= 200
