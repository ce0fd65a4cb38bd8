"""Strict weight loading: a saved model loads whole or not at all, for training and inference."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from mmcritic.inference import load_model_for_inference
from mmcritic.models.checkpoints import (
    CheckpointMismatchError,
    load_weights_strictly,
    read_state_dict,
    to_model_names,
)
from mmcritic.models.loading import load_model


@pytest.fixture
def saved(tiny_model_dir, tmp_path) -> Path:
    folder = tmp_path / "final"
    shutil.copytree(tiny_model_dir, folder)
    return folder


def edit_weights(folder: Path, edit) -> None:
    path = folder / "model.safetensors"
    state = load_file(str(path))
    edit(state)
    save_file(state, str(path), metadata={"format": "pt"})


def test_every_stored_name_maps_onto_a_model_tensor(tiny_model_and_processor, tiny_model_dir):
    # pins transformers' load-time renaming (`model.layers.*` -> `model.language_model.*`,
    # `visual.*` -> `model.visual.*`) that strict loading relies on
    model, _ = tiny_model_and_processor
    stored = read_state_dict(tiny_model_dir)
    renamed = to_model_names(model, stored)
    assert set(renamed) == set(model.state_dict())
    assert any(name.startswith("model.layers.") for name in stored)
    assert "model.language_model.layers.0.mlp.up_proj.weight" in renamed


def test_strict_load_fills_every_tensor_with_the_stored_values(tiny_model_dir, saved):
    edit_weights(saved, lambda state: state["model.layers.1.mlp.up_proj.weight"].fill_(0.5))
    model = load_model(str(tiny_model_dir), torch.float32)
    assert load_weights_strictly(model, saved) == len(model.state_dict())
    loaded = model.state_dict()["model.language_model.layers.1.mlp.up_proj.weight"]
    assert torch.all(loaded == 0.5)


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda s: s.pop("visual.blocks.0.norm1.weight"), "model.visual.blocks.0.norm1.weight"),
        (lambda s: s.update({"model.layers.9.extra": torch.zeros(2)}), "model.layers.9.extra"),
        (
            lambda s: s.update({"lm_head.weight": s["lm_head.weight"][:-1]}),
            "lm_head.weight (stored",
        ),
    ],
    ids=["missing", "unexpected", "wrong_shape"],
)
def test_inference_load_of_a_mismatched_model_is_an_error_naming_the_key(saved, edit, named):
    edit_weights(saved, edit)
    with pytest.raises(CheckpointMismatchError) as error:
        load_model_for_inference(str(saved), device="cpu", dtype="float32")
    assert named in str(error.value)


def test_training_resume_refuses_a_checkpoint_missing_a_tensor(tiny_model_dir, saved):
    edit_weights(saved, lambda state: state.pop("model.embed_tokens.weight"))
    model = load_model(str(tiny_model_dir), torch.float32)
    with pytest.raises(CheckpointMismatchError, match=r"model\.language_model\.embed_tokens"):
        load_weights_strictly(model, saved)


def lora_folder(tiny_model_dir: Path, out: Path) -> Path:
    """A LoRA adapter over the tiny model with non-zero updates, saved as a run saves it."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoProcessor

    base = load_model(str(tiny_model_dir), torch.float32)
    model = get_peft_model(base, LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.5)
    model.save_pretrained(str(out))
    AutoProcessor.from_pretrained(tiny_model_dir).save_pretrained(str(out))
    return out


def test_lora_folder_loads_for_inference_with_the_adapter_merged(tiny_model_dir, tmp_path):
    adapter = lora_folder(tiny_model_dir, tmp_path / "lora")
    merged, _ = load_model_for_inference(str(adapter), device="cpu", dtype="float32")
    base = load_model(str(tiny_model_dir), torch.float32).state_dict()
    name = "model.language_model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(merged.state_dict()[name], base[name])
    assert not any("lora_" in key for key in merged.state_dict())


def test_lora_folder_missing_an_adapter_tensor_is_an_error(tiny_model_dir, tmp_path):
    adapter = lora_folder(tiny_model_dir, tmp_path / "lora")
    path = adapter / "adapter_model.safetensors"
    state = load_file(str(path))
    dropped = next(name for name in state if "lora_B" in name)
    del state[dropped]
    save_file(state, str(path), metadata={"format": "pt"})
    with pytest.raises(CheckpointMismatchError, match="lora_B"):
        load_model_for_inference(str(adapter), device="cpu", dtype="float32")
