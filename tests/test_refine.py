"""Critique-guided refinement at test time, against a scripted model that reads the prompts it
is sent as a model would: the critique and revision prompts are built and read by the real
`Critic` and `Policy`, and a round's effect is checked on the answers it changes."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest

from mmcritic.cli import main
from mmcritic.eval.backends import ModelBackend
from mmcritic.eval.runner import EvalOptions, run_eval, samples_path
from mmcritic.inference import Critic, Policy
from mmcritic.inference.engines import Engine, Request, Sampling
from mmcritic.inference.refine import refine, refine_many, select_and_refine
from tests.test_eval_fixtures import all_task_data, built_items

CRITIQUE_MARK = "You are a careful reviewer."
REVISION_MARK = "A reviewer's critique of that answer:"


class Tutor(Engine):
    """A scripted vision-language model for questions with known answers (`truths`: question
    -> answer). As a policy it answers `first(question)`; as a critic it reads the answer it is
    shown and, by `critic`, is honest ("honest"), rejects everything and names a wrong answer
    ("misleading"), or writes no verdict ("unreadable"); asked to revise, it takes the answer
    a critique names, or keeps its own when the critique names none. Every request is kept."""

    name = "hf"

    def __init__(self, truths: dict[str, str], first=None, critic: str = "honest"):
        self.truths, self.critic = truths, critic
        self.first = first or (lambda question: "nothing")
        self.requests: list[Request] = []
        self.calls: list[tuple[str, int]] = []

    def try_generate(self, requests: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        self.requests += requests
        kinds = [self._kind(request.text) for request in requests]
        self.calls.append((kinds[0], len(requests)))
        return [
            [self._reply(kind, request.text)] * sampling.n
            for kind, request in zip(kinds, requests, strict=True)
        ]

    def _kind(self, text: str) -> str:
        return (
            "critique" if CRITIQUE_MARK in text else "revise" if REVISION_MARK in text else "answer"
        )

    def _question(self, text: str) -> str:
        return next(q for q in sorted(self.truths, key=len, reverse=True) if q in text)

    def _reply(self, kind: str, text: str) -> str:
        question = self._question(text)
        truth = self.truths[question]
        if kind == "answer":
            return f"<think>A first look.</think> \\boxed{{{self.first(question)}}}"
        if kind == "revise":
            named = re.search(r"the answer should be (.+?)\.(?:\s|$)", text.split(REVISION_MARK)[1])
            own = re.search(r"Your earlier answer: .*?Final answer: (\S+)", text, re.S)
            return f"<think>Revised.</think> \\boxed{{{(named or own).group(1)}}}"
        shown = re.search(r"The answer: .*?Final answer: (\S+)", text, re.S).group(1)
        if self.critic == "unreadable":
            return "<think>Hard to say."
        if self.critic == "misleading":
            return "<think>No: the answer should be purple.</think> \\boxed{incorrect}"
        if shown == truth:
            return "<think>The answer matches the chart.</think> \\boxed{correct}"
        critique = f"It says {shown}, but the answer should be {truth}."
        return f"<think>{critique}</think> \\boxed{{incorrect}}"


QUESTIONS = {"How many bars?": "4", "What is the peak?": "12", "Which year?": "2020"}


def _pair(tutor: Tutor) -> tuple[Policy, Critic]:
    return Policy(None, None, engine=tutor), Critic(None, None, engine=tutor)


def test_a_wrong_answer_is_critiqued_revised_and_then_accepted() -> None:
    tutor = Tutor(QUESTIONS)
    policy, critic = _pair(tutor)

    refined = refine(
        policy, critic, None, "How many bars?", "<think>I count.</think> \\boxed{3}", 3
    )

    assert [step.final_answer for step in refined.steps] == ["3", "4"]
    assert refined.stopped == "accepted"
    assert [step.critique.accepts for step in refined.steps] == [False, True]
    revision_prompt = next(r.text for r in tutor.requests if REVISION_MARK in r.text)
    assert "It says 3, but the answer should be 4." in revision_prompt
    shown = revision_prompt.split("Taking the critique")[0]
    assert "\\boxed" not in shown and "<think>" not in shown


def test_a_right_answer_is_accepted_without_a_revision() -> None:
    policy, critic = _pair(tutor := Tutor(QUESTIONS))
    refined = refine(policy, critic, None, "Which year?", "\\boxed{2020}", 2)
    assert (refined.revisions, refined.stopped, refined.steps[0].critique.accepts) == (
        0,
        "accepted",
        True,
    )
    assert tutor.calls == [("critique", 1)]


def test_a_critic_that_never_accepts_uses_every_round_and_the_last_revision_stands() -> None:
    policy, critic = _pair(Tutor(QUESTIONS, critic="misleading"))
    refined = refine(policy, critic, None, "How many bars?", "\\boxed{4}", 3)
    assert [step.final_answer for step in refined.steps] == ["4", "purple", "purple", "purple"]
    assert refined.stopped == "rounds"
    assert refined.steps[-1].critique is None
    assert all(step.critique.accepts is False for step in refined.steps[:-1])


def test_an_unreadable_critique_keeps_the_answer_rather_than_revising_on_noise() -> None:
    policy, critic = _pair(tutor := Tutor(QUESTIONS, critic="unreadable"))
    refined = refine(policy, critic, None, "How many bars?", "\\boxed{7}", 3)
    assert (refined.answer, refined.stopped) == ("\\boxed{7}", "unreadable_critique")
    assert refined.steps[0].critique.reason == "no_box"
    assert [kind for kind, _ in tutor.calls] == ["critique"]


def test_each_round_asks_only_about_the_answers_still_open() -> None:
    tutor = Tutor(QUESTIONS)
    policy, critic = _pair(tutor)
    items = [(None, "How many bars?", "\\boxed{3}"), (None, "What is the peak?", "\\boxed{12}")]
    items.append((None, "Which year?", "\\boxed{1999}"))

    refined = refine_many(policy, critic, items, rounds=4)

    assert tutor.calls == [("critique", 3), ("revise", 2), ("critique", 2)]
    assert [r.steps[-1].final_answer for r in refined] == ["4", "12", "2020"]
    assert [r.revisions for r in refined] == [1, 0, 1]


@pytest.mark.parametrize("refine_each", [False, True])
def test_best_of_n_refines_the_pick_or_every_candidate(refine_each: bool) -> None:
    tutor = Tutor(QUESTIONS)
    policy, critic = _pair(tutor)
    candidates = ["\\boxed{4}", "\\boxed{5}", "\\boxed{6}", "\\boxed{4}"]

    chosen = select_and_refine(
        policy,
        critic,
        None,
        "How many bars?",
        candidates,
        2,
        strategy="majority",
        refine_each=refine_each,
    )

    assert chosen.answer.endswith("\\boxed{4}")
    revised = sum(size for kind, size in tutor.calls if kind == "revise")
    assert revised == (2 if refine_each else 0)
    assert len(chosen.refinements) == (4 if refine_each else 1)
    assert json.loads(json.dumps(chosen.to_dict()))["mode"] == (
        "refine_each" if refine_each else "refine_chosen"
    )


def test_rounds_below_one_are_refused() -> None:
    policy, critic = _pair(Tutor(QUESTIONS))
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        refine(policy, critic, None, "Which year?", "\\boxed{1}", 0)


@pytest.fixture(scope="module")
def chartqa(tmp_path_factory: pytest.TempPathFactory):
    path = all_task_data(tmp_path_factory)["chartqa"]
    truths = {item.text: str(item.target) for item in built_items("chartqa", path)}
    return path, truths


def _eval(tmp_path, path, tutor: Tutor, rounds: int) -> dict:
    options = EvalOptions(
        model="tutor",
        tasks=("chartqa",),
        output=tmp_path / "run",
        task_data={"chartqa": str(path)},
        refine_rounds=rounds,
        device="cpu",
        show_progress=False,
    )
    return run_eval(options, ModelBackend(tutor, options.generation))


def test_eval_reports_accuracy_per_round_and_what_each_revision_did(chartqa, tmp_path) -> None:
    path, truths = chartqa
    questions = list(truths)
    right_first = set(questions[::2])
    tutor = Tutor(truths, first=lambda q: truths[q] if q in right_first else "nothing")

    result = _eval(tmp_path, path, tutor, rounds=2)["tasks"]["chartqa"]

    n, wrong = len(questions), len(questions) - len(right_first)
    refinement = result["refinement"]
    assert refinement["accuracy_per_round"] == [len(right_first) / n, 1.0, 1.0]
    assert (refinement["wrong_to_right"], refinement["right_to_wrong"]) == ([wrong, 0], [0, 0])
    assert refinement["stopped"] == {"accepted": n}
    assert result["metrics"]["relaxed_accuracy"] == 1.0
    assert result["protocol"]["overrides"]["refine_rounds"] == 2
    lines = [
        json.loads(line)
        for line in samples_path(tmp_path / "run", "chartqa").read_text().splitlines()
    ]
    assert sorted(len(line["refine_scores"]) for line in lines) == sorted(
        [1] * len(right_first) + [2] * wrong
    )


def test_eval_counts_a_misleading_critic_turning_right_answers_wrong(chartqa, tmp_path) -> None:
    path, truths = chartqa
    tutor = Tutor(truths, first=lambda q: truths[q], critic="misleading")

    refinement = _eval(tmp_path, path, tutor, rounds=1)["tasks"]["chartqa"]["refinement"]

    assert refinement["accuracy_per_round"] == [1.0, 0.0]
    assert refinement["right_to_wrong"] == [len(truths)]
    assert refinement["stopped"] == {"rounds": len(truths)}


def test_refine_each_without_best_of_n_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="refine_each"):
        EvalOptions(
            model="m", tasks=("chartqa",), output=tmp_path, refine_rounds=1, refine_each=True
        )


def test_refine_command_runs_the_tiny_model_as_policy_and_critic(
    tiny_model_dir, tmp_path, capsys
) -> None:
    from PIL import Image

    image = tmp_path / "red.png"
    Image.new("RGB", (56, 56), "red").save(image)
    flags = ["--model", str(tiny_model_dir), "--image", str(image), "--question", "What colour?"]
    code = main(["refine", *flags, "--rounds", "2", "--max-new-tokens", "8", "--device", "cpu"])

    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed["critic"] == "the model itself" and printed["rounds"] == 2
    assert printed["stopped"] in ("accepted", "unreadable_critique", "rounds")
    assert printed["steps"][0]["critique"]["raw"]


def test_eval_command_refines_with_the_tiny_model(tiny_model_dir, chartqa, tmp_path, capsys):
    path, _ = chartqa
    out = tmp_path / "run"
    flags = ["--model", str(tiny_model_dir), "--tasks", "chartqa", "--output", str(out)]
    flags += [f"--task-data=chartqa={path}", "--limit", "2", "--max-new-tokens", "8"]
    code = main(["eval", *flags, "--refine-rounds", "1", "--device", "cpu"])

    result = json.loads((out / "results.json").read_text())["tasks"]["chartqa"]
    assert code == 0
    assert len(result["refinement"]["accuracy_per_round"]) == 2
    assert result["settings"]["refine_rounds"] == 1
    lines = samples_path(out, "chartqa").read_text().splitlines()
    assert all("refinement" in json.loads(line) for line in lines)
