"""LLM judges: the prompts lmms-eval asks GPT, and how each task reads the replies.

A scripted engine stands in for the judge model: it answers each prompt with a canned reply
phrased as GPT-4 answers these prompts, so what is tested is the prompt building and the
reading of replies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from mmcritic.eval.judges import JUDGED_TASKS, JudgeItem, JudgeVerdict, LLMJudge
from mmcritic.eval.registry import get_task
from mmcritic.eval.tasks import Problem, Row
from mmcritic.inference.engines import Request, Sampling

MATHVISTA_MC = {
    "pid": "1",
    "question": "What fraction of the shape is blue?",
    "decoded_image": "mathvista-1.png",
    "choices": ["3/11", "8/11", "6/11", "3/5"],
    "unit": None,
    "precision": None,
    "answer": "3/11",
    "question_type": "multi_choice",
    "answer_type": "text",
    "query": (
        "Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, "
        "D, at the end.\nQuestion: What fraction of the shape is blue?\nChoices:\n(A) 3/11\n"
        "(B) 8/11\n(C) 6/11\n(D) 3/5"
    ),
}
MATHVISTA_INTEGER = {
    "pid": "2",
    "question": "How much money does Ruth need to buy a baking dish and an ice cream scoop?",
    "decoded_image": "mathvista-2.png",
    "choices": None,
    "unit": "$",
    "precision": None,
    "answer": "10",
    "question_type": "free_form",
    "answer_type": "integer",
    "query": (
        "Hint: Please answer the question requiring an integer answer and provide the final "
        "value, e.g., 1, 2, 3, at the end.\nQuestion: How much money does Ruth need to buy a "
        "baking dish and an ice cream scoop? (Unit: $)"
    ),
}
MATHVISTA_FLOAT = {
    "pid": "3",
    "question": "What is the slope of the line at x = 2?",
    "decoded_image": "mathvista-3.png",
    "choices": None,
    "unit": None,
    "precision": 2.0,
    "answer": "0.25",
    "question_type": "free_form",
    "answer_type": "float",
    "query": (
        "Hint: Please answer the question requiring a floating-point number with two decimal "
        "places and provide the final value, e.g., 1.23, 1.34, 1.45, at the end.\nQuestion: "
        "What is the slope of the line at x = 2?"
    ),
}
MATHVERSE_MC = {
    "sample_index": "6",
    "problem_version": "Text Dominant",
    "question": (
        "As shown in the figure, a ∥ b, angle 1 = 50°, then the degree of angle 2 is ()\n"
        "Choices:\nA:30°\nB:40°\nC:50°\nD:60°"
    ),
    "question_for_eval": (
        "As shown in the figure, a ∥ b, angle 1 = 50°, then the degree of angle 2 is ()\n"
        "Choices:\nA:30°\nB:40°\nC:50°\nD:60°"
    ),
    "image": "mathverse-6.png",
    "answer": "B",
    "question_type": "multi-choice",
}
HALLUSION = {
    "category": "VD",
    "subcategory": "illusion",
    "visual_input": "1",
    "set_id": "1",
    "figure_id": "0",
    "question_id": "0",
    "question": "Are the two lines the same length?",
    "gt_answer_details": "Yes.",
    "gt_answer": "1",
    "image": "hallusion-1.png",
}
MMVU_MC = {
    "id": "mc-1",
    "question": "Which gas is produced at the anode in the electrolysis shown?",
    "choices": {"A": "Hydrogen", "B": "Oxygen", "C": "Chlorine", "D": "Nitrogen", "E": "Helium"},
    "answer": "B",
    "question_type": "multiple-choice",
    "video_path": "videos/chem-1.mp4",
}
MMVU_OPEN = {
    "id": "open-2",
    "question": "What is the name of the algorithm being visualised in the video?",
    "choices": {"A": None, "B": None, "C": None, "D": None, "E": None},
    "answer": "Bubble sort",
    "question_type": "open-ended",
    "video_path": "videos/cs-2.mp4",
}


def problem(task_name: str, data: dict[str, Any]) -> Problem:
    """The problem the task's own builder makes of a row in the benchmark's columns."""
    task = get_task(task_name)
    return task.problem(Row(task_name, 0, data, task.fields))


def item(task_name: str, data: dict[str, Any], response: str) -> JudgeItem:
    return JudgeItem(task_name, problem(task_name, data), response)


class ScriptedJudge:
    """Stands in for the judge model: answers each prompt with `reply(prompt)` and keeps every
    call's requests and sampling."""

    def __init__(self, reply: Callable[[str], str]):
        self.reply = reply
        self.calls: list[tuple[list[Request], Sampling]] = []

    def generate(self, requests: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        self.calls.append((list(requests), sampling))
        return [[self.reply(request.text)] for request in requests]

    @property
    def prompts(self) -> list[str]:
        return [request.text for requests, _ in self.calls for request in requests]


def judged(task_name: str, data: dict, response: str, reply: str) -> tuple[JudgeVerdict, list]:
    """One item judged with every prompt answered `reply`; the verdict and the prompts sent."""
    engine = ScriptedJudge(lambda _: reply)
    (verdict,) = LLMJudge(engine).judge_many([item(task_name, data, response)])
    return verdict, engine.prompts


# MathVista


def test_mathvista_asks_the_extraction_prompt_with_the_query_and_the_answer_part():
    response = "<think>3 of the 11 squares are blue.</think>The blue part is (A) 3/11 of the shape."
    verdict, (prompt,) = judged("mathvista_testmini", MATHVISTA_MC, response, "A")
    assert prompt.startswith(
        "Please read the following example. Then extract the answer from the model response "
        "and type it at the end of the prompt.\n\nHint: Please answer the question requiring "
        "an integer answer"
    )
    assert "Model response: The correct answer is (B) 8/11.\n\nExtracted answer: B" in prompt
    assert prompt.endswith(
        f"Extracted answer: B\n\n{MATHVISTA_MC['query']}\n\nThe blue part is (A) 3/11 of the "
        "shape.\n\nExtracted answer: "
    )
    assert "squares are blue" not in prompt  # lmms-eval strips the think block
    assert verdict == JudgeVerdict(1.0, "A", "A")


@pytest.mark.parametrize(
    ("data", "reply", "score", "verdict"),
    [
        (MATHVISTA_MC, "Extracted answer: B", 0.0, "B"),
        (MATHVISTA_MC, "3/11", 1.0, "3/11"),
        (MATHVISTA_FLOAT, "Extracted answer: 0.25", 1.0, "0.25"),
        (MATHVISTA_FLOAT, "0.2", 0.0, "0.2"),
        (MATHVISTA_INTEGER, "10", 1.0, "10"),
        (MATHVISTA_INTEGER, "$10.50", 0.0, "$10.50"),
    ],
)
def test_mathvista_scores_the_extraction_with_the_task_normalisation(data, reply, score, verdict):
    response = "Adding the prices step by step gives the total, which I state below."
    judgement, _ = judged("mathvista_testmini", data, response, reply)
    assert (judgement.score, judgement.verdict, judgement.raw) == (score, verdict, reply)


@pytest.mark.parametrize(
    ("data", "response", "score"),
    [(MATHVISTA_MC, "3/11", 1.0), (MATHVISTA_MC, "8/11", 0.0), (MATHVISTA_INTEGER, "10", 1.0),
     (MATHVISTA_FLOAT, "0.250", 1.0)],
)  # fmt: skip
def test_mathvista_takes_an_option_or_a_bare_number_without_asking(data, response, score):
    verdict, prompts = judged("mathvista_testmini", data, response, "never asked")
    assert prompts == []
    assert verdict.score == score
    assert verdict.raw == ""


def test_mathvista_empty_extraction_is_unreadable():
    verdict, _ = judged("mathvista_testmini", MATHVISTA_MC, "It is the second one.", "  \n")
    assert verdict == JudgeVerdict(0.0, "unreadable", "  \n")


# MathVerse


def mathverse_reply(extraction: str, judgement: str) -> Callable[[str], str]:
    return lambda prompt: judgement if "[Standard Answer]: B\n" in prompt[-400:] else extraction


MATHVERSE_RESPONSE = (
    "<think>Corresponding angles are equal.</think>Since a ∥ b, angle 1 and the angle next to "
    "angle 2 are corresponding angles, so they are equal. The two angles at the line add up to "
    "90° here because of the right angle marked in the figure. Therefore angle 2 = 90° − 50° = "
    "40°, which is option B. The answer is \\boxed{B}."
)


def test_mathverse_extracts_from_the_last_30_words_then_asks_the_scoring_prompt():
    engine = ScriptedJudge(mathverse_reply("B", "Judgement: 1"))
    (verdict,) = LLMJudge(engine).judge_many(
        [item("mathverse_testmini", MATHVERSE_MC, MATHVERSE_RESPONSE)]
    )
    extract, score = engine.prompts
    assert extract.startswith(
        "I am providing you a response from a model to a math problem, termed 'Model Response'."
    )
    tail = " ".join(MATHVERSE_RESPONSE.split("</think>")[1].split(" ")[-30:])
    assert extract.endswith(f"\n\n7.\n\nModel response: '{tail}'\nExtracted Answer: ")
    assert "corresponding angles" not in extract  # before the last 30 words
    assert score.startswith("Below are two answers to a math question.")
    assert "B:2√{3}" in score  # the template's doubled braces come out single
    assert score.endswith(
        f"[Question]: {MATHVERSE_MC['question_for_eval']}\n[Standard Answer]: B\n"
        "[Model_answer] : B\nJudgement:"
    )
    assert verdict == JudgeVerdict(1.0, "B", "B\n---\nJudgement: 1")


@pytest.mark.parametrize(
    ("extraction", "judgement", "score", "verdict"),
    [
        ("Extracted Answer: B", "1", 1.0, "B"),
        ("C", "Judgement: 0", 0.0, "C"),
        ("null", "Judement: 0.", 0.0, "null"),
        ("B", "The two answers are consistent.", 0.0, "unreadable"),
    ],
)
def test_mathverse_reads_the_judgement(extraction, judgement, score, verdict):
    engine = ScriptedJudge(mathverse_reply(extraction, judgement))
    (result,) = LLMJudge(engine).judge_many(
        [item("mathverse_testmini", MATHVERSE_MC, MATHVERSE_RESPONSE)]
    )
    assert (result.score, result.verdict) == (score, verdict)


def test_mathverse_unreadable_extraction_is_not_scored():
    engine = ScriptedJudge(mathverse_reply("", "1"))
    (verdict,) = LLMJudge(engine).judge_many(
        [item("mathverse_testmini", MATHVERSE_MC, MATHVERSE_RESPONSE)]
    )
    assert verdict == JudgeVerdict(0.0, "unreadable", "")
    assert len(engine.calls) == 1


# HallusionBench


def test_hallusionbench_prompt_is_lmms_evals_concatenation():
    response = "<think>Measure both.</think>Yes, both lines are the same length."
    _, (prompt,) = judged("hallusionbench", HALLUSION, response, "correct")
    upstream = "Imagine you are an intelligent teacher. Thoroughly read the question, reference answer and the prediction answer to ensure a clear understanding of the information provided. Assess the correctness of the predictions. "  # noqa: E501
    upstream += 'If the prediction answer does not conflict with the reference answer, please generate “correct”. If the prediction answer conflict with the reference answer, please generate “incorrect”. If the prediction answer is unclear about the answer, please generate "unclear". \n\n Question:'  # noqa: E501
    upstream += HALLUSION["question"]
    upstream += "\nReference answer: "
    upstream += "Yes."
    upstream += "\nPrediction answer:"
    upstream += "Yes, both lines are the same length."
    upstream += "\nOutput:"
    assert prompt == upstream


@pytest.mark.parametrize(
    ("visual_input", "reply", "score", "verdict"),
    [
        ("1", "Correct", 1.0, "correct"),
        ("1", "incorrect.", 0.0, "incorrect"),
        ("1", "“incorrect”", 0.0, "incorrect"),
        ("1", "Unclear", 0.0, "unclear"),
        ("0", "unclear", 1.0, "unclear"),
        ("1", "The prediction says yes.", 0.0, "unreadable"),
    ],
)
def test_hallusionbench_reads_correct_incorrect_unclear(visual_input, reply, score, verdict):
    data = HALLUSION | {"visual_input": visual_input}
    result, _ = judged("hallusionbench", data, "No, the top line is longer.", reply)
    assert (result.score, result.verdict, result.raw) == (score, verdict, reply)


def test_hallusionbench_without_reference_details_states_the_yes_no_target():
    data = {key: value for key, value in HALLUSION.items() if key != "gt_answer_details"}
    _, (prompt,) = judged("hallusionbench", data, "No.", "incorrect")
    assert "\nReference answer: Yes.\nPrediction answer:No.\nOutput:" in prompt


# MMVU


def test_mmvu_multiple_choice_is_scored_by_rule_alone():
    verdict, prompts = judged("mmvu", MMVU_MC, "The answer is \\boxed{B}.", "0")
    assert prompts == []
    assert verdict == JudgeVerdict(1.0, "B", "")


def test_mmvu_open_ended_answer_the_rules_accept_is_not_judged():
    verdict, prompts = judged("mmvu", MMVU_OPEN, "The video shows bubble sort.", "0")
    assert prompts == []
    assert verdict == JudgeVerdict(1.0, "correct", "")


def test_mmvu_open_ended_answer_the_rules_reject_goes_to_the_binary_judge():
    response = "<think>Adjacent pairs swap.</think>It is sinking sort."
    verdict, (prompt,) = judged("mmvu", MMVU_OPEN, response, "1")
    assert prompt.startswith(
        "You are a strict evaluator assessing answer correctness. You must output 1 for fully "
        "correct answers and 0 for any other case.\n\n# Evaluation Rules for Open-Ended Questions"
    )
    assert prompt.endswith(
        'Return only "1" or "0" with no additional text or formatting.\n\n'
        f"Question: Question: {MMVU_OPEN['question']}\nCorrect Answer: Bubble sort\n"
        "Model Prediction: It is sinking sort."
    )
    assert verdict == JudgeVerdict(1.0, "correct", "1")


@pytest.mark.parametrize(
    ("reply", "score", "verdict"),
    [("0", 0.0, "incorrect"), ("1", 1.0, "correct"), ("INCORRECT", 0.0, "incorrect"),
     ("Correct.", 1.0, "correct"), ("No", 0.0, "incorrect"), ("", 0.0, "unreadable"),
     ("I cannot say.", 0.0, "unreadable")],
)  # fmt: skip
def test_mmvu_reads_the_binary_reply(reply, score, verdict):
    result, _ = judged("mmvu", MMVU_OPEN, "It is insertion sort.", reply)
    assert (result.score, result.verdict) == (score, verdict)


# The batch


def test_all_first_stage_prompts_go_in_one_greedy_call_and_scoring_in_a_second():
    items = [
        item("mathvista_testmini", MATHVISTA_MC, "I think it is the first option."),
        item("mathverse_testmini", MATHVERSE_MC, MATHVERSE_RESPONSE),
        item("hallusionbench", HALLUSION, "Yes."),
        item("mmvu", MMVU_OPEN, "It is insertion sort."),
        item("mathvista_testmini", MATHVISTA_INTEGER, "10"),  # read by rule: no prompt
    ]

    def reply(prompt: str) -> str:
        if prompt.startswith("Please read the following example."):
            return "A"
        if prompt.startswith("I am providing you a response"):
            return "B"
        if prompt.startswith("Below are two answers"):
            return "Judgement: 1"
        return "correct" if prompt.startswith("Imagine") else "0"

    engine = ScriptedJudge(reply)
    verdicts = LLMJudge(engine, max_new_tokens=64).judge_many(items)
    first, second = engine.calls
    assert [r.text.split("\n")[0][:20] for r in first[0]] == [
        "Please read the foll",
        "I am providing you a",
        "Imagine you are an i",
        "You are a strict eva",
    ]
    assert [r.text[:20] for r in second[0]] == ["Below are two answer"]
    assert all(r.media is None for requests, _ in engine.calls for r in requests)
    assert first[1].temperature == 0.0 and first[1].max_new_tokens == 64
    assert [(v.score, v.verdict) for v in verdicts] == [
        (1.0, "A"),
        (1.0, "B"),
        (1.0, "correct"),
        (0.0, "incorrect"),
        (1.0, "10"),
    ]


def test_an_unknown_task_raises_naming_the_judged_tasks():
    engine = ScriptedJudge(lambda _: "1")
    items = [
        item("mathvista_testmini", MATHVISTA_MC, "A"),
        JudgeItem("chartqa", Problem("How many?", "3"), "3"),
    ]
    with pytest.raises(ValueError, match="chartqa") as error:
        LLMJudge(engine).judge_many(items)
    assert all(name in str(error.value) for name in JUDGED_TASKS)
    assert engine.calls == []


def test_the_judged_tasks_are_the_tasks_judged_upstream():
    assert all(get_task(name).judged_upstream for name in JUDGED_TASKS)
    assert {"mathvista_testmini", "mathverse_testmini", "mmvu", "hallusionbench"} == JUDGED_TASKS
