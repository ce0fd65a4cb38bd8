"""The LLaVA-Critic parsers: each wording of the human turn and each verdict phrasing."""

from __future__ import annotations

import pytest

from mmcritic.data.formats.llava_critic import (
    parse_pair_prompt,
    parse_pair_verdict,
    parse_score,
    parse_single_prompt,
)
from mmcritic.data.schema import RecordError

PAIR_PROMPTS = {
    "first_second_bracketed": (
        "<image>\nPlease serve as an unbiased and fair judge.\nQuestion: [What colour is the bus?]"
        "\nThe first response: [The bus is red.]\nThe second response: [The bus is blue.]\n"
        "ASSISTANT:\n"
    ),
    "answer_1_2_with_criteria_after": (
        "Please analyze the image and question.\n\nQuestion: What colour is the bus?\n\n"
        "Answer 1: The bus is red.\n\nAnswer 2: The bus is blue.\n\nPlease evaluate both answers "
        "based on the following criteria:\n1. Accuracy\n2. Completeness"
    ),
    "response_a_b": (
        "Question: What colour is the bus?\nResponse A: The bus is red.\nResponse B: The bus is "
        "blue.\nWhich response is better?"
    ),
    "response_1_2": (
        "Question: What colour is the bus?\nResponse 1: The bus is red.\nResponse 2: The bus is "
        "blue.\n"
    ),
    "assistant_start_end_blocks": (
        "[Question]\nWhat colour is the bus?\n\n[The Start of Assistant 1's Answer]\nThe bus is "
        "red.\n[The End of Assistant 1's Answer]\n\n[The Start of Assistant 2's Answer]\nThe bus "
        "is blue.\n[The End of Assistant 2's Answer]\n\n[System]\nGive two scores."
    ),
    "arena_user_question": (
        "Act as a judge.\n\n[User Question]\nWhat colour is the bus?\n\n[The Start of Assistant "
        "A's Answer]\nThe bus is red.\n[The End of Assistant A's Answer]\n\n[The Start of "
        "Assistant B's Answer]\nThe bus is blue.\n[The End of Assistant B's Answer]"
    ),
    "bracketed_response_tags": (
        "Question: What colour is the bus?\n[Response 1]\nThe bus is red.\n[Response 2]\nThe bus "
        "is blue."
    ),
}


@pytest.mark.parametrize("human", PAIR_PROMPTS.values(), ids=PAIR_PROMPTS.keys())
def test_each_pairwise_wording_yields_question_and_both_responses(human):
    assert parse_pair_prompt(human) == (
        "What colour is the bus?",
        "The bus is red.",
        "The bus is blue.",
    )


def test_brackets_inside_a_response_are_kept():
    human = (
        "Question: [Describe it.]\nThe first response: [A dog [brown] runs.]\n"
        "The second response: [A cat.]"
    )
    assert parse_pair_prompt(human)[1] == "A dog [brown] runs."


def test_image_tags_never_reach_the_question():
    question, _, _ = parse_pair_prompt(
        "<image>\nQuestion: <image> Where?\nResponse 1: Here.\nResponse 2: There."
    )
    assert question == "Where?"


@pytest.mark.parametrize(
    ("human", "reason"),
    [
        ("Which is better?", "unparseable_prompt"),
        ("Look.\nResponse 1: x\nResponse 2: y", "unparseable_question"),
        ("Question: []\nResponse 1: x\nResponse 2: y", "empty_question"),
    ],
    ids=["no_markers", "no_question", "empty_question"],
)
def test_unparseable_human_turn_is_rejected_with_a_reason(human, reason):
    with pytest.raises(RecordError) as caught:
        parse_pair_prompt(human)
    assert caught.value.reason == reason


