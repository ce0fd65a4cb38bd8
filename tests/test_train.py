"""Training on the tiny model: GRPO and SFT steps, guards, dynamic sampling, dry run."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from mmcritic.cli import main
from mmcritic.data.dataset import read_records
from mmcritic.data.media import MediaBudget
from mmcritic.data.synth import synthesize
from mmcritic.train.config import load_recipe
from mmcritic.train.examples import to_dataset
from mmcritic.train.run import train
from mmcritic_dev.quickstart import ONE_ORDER

RECIPE = Path(__file__).parents[1] / "recipes" / "quickstart_cpu.yaml"


@pytest.fixture(scope="module")
def unseen_color_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("color_unseen")
    synthesize("color", 16, folder, seed=5, overwrite=True)
    return folder


def format_warm_start(model: Path, data: Path, out: Path, *overrides: str) -> Path:
    """40 SFT steps on the boxed format with both verdicts; returns the saved model."""
    recipe = tiny_recipe(
        model,
        data,
        out,
        "stage=sft",
        "sft.target=format",
        "max_steps=40",
        "optim.learning_rate=5e-3",
        "report_to=[]",
        *overrides,
    )
    return Path(train(recipe)["final_model"])


def tiny_recipe(model: Path, data: Path, out: Path, *overrides: str):
    """The quickstart recipe cut down to a few steps on `data`, each pair in one order (the
    quickstart's both-orders batches double the rows an epoch holds)."""
    return load_recipe(
        RECIPE,
        [
            f"output_dir={out}",
            f"model.name_or_path={model}",
            f"data.train={data}",
            "data.eval=null",
            "max_steps=2",
            "save_steps=100",
            "logging_steps=1",
            "grpo.num_generations=2",
            "grpo.max_completion_length=8",
            *ONE_ORDER,
            "optim.per_device_train_batch_size=4",
            *overrides,
        ],
    )


def weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def changed_tensors(before: dict, after: dict) -> list[str]:
    return [name for name in before if not torch.equal(before[name], after[name])]


def test_two_grpo_steps_change_the_weights_and_log_reward_components(
    warm_model, unseen_color_data, tmp_path
):
    recipe = tiny_recipe(
        warm_model,
        unseen_color_data,
        tmp_path / "run",
        "grpo.num_generations=8",
        "grpo.max_completion_length=16",
        "optim.per_device_train_batch_size=16",
    )
    summary = train(recipe)
    assert summary["global_step"] == 2
    assert changed_tensors(weights(warm_model), weights(Path(summary["final_model"])))
    history = json.loads((tmp_path / "run" / "log_history.json").read_text())
    logged = set().union(*history)
    for key in (
        "rewards/preference/mean",
        "rewards/format/mean",
        "preference/accuracy_when_answer_1",
        "preference/accuracy_when_answer_2",
        "completions/mean_length",
        "guard/vision_token_cuts",
    ):
        assert key in logged, key
    assert list((tmp_path / "run").rglob("events.out.tfevents*")), "no TensorBoard events"
    assert (tmp_path / "run" / "recipe.yaml").is_file()
    answers = {record.id: record.answer for record in read_records(unseen_color_data)}
    for line in (tmp_path / "run" / "rollouts.jsonl").read_text().splitlines():
        prompts = set(json.loads(line)["ids"])
        assert sorted(answers[i] for i in prompts) == ["1", "2"], "batch not position-balanced"


def test_format_target_shows_every_prompt_with_both_verdicts(color_data):
    records = read_records(color_data)
    dataset = to_dataset(records, MediaBudget(), sft_target="format").with_format(None)
    assert len(dataset) == 2 * len(records)
    verdicts: dict[str, set[str]] = {}
    for row in dataset:
        text = row["completion"][0]["content"][0]["text"]
        assert text.startswith("<think></think>")
        verdicts.setdefault(row["id"], set()).add(text[-2])
    assert all(seen == {"1", "2"} for seen in verdicts.values())


def test_answer_first_target_thinks_the_model_s_own_answer_and_reads_no_label(color_data):
    """Each pair is taught twice, once per verdict, with the model's own answer in the think
    block (none where it boxed nothing): nothing in the targets depends on the better response."""
    records = read_records(color_data)
    own = ["purple", None] + ["red"] * (len(records) - 2)
    answered = [
        replace(record, meta={**record.meta, "own_answer": answer})
        for record, answer in zip(records, own, strict=True)
    ]
    flipped = [replace(record, answer={"1": "2", "2": "1"}[record.answer]) for record in answered]
    taught = [
        sorted(row["completion"][0]["content"][0]["text"] for row in rows)
        for rows in (
            to_dataset(given, MediaBudget(), sft_target="answer_first").with_format(None)
            for given in (answered, flipped)
        )
    ]
    assert taught[0] == taught[1]
    texts = to_dataset(answered[:2], MediaBudget(), sft_target="answer_first")["completion"]
    assert [turn[0]["content"][0]["text"] for turn in texts] == [
        "<think>My answer: purple.</think>\n\\boxed{1}",
        "<think>My answer: purple.</think>\n\\boxed{2}",
        "<think></think>\n\\boxed{1}",
        "<think></think>\n\\boxed{2}",
    ]


def _taught_by_own_answer(color_data: Path, target: str) -> tuple[str, list[list[str]]]:
    """The texts `target` teaches for one pair whose own answer is the first response's colour:
    as given, with the responses swapped, with the label flipped, and with an answer neither
    response states; and that colour."""
    record = read_records(color_data)[0]
    first, second = record.meta["responses"]
    colour = first.split()[-1].rstrip(".")
    answered = replace(record, meta={**record.meta, "own_answer": colour})
    swapped = replace(answered, meta={**answered.meta, "responses": [second, first]})
    flipped = replace(answered, answer={"1": "2", "2": "1"}[record.answer])
    unmatched = replace(record, meta={**record.meta, "own_answer": "magenta"})
    texts = [
        [
            turn[0]["content"][0]["text"]
            for turn in to_dataset([r], MediaBudget(), target)["completion"]
        ]
        for r in (answered, swapped, flipped, unmatched)
    ]
    return colour, texts


def test_answer_match_target_names_the_response_that_states_the_model_s_answer(color_data):
    """The think block adds which response states the model's own answer, read from the texts
    in the order the prompt shows them; the label never enters (flipped answers teach the
    same), and each verdict is still taught once."""
    colour, texts = _taught_by_own_answer(color_data, "answer_match")
    assert texts[0] == [
        f"<think>My answer: {colour}. Response 1 says {colour}.</think>\n\\boxed{{{v}}}"
        for v in ("1", "2")
    ]
    assert texts[1][0].startswith(f"<think>My answer: {colour}. Response 2 says {colour}.")
    assert texts[2] == texts[0]
    assert texts[3][0].startswith("<think>My answer: magenta. No response says magenta.")


def test_own_verdict_target_boxes_the_response_its_think_names_whatever_the_label(color_data):
    """The warm start judges by its own answer: the verdict is the response that states it, in
    the order shown, and the label never enters (a flipped label teaches the same); with no
    single response stating it, both verdicts are taught."""
    colour, texts = _taught_by_own_answer(color_data, "own_verdict")
    assert texts[0] == [
        f"<think>My answer: {colour}. Response 1 says {colour}.</think>\n\\boxed{{1}}"
    ]
    assert texts[1] == [
        f"<think>My answer: {colour}. Response 2 says {colour}.</think>\n\\boxed{{2}}"
    ]
    assert texts[2] == texts[0]
    assert texts[3] == [
        f"<think>My answer: magenta. No response says magenta.</think>\n\\boxed{{{v}}}"
        for v in ("1", "2")
    ]


def test_answer_first_target_refuses_pairs_the_model_never_answered(color_data):
    with pytest.raises(ValueError, match=r"needs meta\.own_answer on every pair"):
        to_dataset(read_records(color_data), MediaBudget(), sft_target="answer_first")


def test_format_target_keeps_the_answers_of_policy_questions(color_data, tmp_path):
    pairs = read_records(color_data)
    synthesize("color", 4, tmp_path / "questions", seed=1, overwrite=True, kind="verifiable")
    questions = read_records(tmp_path / "questions")
    dataset = to_dataset(pairs + questions, MediaBudget(), sft_target="format").with_format(None)
    assert len(dataset) == 2 * len(pairs) + len(questions)
    taught = {row["id"]: row["completion"][0]["content"][0]["text"] for row in dataset}
    for question in questions:
        assert taught[question.id].endswith(f"\\boxed{{{question.answer}}}")
        assert question.meta["rationale"] in taught[question.id]


def test_sft_warm_start_changes_the_weights(tiny_model_dir, color_data, tmp_path):
    recipe = tiny_recipe(tiny_model_dir, color_data, tmp_path / "sft", "stage=sft")
    summary = train(recipe)
    assert summary["global_step"] == 2
    assert changed_tensors(weights(tiny_model_dir), weights(Path(summary["final_model"])))


def test_frozen_vision_tower_stays_put(tiny_model_dir, color_data, tmp_path):
    recipe = tiny_recipe(
        tiny_model_dir, color_data, tmp_path / "run", "stage=sft", "model.freeze_vision_tower=true"
    )
    summary = train(recipe)
    changed = changed_tensors(weights(tiny_model_dir), weights(Path(summary["final_model"])))
    assert changed and not [name for name in changed if "visual" in name]


def test_prompts_too_long_for_the_limit_are_rejected_before_training(
    tiny_model_dir, color_data, tmp_path
):
    recipe = tiny_recipe(tiny_model_dir, color_data, tmp_path / "run", "data.max_prompt_tokens=50")
    with pytest.raises(ValueError, match="no training examples left"):
        train(recipe)
    rejected = (tmp_path / "run" / "rejected_train.jsonl").read_text().splitlines()
    assert len(rejected) == 16
    first = json.loads(rejected[0])
    assert first["id"].startswith("synth_color_") and first["reason"] == "prompt_too_long"


def test_generation_suppresses_every_vision_placeholder(tiny_model_dir, color_data, tmp_path):
    from mmcritic.train.run import build_trl_config

    config = build_trl_config(tiny_recipe(tiny_model_dir, color_data, tmp_path))
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    expected = {
        tokenizer.convert_tokens_to_ids(t)
        for t in ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>")
    }
    assert expected <= set(config.generation_kwargs["suppress_tokens"])


def test_sampled_vision_token_is_cut_before_the_forward_pass(monkeypatch):
    from trl import GRPOTrainer

    from mmcritic.train.grpo_trainer import CriticGRPOTrainer

    image_pad, eos = 510, 500

    def fake_generate(self, prompts):
        ids = [[5, 6, image_pad, 7], [5, 6]]
        return [[1], [1]], ids, None, ["ab<|image_pad|>c", "ab"], None, {}, None, None

    monkeypatch.setattr(GRPOTrainer, "_generate", fake_generate)
    trainer = CriticGRPOTrainer.__new__(CriticGRPOTrainer)
    trainer.vision_token_ids = {image_pad}
    trainer.eos_token_ids = [eos]
    trainer.model = torch.nn.Linear(1, 1)
    trainer._metrics = {"train": {"guard/vision_token_cuts": []}}

    class Decoder:
        def decode(self, ids, skip_special_tokens=True):
            return "ab"

    trainer._tokenizer = Decoder()
    _, completion_ids, _, completions, *_ = trainer._generate(["p", "q"])
    assert completion_ids == [[5, 6, eos], [5, 6]]
    assert completions == ["ab", "ab"]
    assert trainer._metrics["train"]["guard/vision_token_cuts"] == [1.0]


def test_dynamic_sampling_drops_all_equal_groups_and_refills(tiny_model_dir, color_data, tmp_path):
    # temperature 0 makes both rollouts of a prompt identical: every group is all-equal, so
    # dynamic sampling must drop them all, try its extra rounds, and still fill the batch
    recipe = tiny_recipe(
        tiny_model_dir,
        color_data,
        tmp_path / "run",
        "grpo.dynamic_sampling=true",
        "grpo.dynamic_sampling_max_rounds=2",
        "grpo.temperature=0.0001",
        "max_steps=1",
    )
    summary = train(recipe)
    assert summary["global_step"] == 1
    history = json.loads((tmp_path / "run" / "log_history.json").read_text())
    step = next(entry for entry in history if "dynamic_sampling/dropped_fraction" in entry)
    assert step["dynamic_sampling/dropped_fraction"] == 1.0
    assert step["dynamic_sampling/rounds"] == 2.0
    rollouts = (tmp_path / "run" / "rollouts.jsonl").read_text().splitlines()
    assert len(rollouts) == 2


def dry_run_args(out: Path, model: Path, data: Path) -> list[str]:
    return [
        "--quiet",
        "train",
        str(RECIPE),
        "--dry-run",
        f"output_dir={out}",
        f"model.name_or_path={model}",
        f"data.train={data}",
        "data.eval=null",
    ]


def test_dry_run_prints_trl_field_names(tiny_model_dir, color_data, tmp_path, capsys):
    args = dry_run_args(tmp_path, tiny_model_dir, color_data)
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    config = result["trl_config"]
    for name in (
        "learning_rate",
        "num_generations",
        "beta",
        "epsilon",
        "epsilon_high",
        "temperature",
        "top_p",
        "max_completion_length",
        "delta",
        "loss_type",
    ):
        assert name in config
    assert config["reward_weights"] == [0.9, 0.1]
    assert result["problems"] == []


def test_dry_run_reports_missing_data(tiny_model_dir, tmp_path, capsys):
    args = dry_run_args(tmp_path, tiny_model_dir, tmp_path / "nowhere")
    assert main(args) == 2
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert any("has no data.jsonl" in problem for problem in problems)


def run_train_process(*args: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "mmcritic.cli", "--quiet", "train", str(RECIPE), *args]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def rollout_ids(run: Path) -> list[tuple[int, list[str]]]:
    lines = (run / "rollouts.jsonl").read_text().splitlines()
    return [(entry["step"], entry["ids"]) for entry in map(json.loads, lines)]


def test_killed_run_resumes_at_its_checkpoint_without_replay(
    warm_model, unseen_color_data, tmp_path
):
    # GRPO from the warm start: rollouts disagree, so the weights move at every step and a
    # resume that loaded nothing would end elsewhere
    common = [
        f"model.name_or_path={warm_model}",
        f"data.train={unseen_color_data}",
        "data.eval=null",
        "max_steps=6",
        "save_steps=2",
        "logging_steps=1",
        "grpo.num_generations=2",
        "grpo.max_completion_length=12",
        "optim.per_device_train_batch_size=8",
        "optim.learning_rate=1e-3",
        "report_to=[]",
    ]
    straight = run_train_process(f"output_dir={tmp_path / 'straight'}", *common)
    assert straight.wait(timeout=300) == 0, straight.stderr.read()

    interrupted = tmp_path / "interrupted"
    process = run_train_process(f"output_dir={interrupted}", *common)
    deadline = time.monotonic() + 300
    while not (interrupted / "checkpoint-2" / "trainer_state.json").is_file():
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (interrupted / "final").exists()

    resumed = run_train_process(f"output_dir={interrupted}", *common)
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read()
    state = json.loads((interrupted / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["global_step"] == 6
    assert rollout_ids(interrupted) == rollout_ids(tmp_path / "straight")
    expected = weights(tmp_path / "straight" / "final")
    assert changed_tensors(weights(tmp_path / "straight" / "checkpoint-2"), expected)
    got = weights(interrupted / "final")
    assert max((expected[n] - got[n]).abs().max().item() for n in expected) <= 1e-6


def launch_command(config: str, recipe: Path, *overrides: str) -> list[str]:
    """`mmcritic train` on two CPU processes under `accelerate launch` with a DeepSpeed config
    (`recipes/accelerate/<config>_cpu_test.yaml`)."""
    root = Path(__file__).parents[1]
    return [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--config_file",
        str(root / "recipes" / "accelerate" / f"{config}_cpu_test.yaml"),
        "-m",
        "mmcritic.cli",
        "--quiet",
        "train",
        str(recipe),
        *overrides,
    ]


def deepspeed_command(config: str, *overrides: str) -> list[str]:
    common = ("data.eval=null", "grpo.num_generations=2", "logging_steps=1", "report_to=[]")
    return launch_command(config, RECIPE, *common, *overrides)


def run_launched(command: list[str]) -> None:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, cwd=Path(__file__).parents[1]
    )
    assert done.returncode == 0, done.stderr[-3000:]


def run_deepspeed(config: str, *overrides: str) -> None:
    run_launched(deepspeed_command(config, *overrides))


@pytest.mark.slow
def test_two_process_zero3_run_on_cpu_saves_a_reloadable_model(
    tiny_model_dir, color_data, tmp_path
):
    from transformers import AutoModelForImageTextToText

    run_deepspeed(
        "zero3",
        f"output_dir={tmp_path / 'run'}",
        f"model.name_or_path={tiny_model_dir}",
        f"data.train={color_data}",
        "max_steps=2",
        "save_steps=100",
        "grpo.max_completion_length=8",
        *ONE_ORDER,
        "optim.per_device_train_batch_size=2",
    )
    model = AutoModelForImageTextToText.from_pretrained(tmp_path / "run" / "final")
    assert sum(p.numel() for p in model.parameters()) == sum(
        p.numel() for p in AutoModelForImageTextToText.from_pretrained(tiny_model_dir).parameters()
    )


# the POISE baseline: 2 rollouts a prompt, the probe's state in every checkpoint
POISE = (
    "grpo.baseline=poise",
    "grpo.scale_rewards=batch",
    "grpo.num_generations=2",
    "grpo.pair_baseline=false",
)


@pytest.mark.slow
@pytest.mark.parametrize("baseline", [(), POISE], ids=["group", "poise"])
@pytest.mark.parametrize("config", ["zero2", "zero3"])
def test_two_process_deepspeed_run_resumed_in_epoch_two_matches_the_uninterrupted_run(
    warm_model, unseen_color_data, tmp_path, config, baseline
):
    # 16 records, 4 prompts a step over the two processes: checkpoint 6 is inside epoch 2
    common = (
        f"model.name_or_path={warm_model}",
        f"data.train={unseen_color_data}",
        "max_steps=8",
        "save_steps=2",
        "grpo.num_generations=4",
        "grpo.max_completion_length=12",
        "optim.per_device_train_batch_size=8",
        "optim.learning_rate=2e-4",
        *baseline,
    )
    straight = tmp_path / "straight"
    run_deepspeed(config, f"output_dir={straight}", *common)
    copied = tmp_path / "preempted" / "checkpoint-6"
    shutil.copytree(straight / "checkpoint-6", copied)
    resumed = tmp_path / "resumed"
    run_deepspeed(config, f"output_dir={resumed}", f"resume={copied}", *common)
    expected, got = weights(straight / "final"), weights(resumed / "final")
    assert changed_tensors(weights(straight / "checkpoint-6"), expected), "weights never moved"
    history = json.loads((straight / "log_history.json").read_text())
    norms = [entry["grad_norm"] for entry in history if "grad_norm" in entry]
    assert len(norms) == 8 and all(norm > 0 for norm in norms), "a step without a gradient"
    assert max((expected[n] - got[n]).abs().max().item() for n in expected) <= 1e-6
    later = [entry for entry in rollout_ids(straight) if entry[0] >= 6]
    assert rollout_ids(resumed) == later
    if baseline:
        resumed_history = json.loads((resumed / "log_history.json").read_text())
        probe_error = {e["step"]: e["poise/value_mse"] for e in history if "poise/value_mse" in e}
        resumed_error = {
            e["step"]: e["poise/value_mse"] for e in resumed_history if "poise/value_mse" in e
        }
        assert len(probe_error) == 8 and resumed_error
        assert resumed_error == {step: probe_error[step] for step in resumed_error}


@pytest.mark.slow
def test_zero3_run_with_shared_prompt_passes_trains_like_the_standard_passes(
    warm_model, unseen_color_data, tmp_path
):
    common = (
        f"model.name_or_path={warm_model}",
        f"data.train={unseen_color_data}",
        "max_steps=2",
        "save_steps=100",
        "grpo.num_generations=4",
        "grpo.max_completion_length=12",
        "optim.per_device_train_batch_size=8",
        "optim.learning_rate=2e-4",
    )
    finals, logged = {}, {}
    for shared in ("true", "false"):
        out = tmp_path / f"shared_{shared}"
        run_deepspeed("zero3", f"output_dir={out}", f"grpo.shared_prefix={shared}", *common)
        finals[shared] = weights(out / "final")
        history = json.loads((out / "log_history.json").read_text())
        fractions = [
            e["shared_prefix/token_fraction"]
            for e in history
            if "shared_prefix/token_fraction" in e
        ]
        assert (len(fractions) == 2 and max(fractions) < 0.6) if shared == "true" else not fractions
        logged[shared] = [(e["loss"], e["grad_norm"]) for e in history if "grad_norm" in e]
    assert changed_tensors(weights(warm_model), finals["true"]), "weights never moved"
    assert len(logged["true"]) == 2 and all(norm > 0 for _, norm in logged["true"])
    # GRPO's first-step gradient is a sum of per-token terms that nearly cancel (advantages
    # sum to zero per group), so float32 rounding, which differs between the two layouts (and
    # inside TRL's float32 log-prob head), moves the small net norm by up to ~1e-3 relative;
    # a wrong mask or position would move it by far more (in float64 the passes agree to
    # rounding: tests/test_shared_prefix.py)
    for (loss, norm), (standard_loss, standard_norm) in zip(
        logged["true"], logged["false"], strict=True
    ):
        assert loss == pytest.approx(standard_loss, abs=1e-7)
        assert norm == pytest.approx(standard_norm, rel=1e-2)
    # the weights are not compared element by element: Adam's first step moves every element
    # by the learning rate in the sign of its gradient, and where that gradient is rounding
    # noise (about a third of the elements here) either sign is as right as the other


def test_lora_run_trains_adapters_only(warm_model, unseen_color_data, tmp_path):
    recipe = tiny_recipe(
        warm_model,
        unseen_color_data,
        tmp_path / "run",
        "model.lora.enabled=true",
        "model.lora.r=4",
        "model.lora.target_modules=[q_proj,v_proj]",
        "grpo.num_generations=8",
        "grpo.max_completion_length=16",
        "optim.per_device_train_batch_size=16",
    )
    summary = train(recipe)
    saved = Path(summary["final_model"])
    adapter = load_file(str(saved / "adapter_model.safetensors"))
    assert adapter and all("lora_" in name for name in adapter)
