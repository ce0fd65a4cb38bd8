"""Critique-GRPO: the refinement chosen and placed in each group's last slot, the shaped
objective on its tokens, TRL's normaliser it mirrors, and GRPO runs that refine with the
reference's critique and with the policy's own."""

from __future__ import annotations

import inspect
import json
from collections import defaultdict
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from trl import GRPOTrainer

from mmcritic.data.dataset import read_records
from mmcritic.data.synth import synthesize
from mmcritic.models.loading import load_processor
from mmcritic.train.config import CritiqueGRPOSettings, RecipeError, load_recipe
from mmcritic.train.critique_grpo import (
    CritiqueGRPOMixin,
    chosen_refinement,
    reference_critique,
    shaped_loss,
)
from mmcritic.train.run import train

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def test_the_reference_critique_says_right_or_wrong_and_the_truth():
    assert reference_critique("<think>.</think> \\boxed{Red}", "red") == (
        "The generated solution is correct, the ground truth is red."
    )
    assert "incorrect, the ground truth is 4." in reference_critique("\\boxed{5}", "4")


def test_the_first_right_refinement_is_kept_else_the_first():
    assert chosen_refinement(["\\boxed{1}", "\\boxed{4}", "\\boxed{4}"], "4") == 1
    assert chosen_refinement(["\\boxed{1}", "\\boxed{2}"], "4") == 0


def test_the_shaped_term_weighs_unlikely_tokens_most_and_has_no_ratio():
    probs = torch.tensor([[0.05, 0.1, 0.9]])
    logps = probs.log().requires_grad_()
    loss = shaped_loss(logps, torch.tensor([1.0]), torch.ones(1, 3), gamma=0.1)
    loss.backward()
    expected = -(0.1 * probs / (probs + 0.1) ** 2)
    assert torch.allclose(logps.grad, expected)
    assert logps.grad[0, 1] < logps.grad[0, 2] < 0  # p = gamma is pushed hardest
    negative = shaped_loss(probs.log(), torch.tensor([-1.0]), torch.ones(1, 3), gamma=0.1)
    assert negative.item() == pytest.approx((probs / (probs + 0.1)).sum().item())


def test_the_dapo_normaliser_is_the_one_trl_divides_by():
    source = inspect.getsource(GRPOTrainer._compute_loss)
    assert (
        'normalizer = inputs["num_items_in_batch"].clamp(min=1.0) / self.accelerator.num_processes'
        in source
    )
    assert (
        "normalizer = normalizer * self.current_gradient_accumulation_steps / "
        "self.args.steps_per_generation" in source
    )


