"""Two ZeRO-3 ranks stay in step when their batches differ.

Under ZeRO-3 every forward gathers each layer's parameters with a collective, so every rank must
run the same number of forwards in every pass. Whether a batch takes the shared-prefix pass and
how many chunks it runs in must therefore not depend on one rank's own prompt lengths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmcritic.data.dataset import read_records
from mmcritic.data.synth import synthesize
from mmcritic_dev.quickstart import ONE_ORDER
from tests.test_train import run_deepspeed

# a sentence that adds about eleven tokens to a prompt; every other record gets 45 of them
FILLER = " Look again at the colour of the shape before you answer."


def uneven_prompt_data(folder: Path, records: int = 16) -> Path:
    """Color-task records with prompts of ~300 or ~800 tokens, so two ranks drawing different
    records hold prompts of very different lengths."""
    synthesize("color", records, folder, seed=3, overwrite=True)
    lines = []
    for index, record in enumerate(read_records(folder)):
        text = next(part for part in record.prompt[-1]["content"] if part["type"] == "text")
        text["text"] += FILLER * (45 * (index % 2))
        lines.append(record.to_json())
    (folder / "data.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.slow
def test_zero3_ranks_with_unequal_prompts_and_two_steps_per_generation_stay_in_step(
    tiny_model_dir, tmp_path
):
    data = uneven_prompt_data(tmp_path / "uneven")
    out = tmp_path / "run"
    # The random tiny model writes until the length limit, so completions run to 160 tokens:
    # long beside the short prompts, short beside the long ones. Two prompts a rank.
    run_deepspeed(
        "zero3",
        f"output_dir={out}",
        f"model.name_or_path={tiny_model_dir}",
        f"data.train={data}",
        "max_steps=8",
        "save_steps=100",
        "grpo.num_generations=8",
        "grpo.max_completion_length=160",
        "grpo.steps_per_generation=2",
        *ONE_ORDER,
        "grpo.shared_prefix=true",
        "grpo.beta=0.01",
        "optim.per_device_train_batch_size=8",
        "optim.learning_rate=1e-3",
    )
    # Before, a rank whose prompts were all short took TRL's pass (two forwards a pass) while
    # the other took the shared one (one forward), and ZeRO-3's gathers fell apart ("Detected
    # a disagreement on list contents between rank0 and rank1"). The random model earns no
    # reward, so what trained is not asserted here; that every step ran the shared pass is.
    history = json.loads((out / "log_history.json").read_text())
    steps = [entry for entry in history if "loss" in entry]
    fractions = [entry.get("shared_prefix/token_fraction") for entry in steps]
    assert len(steps) == 8 and all(0 < fraction < 0.6 for fraction in fractions), fractions
