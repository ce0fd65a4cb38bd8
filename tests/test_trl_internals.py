"""The private TRL and transformers internals mmcritic overrides or reads, pinned.

`CriticGRPOTrainer`, `CriticSFTTrainer`, `MediaCollator`, the resume mixin, the samplers and the
TensorBoard callback extend private methods and read private attributes of the pinned TRL and
transformers. Nothing would fail at import if an upgrade renamed a parameter, reordered a
returned tuple or dropped an attribute: the run would go wrong later. These tests read the
installed libraries' own signatures and source, so an upgrade fails here, by name.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest
from transformers import Trainer
from transformers.integrations import TensorBoardCallback
from trl import GRPOTrainer, SFTTrainer
from trl.trainer.grpo_trainer import RepeatSampler
from trl.trainer.sft_trainer import DataCollatorForVisionLanguageModeling

from mmcritic.train.balanced_sampling import EpochSeededRepeatSampler
from mmcritic.train.grpo_trainer import CriticGRPOTrainer
from mmcritic.train.resume import ExactResumeMixin, ResumableTensorBoardCallback
from mmcritic.train.sft import CriticSFTTrainer, MediaCollator

# (library class, method): the parameters mmcritic's override receives and passes on.
PINNED_SIGNATURES = {
    (GRPOTrainer, "_generate"): ["self", "prompts"],
    (GRPOTrainer, "_calculate_rewards"): [
        "self",
        "inputs",
        "prompts",
        "completions",
        "completion_ids_list",
    ],
    (GRPOTrainer, "_generate_and_score_completions"): ["self", "inputs"],
    (GRPOTrainer, "_tokenize_prompts"): ["self", "prompts"],
    (GRPOTrainer, "_compute_loss"): ["self", "model", "inputs"],
    (GRPOTrainer, "_get_train_sampler"): ["self", "dataset"],
    (GRPOTrainer, "_prepare_inputs"): ["self", "generation_batch"],
    (GRPOTrainer, "_generate_single_turn"): [
        "self",
        "prompt_ids",
        "images",
        "multimodal_fields",
        "num_generations",
        "has_tool_images",
    ],
    (DataCollatorForVisionLanguageModeling, "_collate_prompt_completion"): ["self", "examples"],
    (Trainer, "_load_from_checkpoint"): ["self", "resume_from_checkpoint", "model"],
    (Trainer, "_save_checkpoint"): ["self", "model", "trial"],
    (Trainer, "_load_optimizer_and_scheduler"): ["self", "checkpoint"],
    (Trainer, "_load_rng_state"): ["self", "checkpoint"],
    (Trainer, "_save_rng_state"): ["self", "output_dir"],
    # called with keywords only
    (Trainer, "_run_epoch"): [
        "self",
        "model",
        "epoch",
        "train_dataloader",
        "steps_in_epoch",
        "num_update_steps_per_epoch",
        "trial",
        "ignore_keys_for_eval",
        "start_time",
        "resume_from_checkpoint",
        "epochs_trained",
        "steps_trained_in_current_epoch",
    ],
    (TensorBoardCallback, "on_train_begin"): ["self", "args", "state", "control", "kwargs"],
}
# The leading parameters of `_get_per_token_logps_and_entropies`, passed positionally.
LOGPS_LEADING = ["self", "model", "input_ids", "attention_mask", "logits_to_keep", "batch_size"]
# Names of the tuples mmcritic unpacks by position.
GENERATE_RETURNS = ["prompt_ids", "completion_ids", "tool_mask", "completions", "logprobs"]
TOKENIZE_RETURNS = ["prompt_ids", "images", "multimodal_fields"]
OURS = (
    CriticGRPOTrainer,
    CriticSFTTrainer,
    ExactResumeMixin,
    MediaCollator,
    EpochSeededRepeatSampler,
    ResumableTensorBoardCallback,
)


@pytest.mark.parametrize(("owner", "name"), list(PINNED_SIGNATURES))
def test_each_overridden_method_keeps_its_parameters(owner, name):
    assert (
        list(inspect.signature(getattr(owner, name)).parameters) == PINNED_SIGNATURES[(owner, name)]
    )


def test_the_log_probability_helper_keeps_its_leading_parameters():
    parameters = list(inspect.signature(GRPOTrainer._get_per_token_logps_and_entropies).parameters)
    assert parameters[: len(LOGPS_LEADING)] == LOGPS_LEADING


def test_every_private_override_is_pinned():
    """A new override of a library's private method must be added to the pins above."""
    pinned = {name for _, name in PINNED_SIGNATURES} | {"_get_per_token_logps_and_entropies"}
    libraries = (GRPOTrainer, SFTTrainer, Trainer, DataCollatorForVisionLanguageModeling)
    libraries += (RepeatSampler, TensorBoardCallback)
    for ours in OURS:
        for name, member in vars(ours).items():
            inherited = any(hasattr(library, name) for library in libraries)
            if name.startswith("_") and not name.startswith("__") and callable(member):
                assert not inherited or name in pinned, f"{ours.__name__}.{name} is not pinned"