class _Refiner(CritiqueGRPOMixin):
    """The mixin on the tiny model's real tokenizer, with scripted revisions."""

    num_generations = 3
    max_completion_length = 16

    def __init__(self, processor, revisions: list[str]):
        self.processing_class, self.revisions = processor, revisions
        self.eos_token_ids = [processor.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        self._metrics = {"train": defaultdict(list)}
        self.critique_grpo = CritiqueGRPOSettings(enabled=True)

    def _revisions(self, rows, answers):
        return self.revisions


def test_the_kept_refinement_takes_the_last_slot_of_its_group(tiny_model_dir):
    processor = load_processor(str(tiny_model_dir))
    refiner = _Refiner(processor, ["\\boxed{blue}", "\\boxed{red}", "\\boxed{green}"] * 2)
    tokens = processor.tokenizer
    answers = [tokens("\\boxed{blue}", add_special_tokens=False)["input_ids"]] * 6
    refiner._rows_to_refine = [{"answer": "red"}] * 3 + [{"answer": "grey"}] * 3

    placed = refiner._with_refinements(answers)

    assert placed[:2] == answers[:2] and placed[3:5] == answers[3:5]
    assert tokens.decode(placed[2]) == "\\boxed{red}<|im_end|>"
    assert tokens.decode(placed[5]) == "\\boxed{blue}<|im_end|>"
    assert refiner._refined_rows == [False, False, True] * 2
    assert refiner._metrics["train"]["critique_grpo/refinement_right"] == [0.5]


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("questions")
    synthesize("color", 6, folder, seed=2, overwrite=True, colors=2, kind="verifiable")
    return folder


# two steps of Critique-GRPO on the tiny model: three rollouts a group, short answers and
# refinements
TWO_STEPS = (
    "max_steps=2",
    "save_steps=2",
    "logging_steps=1",
    "report_to=[]",
    "grpo.balance_positions=false",
    "grpo.num_generations=3",
    "grpo.max_completion_length=8",
    "grpo.scale_rewards=none",
    "grpo.critique_grpo.enabled=true",
    "grpo.critique_grpo.max_new_tokens=8",
)


def _recipe(model: Path, data: Path, out: Path, *overrides: str):
    return load_recipe(
        RECIPES / "toy_critic_cpu.yaml",
        [
            f"output_dir={out}",
            f"model.name_or_path={model}",
            f"data.train={data}",
            f"data.eval={data}",
            *TWO_STEPS,
            "optim.per_device_train_batch_size=6",
            *overrides,
        ],
    )


@pytest.mark.parametrize("critic", ["reference", "self"])
def test_critique_grpo_trains_on_answers_and_refinements(
    tiny_model_dir, questions, tmp_path, critic
):
    out = tmp_path / critic
    train(_recipe(tiny_model_dir, questions, out, f"grpo.critique_grpo.critic={critic}"))

    history = json.loads((out / "log_history.json").read_text())
    steps = [entry for entry in history if "critique_grpo/refinement_right" in entry]
    assert len(steps) == 2
    # below 1: the refinement's tokens are read with each other in view (a row masked out of
    # attention scores log-prob 0, probability 1, on every token)
    assert all(0.0 < entry["critique_grpo/refinement_prob"] < 1.0 for entry in steps)
    assert all(0.0 <= entry["critique_grpo/answers_right"] <= 1.0 for entry in steps)


def test_critique_grpo_refuses_what_it_cannot_combine_with(tiny_model_dir, questions, tmp_path):
    with pytest.raises(RecipeError, match="loss_type: dapo"):
        _recipe(tiny_model_dir, questions, tmp_path, "grpo.loss_type=grpo")
    with pytest.raises(RecipeError, match=r"multiple of grpo\.num_generations"):
        _recipe(tiny_model_dir, questions, tmp_path, "optim.per_device_train_batch_size=4")
    # each process refines on its own: from ZeRO-3 shards the processes would have to step
    # through every layer together
    with pytest.raises(
        RecipeError, match=r"grpo\.critique_grpo generate .*ds3_gather_for_generation: true"
    ):
        _recipe(tiny_model_dir, questions, tmp_path, "grpo.ds3_gather_for_generation=false")
    off = ("grpo.critique_grpo.enabled=false", "grpo.ds3_gather_for_generation=false")
    assert not _recipe(tiny_model_dir, questions, tmp_path, *off).grpo.critique_grpo.enabled


def test_the_refinement_is_scored_with_its_own_tokens_in_view(
    tiny_model_dir, questions, tmp_path, monkeypatch
):
    """The refinement's rows leave the clipped loss but not the forward pass: the log-probs its
    shaped term gets are those of the refinement read in full (its tokens attending to each
    other), not those of a row whose completion was masked out of attention."""
    from mmcritic.models.loading import load_processor
    from mmcritic.train import critique_grpo
    from mmcritic.train.examples import to_dataset
    from mmcritic.train.run import make_trainer

    recipe = _recipe(tiny_model_dir, questions, tmp_path, "grpo.shared_prefix=false")
    processor = load_processor(str(tiny_model_dir), recipe.data.media_budget)
    trainer = make_trainer(
        recipe, processor, to_dataset(read_records(questions), recipe.data.media_budget)
    )
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop
    rows = [trainer.train_dataset[i] for i in range(2) for _ in range(3)]
    torch.manual_seed(0)
    rollout = trainer._generate_and_score_completions(rows)
    assert rollout["refined"].tolist() == [False, False, True] * 2
    shaped = []
    original = critique_grpo.shaped_loss
    monkeypatch.setattr(
        critique_grpo,
        "shaped_loss",
        lambda logps, *rest: shaped.append(logps.detach()) or original(logps, *rest),
    )
    trainer._compute_loss(trainer.model, rollout)

    ids = torch.cat([rollout["prompt_ids"], rollout["completion_ids"]], dim=1)
    mask = torch.cat([rollout["prompt_mask"], rollout["completion_mask"]], dim=1)
    keys = ("pixel_values", "image_grid_thw", "num_images", "mm_token_type_ids")
    media = {key: rollout[key] for key in keys}
    with torch.no_grad():
        full, _, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model, ids, mask, rollout["completion_ids"].size(1), **media
        )
    refined = rollout["refined"].unsqueeze(1) & rollout["completion_mask"].bool()
    assert refined.any()
    assert torch.allclose(shaped[0][refined], full[refined], atol=1e-5)


@pytest.mark.slow
def test_critique_grpo_runs_on_two_zero3_processes_with_the_policy_as_its_critic(
    tiny_model_dir, questions, tmp_path
):
    """At the rank count of a real run: each process refines its own groups with the whole
    model gathered, the refinement's term trains, and the gathered model saves whole. From a
    short warm start on the questions, so the groups' answers earn different rewards."""
    from tests.test_train import format_warm_start, launch_command, run_launched

    warm = format_warm_start(tiny_model_dir, questions, tmp_path / "warm")
    out = tmp_path / "run"
    run_launched(
        launch_command(
            "zero3",
            RECIPES / "toy_critic_cpu.yaml",
            f"output_dir={out}",
            f"model.name_or_path={warm}",
            f"data.train={questions}",
            "data.eval=null",
            *TWO_STEPS,
            "grpo.critique_grpo.critic=self",
            "optim.per_device_train_batch_size=3",
            "optim.learning_rate=1e-3",
        )
    )

    history = json.loads((out / "log_history.json").read_text())
    steps = [entry for entry in history if "critique_grpo/refinement_prob" in entry]
    assert len(steps) == 2
    assert all(0.0 < entry["critique_grpo/refinement_prob"] < 1.0 for entry in steps)
    before = load_file(str(warm / "model.safetensors"))
    after = load_file(str(out / "final" / "model.safetensors"))
    assert set(after) == set(before)
    assert any(not torch.equal(before[name], after[name]) for name in before), "never moved"
