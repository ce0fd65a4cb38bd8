"""Shared fixtures. The tiny models are built once per session: every test that needs a real
Qwen2.5-VL (or a model of another family) shares one instead of paying for a build."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mmcritic.data.synth import synthesize
from mmcritic.models import build_tiny_model
from mmcritic.models.families import DEFAULT_FAMILY

FAMILY_NAMES = ("qwen2-vl", "qwen2.5-vl", "qwen3-vl")


@pytest.fixture(scope="session")
def tiny_family(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`tiny_family(name)`: the tiny model of that family, built on first use."""
    built: dict[str, Path] = {}

    def model_of(family: str) -> Path:
        if family not in built:
            folder = tmp_path_factory.mktemp(f"tiny_{family}")
            built[family] = build_tiny_model(folder, family=family)
        return built[family]

    return model_of


@pytest.fixture(scope="session")
def tiny_model_dir(tiny_family) -> Path:
    return tiny_family(DEFAULT_FAMILY)


@pytest.fixture(scope="session")
def tiny_model_and_processor(tiny_model_dir: Path):
    """Loaded once and shared: tests must not train or otherwise mutate the model."""
    from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(tiny_model_dir).eval()
    return model, AutoProcessor.from_pretrained(tiny_model_dir)


@pytest.fixture(scope="session")
def color_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16 synthetic colour pairs (seed 0), read and never written by the tests."""
    folder = tmp_path_factory.mktemp("color")
    synthesize("color", 16, folder, seed=0, overwrite=True)
    return folder


@pytest.fixture(scope="session")
def warm_model(tiny_model_dir, color_data, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model after a format warm start on both verdicts of every prompt: it answers in
    the boxed format but is unsure which index to box, so GRPO rollouts earn different rewards
    and produce gradients."""
    from tests.test_train import format_warm_start

    return format_warm_start(tiny_model_dir, color_data, tmp_path_factory.mktemp("warm"))