def _returned_names(function) -> list[list[str]]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    returns = [node.value for node in ast.walk(tree) if isinstance(node, ast.Return)]
    return [[ast.unparse(item) for item in value.elts] for value in returns if value]


def test_generate_returns_the_tuple_the_vision_guard_unpacks():
    for names in _returned_names(GRPOTrainer._generate):
        assert names[: len(GENERATE_RETURNS)] == GENERATE_RETURNS


def test_tokenize_prompts_returns_ids_images_and_fields_in_that_order():
    returned = _returned_names(GRPOTrainer._tokenize_prompts)
    assert returned and all(names == TOKENIZE_RETURNS for names in returned)


def test_rollout_buffering_still_shuffles_splits_and_buffers_as_the_group_split_mirrors():
    """`CriticGRPOTrainer._prepare_inputs` repeats TRL's training branch with a group-wise
    shuffle: TRL must still generate every steps_per_generation x num_iterations steps, shuffle,
    split into steps_per_generation parts and buffer them, in that order."""
    source = inspect.getsource(GRPOTrainer._prepare_inputs)
    steps = [
        "generate_every = self.args.steps_per_generation * self.num_iterations",
        "self._generate_and_score_completions(generation_batch)",
        "split_pixel_values_by_grid(generation_batch)",
        "shuffle_sequence_dict(generation_batch)",
        "split_tensor_dict(generation_batch, self.args.steps_per_generation)",
        "unsplit_pixel_values_by_grid(batch) for batch in generation_batches",
        "self._buffered_inputs[self._step % self.args.steps_per_generation]",
    ]
    positions = [source.find(step) for step in steps]
    assert -1 not in positions and positions == sorted(positions)


@pytest.mark.parametrize(
    ("owner", "attribute"),
    [
        (GRPOTrainer, "_metrics"),
        (GRPOTrainer, "reward_weights"),
        (GRPOTrainer, "eos_token_ids"),
        (GRPOTrainer, "num_generations"),
        (GRPOTrainer, "_tokenizer"),
        (GRPOTrainer, "_image_pad_token_id"),
        (GRPOTrainer, "_video_pad_token_id"),
        (SFTTrainer, "_total_train_tokens"),
        (TensorBoardCallback, "tb_writer"),
        (TensorBoardCallback, "logging_dir"),
        (TensorBoardCallback, "_SummaryWriter"),
    ],
)
def test_the_private_attributes_mmcritic_reads_are_still_set(owner, attribute):
    source = inspect.getsource(owner)
    assert f"self.{attribute} =" in source or f"self.{attribute}:" in source


def test_the_sampler_base_keeps_the_fields_the_epoch_replay_reads():
    parameters = inspect.signature(RepeatSampler.__init__).parameters
    assert {"mini_repeat_count", "batch_size", "repeat_count", "shuffle", "seed"} <= set(parameters)
    source = inspect.getsource(RepeatSampler)
    assert "self.generator" in source and "self.num_samples" in source


def test_the_epoch_loop_calls_run_epoch_with_keywords_only():
    """`ExactResumeMixin._run_epoch` takes keywords only."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(Trainer._inner_training_loop)))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "_run_epoch"
    ]
    assert calls and all(not call.args for call in calls)
