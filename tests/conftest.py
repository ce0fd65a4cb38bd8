"""Shared fixtures. The tiny model is built once per session: every test that needs a real
Qwen2.5-VL shares it instead of paying for a build."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmcritic.models import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny_qwen2_5_vl"))


@pytest.fixture(scope="session")
def tiny_model_and_processor(tiny_model_dir: Path):
    """Loaded once and shared: tests must not train or otherwise mutate the model."""
    from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(tiny_model_dir).eval()
    return model, AutoProcessor.from_pretrained(tiny_model_dir)
