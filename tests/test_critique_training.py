"""Refinement-aware critic training: critique records from a policy's answers, the verdict's
discriminability reward, the helpfulness reward (the policy revising given the critique) with
its stage schedule, and a GRPO run on critique rows with the model as its own reviser."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from mmcritic.data.critiques import write_critique_data
from mmcritic.data.dataset import read_records
from mmcritic.data.media import MediaBudget
from mmcritic.data.synth import synthesize
from mmcritic.inference import Policy
from mmcritic.rewards.critic import CritiqueVerdictReward
from mmcritic.train.config import load_recipe
from mmcritic.train.refinement_reward import RefinementOptions, RefinementReward
from mmcritic.train.run import train
from tests.test_refine import Tutor

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("questions")
    synthesize("color", 6, folder, seed=5, overwrite=True, colors=2, kind="verifiable")
    return folder


def _answers(records, right: bool) -> list[str]:
    wrong = {"red": "blue", "blue": "red"}
    return [
        f"<think>I look.</think> \\boxed{{{r.answer if right else wrong.get(r.answer, 'x')}}}"
        for r in records
    ]


@pytest.fixture(scope="module")
def critiques(questions: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = read_records(questions)
    texts = list(zip(_answers(records, True), _answers(records, False), strict=True))
    out = tmp_path_factory.mktemp("critiques")
    write_critique_data(out, records, [list(pair) for pair in texts], {"test": True})
    return out


def test_each_answer_becomes_a_critique_record_labelled_by_the_reference(critiques, questions):
    records = read_records(critiques)
    assert len(records) == 2 * len(read_records(questions))
    assert [r.answer for r in records[:2]] == ["correct", "incorrect"]
    first = records[0]
    assert first.kind == "critique" and first.images
    text = first.prompt[0]["content"][-1]["text"]
    assert "You are a careful reviewer" in text and first.meta["question"] in text
    assert "Final answer:" in first.meta["response"] and "\\boxed" not in first.meta["response"]
    assert first.meta["answer_text"].endswith(f"\\boxed{{{first.meta['reference']}}}")


def test_a_question_without_a_reference_is_rejected_with_its_reason(questions, tmp_path):
    records = read_records(questions)
    records[1].answer = ""
    stats = write_critique_data(tmp_path / "out", records, [["\\boxed{red}"]] * len(records), {})
    assert stats["rejected_by_reason"] == {"no_reference": 1}
    rejected = [json.loads(line) for line in (tmp_path / "out" / "rejected.jsonl").open()]
    assert rejected[0]["id"] == records[1].id


def test_the_verdict_is_rewarded_for_saying_what_the_answer_is():
    completions = [
        "<think>Right colour.</think> \\boxed{correct}",
        "<think>Right colour.</think> \\boxed{correct}",
        "<think>Wrong colour.</think> \\boxed{incorrect}",
        "<think>Hmm",
        "<think>x</think> \\boxed{1}",
    ]
    logged = {}
    rewards = CritiqueVerdictReward()(
        completions,
        answer=["correct", "incorrect", "incorrect", "correct", "1"],
        kind=["critique"] * 4 + ["pairwise"],
        log_metric=logged.__setitem__,
    )
    assert rewards == [1.0, 0.0, 1.0, 0.0, None]
    assert logged["critique/accuracy_on_incorrect"] == 0.5
    assert logged["critique/unreadable"] == 0.25


def _columns(n: int, reference: str = "red") -> dict:
    return {
        "question": ["What colour is the shape?"] * n,
        "image_paths": [[]] * n,
        "video_paths": [[]] * n,
        "video_options": ["{}"] * n,
        "reference": [reference] * n,
    }


def _reward(step: int, from_step: int = 0) -> tuple[RefinementReward, Tutor, dict]:
    tutor = Tutor({"What colour is the shape?": "red"})
    reward = RefinementReward(RefinementOptions(from_step=from_step), MediaBudget())
    reward.bind(Policy(None, None, engine=tutor))
    return reward, tutor, {"trainer_state": SimpleNamespace(global_step=step)}


def test_a_rejecting_critique_is_worth_what_the_revision_it_guides_is_worth():
    reward, tutor, state = _reward(step=5)
    critiques = [
        "<think>It says blue, but the answer should be red.</think> \\boxed{incorrect}",
        "<think>It says blue, but the answer should be green.</think> \\boxed{incorrect}",
        "<think>Looks fine.</think> \\boxed{correct}",
        "<think>Looks fine.</think> \\boxed{correct}",
        "<think>It says red, but the answer should be blue.</think> \\boxed{incorrect}",
        "no verdict at all",
    ]
    answers = ["\\boxed{blue}", "\\boxed{blue}", "\\boxed{red}", "\\boxed{blue}", "\\boxed{red}"]
    logged = {}
    rewards = reward(
        critiques,
        kind=["critique"] * 6,
        answer=["incorrect", "incorrect", "correct", "incorrect", "correct", "correct"],
        answer_text=[*answers, "\\boxed{red}"],
        log_metric=logged.__setitem__,
        **_columns(6),
        **state,
    )
    assert rewards == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert tutor.calls == [("revise", 3)]
    revision_prompt = tutor.requests[0].text
    assert "It says blue, but the answer should be red." in revision_prompt
    assert "Final answer: blue" in revision_prompt and "\\boxed{blue}" not in revision_prompt
    assert logged["refinement/revised"] == 0.5
    assert logged["refinement/wrong_to_right"] == pytest.approx(1 / 3)
    assert logged["refinement/right_to_wrong"] == pytest.approx(1 / 3)


def test_helpfulness_waits_for_stage_two():
    reward, tutor, state = _reward(step=3, from_step=4)
    critique = "<think>It says blue, but the answer should be red.</think> \\boxed{incorrect}"
    rewards = reward(
        [critique],
        kind=["critique"],
        answer=["incorrect"],
        answer_text=["\\boxed{blue}"],
        **_columns(1),
        **state,
    )
    assert rewards == [None] and tutor.calls == []


def test_the_real_model_revises_from_a_critique_with_the_image(tiny_model_dir, critiques):
    from mmcritic.inference import load_model_for_inference

    record = read_records(critiques)[1]
    reward = RefinementReward(RefinementOptions(max_new_tokens=6), MediaBudget())
    reward.bind(Policy(*load_model_for_inference(str(tiny_model_dir), "cpu", "float32"), 6))
    columns = _columns(1, record.meta["reference"]) | {"image_paths": [record.images]}
    rewards = reward(
        ["<think>The colour is off.</think> \\boxed{incorrect}"],
        kind=["critique"],
        answer=[record.answer],
        answer_text=[record.meta["answer_text"]],
        **columns,
        trainer_state=SimpleNamespace(global_step=0),
    )
    assert rewards in ([0.0], [1.0])


def test_critique_grpo_binds_the_frozen_policy_from_stage_two(
    tiny_model_dir, critiques, tmp_path, monkeypatch
):
    bound = []
    original = RefinementReward.bind
    monkeypatch.setattr(
        RefinementReward,
        "bind",
        lambda self, policy: bound.append(type(policy).__name__) or original(self, policy),
    )
    recipe = load_recipe(
        RECIPES / "critique_rl_cpu.yaml",
        [
            f"output_dir={tmp_path / 'run'}",
            f"model.name_or_path={tiny_model_dir}",
            f"data.train={critiques}",
            f"data.eval={critiques}",
            "max_steps=2",
            "save_steps=2",
            "logging_steps=1",
            "report_to=[]",
            "rewards.refinement_from_step=1",
            "rewards.refinement_max_new_tokens=6",
            "grpo.num_generations=2",
            "grpo.max_completion_length=8",
            "optim.per_device_train_batch_size=4",
        ],
    )
    summary = train(recipe)

    history = json.loads((tmp_path / "run" / "log_history.json").read_text())
    steps = [entry for entry in history if "rewards/critique_verdict/mean" in entry]
    assert len(steps) == 2
    assert "refinement/revised" not in steps[0] and "refinement/revised" in steps[1]
    assert bound[:2] == ["Policy", "NoneType"] and bound[-1] == "NoneType"
    assert set(summary["heldout_after"]["critique"]) >= {"accuracy", "accuracy_on_incorrect"}