VERDICTS = {
    "better_response_first_bracketed": ("The better response: [The first response]", "1"),
    "better_response_second": ("Reasons...\nThe better response: [The second response]", "2"),
    "better_response_digit": ("The better response: 2", "2"),
    "better_response_letter": ("So the better response is: B", "2"),
    "first_is_better": ("Therefore, the first response is better.", "1"),
    "answer_2_is_better": ("Overall, Answer 2 is better than Answer 1.", "2"),
    "response_a_is_better": ("Response A is better.", "1"),
    "overall_judgment": ("Accuracy: ...\nOverall Judgment: Answer 2 is better", "2"),
    "arena_strong": ("My final verdict is: [[A>>B]]", "1"),
    "arena_weak_b": ("My final verdict is [[B>A]]", "2"),
    "arena_tie": ("My final verdict is tie: [[A=B]]", "tie"),
    "mt_bench_letter": ("[[B]]", "2"),
    "mt_bench_c_tie": ("[[C]]", "tie"),
    "equally_good": ("Both identify the dog. Two responses are equally good.", "tie"),
    "last_verdict_wins": ("Response 1 is better at detail, but Response 2 is better overall", "2"),
    "two_leading_scores": ("8 3\nAssistant 1 is accurate.", "1"),
    "two_leading_scores_second": ("6.5 9\nAssistant 2 is accurate.", "2"),
    "two_equal_scores": ("7 7\nBoth fine.", "tie"),
    "prefer_second": ("I prefer the second response.", "2"),
}


@pytest.mark.parametrize(("gpt", "expected"), VERDICTS.values(), ids=VERDICTS.keys())
def test_verdict_phrasings_map_to_the_preferred_index(gpt, expected):
    assert parse_pair_verdict(gpt) == expected


def test_gpt_turn_without_a_verdict_is_rejected():
    with pytest.raises(RecordError) as caught:
        parse_pair_verdict("Both responses have merits and flaws.")
    assert caught.value.reason == "unparseable_verdict"


POINTWISE = {
    "response_marker_out_of_100": (
        "Question: [What is shown?]\nThe response: [A red bus.]\nRate it out of 100.",
        "The response is accurate. Score: 85",
        ("What is shown?", "A red bus.", 85.0, 100),
    ),
    "assistant_block_slash_ten": (
        "[Question]\nWhat is shown?\n\n[The Start of Assistant's Answer]\nA red bus.\n"
        "[The End of Assistant's Answer]",
        "Accurate and brief. Rating: 8/10",
        ("What is shown?", "A red bus.", 8.0, 10),
    ),
    "double_bracket_score": (
        "Question: What is shown?\nResponse: A red bus.",
        "Good. [[7]]",
        ("What is shown?", "A red bus.", 7.0, 10),
    ),
}


@pytest.mark.parametrize(("human", "gpt", "expected"), POINTWISE.values(), ids=POINTWISE.keys())
def test_pointwise_rows_yield_response_score_and_scale(human, gpt, expected):
    question, response = parse_single_prompt(human)
    score, scale = parse_score(gpt, human)
    assert (question, response, score, scale) == expected


def test_score_outside_its_scale_is_a_bad_label():
    with pytest.raises(RecordError) as caught:
        parse_score("Score: 140", "Rate it out of 100.")
    assert caught.value.reason == "bad_label"


def test_every_generated_wording_round_trips_through_the_parser():
    from mmcritic_dev.raw_synth import raw_pairwise_rows

    for row in raw_pairwise_rows(50, ["x.png"], seed=1):
        human, gpt = (turn["value"] for turn in row["conversations"])
        truth = row["meta_truth"]
        assert parse_pair_prompt(human) == (truth["question"], *truth["responses"])
        assert parse_pair_verdict(gpt) == truth["better"]


@pytest.mark.parametrize(
    "human",
    [
        # the second marker in the question, before the first response
        "Question: Is Response 2: a thing?\nResponse 1: red.\nResponse 2: blue.\n",
        # the first marker quoted inside the first response
        "Question: What?\nResponse 1: red, unlike Response 1: said.\nResponse 2: blue.\n",
        # the second marker quoted inside the first response
        "Question: What?\nResponse 1: red, unlike Response 2: said.\nResponse 2: blue.\n",
    ],
    ids=["second_in_question", "first_quoted", "second_quoted"],
)
def test_a_marker_seen_twice_leaves_no_one_split(human):
    with pytest.raises(RecordError) as caught:
        parse_pair_prompt(human)
    assert caught.value.reason == "ambiguous_split"
