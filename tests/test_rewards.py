from __future__ import annotations

import logging
import pickle
import re

import pytest
import torch
from hypothesis import event, given, settings
from hypothesis import strategies as st

from mmcritic.reading.markup import boxed_contents
from mmcritic.rewards import (
    REASONS,
    RewardWeights,
    Verdict,
    completion_text,
    format_reward,
    has_think_box_format,
    normalize_choice,
    normalize_tags,
    parse_verdict,
    preference_reward,
    reward_plan,
    training_rewards,
    verdict_reasons,
    weighted_total,
)
from mmcritic.rewards.answers import parse_score

REFERENCE_FORMAT = re.compile(r"<think>.*</think>.*\\boxed\{.*\}.*", re.DOTALL)


def chat(text: str) -> list[dict]:
    return [{"role": "assistant", "content": text}]


# --- normalize_tags -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("< think >a</ think >", "<think>a</think>"),
        ("<think >a< /think>", "<think>a</think>"),
        ("<  think>a<\n/\tthink\n>", "<think>a</think>"),
        ("< / think >", "</think>"),
        ("<think>a</think>", "<think>a</think>"),
    ],
    ids=["spaced-both", "space-before-slash", "newlines-and-tabs", "spaced-close", "already-tight"],
)
def test_whitespace_around_tag_brackets_is_ignored(text, expected):
    assert normalize_tags(text) == expected


@pytest.mark.parametrize(
    "text",
    ["a < b > c", "x / y", "1 < 2 and 3 > 2", "< thinking >", "<Think>", "\\boxed{ 2 }"],
    ids=["comparison", "division", "inequalities", "other-tag", "other-case", "box"],
)
def test_text_outside_think_tags_is_untouched(text):
    assert normalize_tags(text) == text


# --- boxed_contents -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\boxed{2}", ["2"]),
        ("a \\boxed{1} b \\boxed{2} c", ["1", "2"]),
        ("\\boxed{\\text{2}}", ["\\text{2}"]),
        ("\\boxed{\\frac{1}{2}}", ["\\frac{1}{2}"]),
        ("\\boxed {2}", ["2"]),
        ("\\boxed\n{2}", ["2"]),
        ("\\boxed{2", []),
        ("\\boxed{ unclosed \\boxed{1}", ["1"]),
        ("\\boxed{1} \\boxed{2", ["1"]),
        ("\\boxed{\\boxed{2}}", ["\\boxed{2}"]),
        ("\\boxed{\\{a\\}}", ["\\{a\\}"]),
        ("} \\boxed{2} }", ["2"]),
        ("\\boxed{}", [""]),
        ("no box here {1}", []),
        ("\\boxedx{2}", []),
    ],
    ids=[
        "single",
        "several-in-order",
        "nested-macro",
        "nested-fraction",
        "space-before-brace",
        "newline-before-brace",
        "unclosed",
        "unclosed-outer-keeps-inner",
        "closed-then-unclosed",
        "box-in-box-is-one-entry",
        "escaped-braces-are-literal",
        "stray-closing-braces",
        "empty",
        "plain-braces",
        "other-macro",
    ],
)
def test_boxed_contents_match_braces(text, expected):
    assert boxed_contents(text) == expected


# --- normalize_choice -----------------------------------------------------------------------

NORMALISED = [
    ("2", "2"),
    (" 2 ", "2"),
    ("1", "1"),
    ("\\text{2}", "2"),
    ("\\textbf{2}", "2"),
    ("\\mathrm{2}", "2"),
    ("\\text{Response 2}", "2"),
    ("$2$", "2"),
    ("**2**", "2"),
    ("Response 2", "2"),
    ("response 2", "2"),
    ("Answer 2", "2"),
    ("Assistant 2", "2"),
    ("Option #1", "1"),
    ("[2]", "2"),
    ("(2)", "2"),
    ("2.", "2"),
    ("2)", "2"),
    ("second", "2"),
    ("Second", "2"),
    ("The second response", "2"),
    ("the first one", "1"),
    ("2nd", "2"),
    ("A", "1"),
    ("B", "2"),
    ("Response B", "2"),
    ("[[B]]", "2"),
    ("$\\boxed{\\textbf{[[B]]}}$.", "2"),
    ("tie", "tie"),
    ("Tie", "tie"),
    ("\\text{tie}", "tie"),
    ("it's a tie", "tie"),
    ("equal", "tie"),
    ("equally good", "tie"),
    ("Both are equally good", "tie"),
    ("both", "tie"),
    ("C", "tie"),
    ("[[C]]", "tie"),
    # an index spelled out, in any language with a data file (mmcritic/reading/languages)
    ("one", "1"),
    ("Two", "2"),
    ("Response one", "1"),
    ("\\text{two}", "2"),
    ("deux", "2"),
    ("二", "2"),
    # a verdict stated in words inside the box
    ("Response 1 is better", "1"),
    ("Response 2 is better than Response 1", "2"),
    ("Response 1 is worse", "2"),
    # the response's noun in another language
    ("Respuesta 1", "1"),
    ("Antwort 2", "2"),
    ("回答2", "2"),
    # a response named by its place, in any language, with its counter
    ("第二个回答", "2"),
    ("第一个", "1"),
    ("la deuxième réponse", "2"),
    ("la primera respuesta", "1"),
    ("die zweite Antwort", "2"),
    ("두 번째 응답", "2"),
]


@pytest.mark.parametrize(("raw", "expected"), NORMALISED, ids=[raw for raw, _ in NORMALISED])
def test_normalised_forms_map_to_index(raw, expected):
    assert normalize_choice(raw) == expected


AMBIGUOUS = [
    "12",
    "21",
    "1 or 2",
    "2 and 1",
    "1,2",
    "1 2",
    "1/2",
    "\\frac{1}{2}",
    "A>A",
    "A>B",
    "one or two",
    "Response 1 or Response 2 is better",
    "Response 1 and Response 2",
    # a verdict with a source is a sentence, not a verdict form (the reward stays strict)
    "Response 1, according to the label at the top",
    "Response 1 is better in clarity",
    "Response C",
    "第三个回答",
    "the second best",
    "3",
    "",
    "   ",
    "x" * 1000,
]


@pytest.mark.parametrize("raw", AMBIGUOUS, ids=[raw[:20] or "empty" for raw in AMBIGUOUS])
def test_ambiguous_box_is_no_verdict(raw):
    assert normalize_choice(raw) is None


# --- parse_verdict --------------------------------------------------------------------------

VERDICT_CASES = [
    ("<think>hm</think> \\boxed{2}", "2", "ok"),
    ("\\boxed{2}", "2", "ok"),
    ("< think >hm</ think > \\boxed{1}", "1", "ok"),
    ("<think>\\boxed{1}</think> \\boxed{2}", "2", "ok"),
    ("<think>a</think><think>\\boxed{1}</think> \\boxed{2}", "2", "ok"),
    ("<think>a</think> \\boxed{2} then \\boxed{Response 2}", "2", "ok"),
    ("<think>a</think> \\boxed{x=3} so \\boxed{2}", "2", "ok"),
    ("no closing think tag but reasoning</think> \\boxed{1}", "1", "ok"),
    ("<think>a</think> \\boxed{\\text{tie}}", "tie", "ok"),
    ("<think>a</think> \\boxed{2.0}", "2", "ok"),
    ("<think>a</think> \\boxed{01}", "1", "ok"),
]


@pytest.mark.parametrize(
    ("text", "choice", "reason"),
    VERDICT_CASES,
    ids=[
        "think-then-box",
        "bare-box-without-think",
        "spaced-tags",
        "box-in-think-is-ignored",
        "after-last-think-close",
        "same-verdict-twice",
        "non-verdict-box-does-not-conflict",
        "template-opened-think",
        "tie",
        "decimal-index",
        "zero-padded-index",
    ],
)
def test_verdict_is_last_box_after_think(text, choice, reason):
    verdict = parse_verdict(text)
    assert (verdict.choice, verdict.reason, verdict.ok) == (choice, reason, True)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<think>I pick \\boxed{2}</think> done", "box_only_in_think"),
        ("<think>I pick \\boxed{2}< / think > done", "box_only_in_think"),
        ("<think>I pick \\boxed{2}</think>", "box_only_in_think"),
    ],
    ids=["plain", "spaced-close-tag", "nothing-after-think"],
)
def test_box_only_inside_think_is_no_verdict(text, reason):
    assert parse_verdict(text) == Verdict(None, None, reason)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<think>a</think> \\boxed{1} \\boxed{2}", "conflicting_boxes"),
        ("<think>a</think> \\boxed{1} \\boxed{tie} \\boxed{1}", "conflicting_boxes"),
        ("<think>a</think>\\boxed{1}</think>\\boxed{2}", "conflicting_boxes"),
        ("<think>still thinking \\boxed{2}", "unclosed_think"),
        ("<think>a</think> the answer is 2", "no_box"),
        ("", "no_box"),
        ("<think>a</think> \\boxed{2", "no_box"),
        ("<think>a</think> \\boxed{12}", "unrecognised"),
        ("<think>a</think> \\boxed{2} \\boxed{1 or 2}", "unrecognised"),
    ],
    ids=[
        "two-different-verdicts",
        "different-then-repeated",
        "different-verdicts-around-a-stray-think-close",
        "unclosed-think",
        "no-box",
        "empty",
        "unclosed-box",
        "ambiguous-box",
        "last-box-unrecognised",
    ],
)
def test_missing_verdict_reports_reason(text, reason):
    verdict = parse_verdict(text)
    assert (verdict.choice, verdict.reason, verdict.ok) == (None, reason, False)
    assert verdict.reason in REASONS


def test_verdict_keeps_the_raw_box_used():
    assert parse_verdict("<think>a</think> \\boxed{ Response 2 }").raw == " Response 2 "


# --- has_think_box_format -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>a</think>\\boxed{2}", True),
        ("<think>a\nb</think>\nso\n\\boxed{2}\ndone", True),
        ("  <think>a</think>\\boxed{2}\n", True),
        ("< think >a</ think >\\boxed{2}", True),
        ("<think></think>\\boxed{}", True),
        ("<think>\\boxed{2}</think>", False),
        ("\\boxed{2}", False),
        ("preamble <think>a</think>\\boxed{2}", False),
        ("<think>a</think>\\boxed{2", False),
        ("<think>a \\boxed{2}", False),
        ("<think>a</think>\\boxed {2}", False),
    ],
    ids=[
        "minimal",
        "multiline",
        "surrounding-whitespace",
        "spaced-tags",
        "empty-parts",
        "box-inside-think",
        "no-think",
        "text-before-think",
        "unclosed-box",
        "unclosed-think",
        "space-before-brace-as-in-reference-regex",
    ],
)
def test_format_requires_think_then_box(text, expected):
    assert has_think_box_format(text) is expected


FRAGMENTS = st.sampled_from(
    [
        *["<think>", "</think>", "< think >", "</ think>", "\\boxed{", "\\boxed {", "{", "}"],
        *["\\{", "1", "2", "tie", "B", "Response ", " ", "\n", "<", ">", "/", "\\", "x"],
    ]
)
JUNK = st.lists(st.one_of(FRAGMENTS, st.text(max_size=5)), max_size=10).map("".join)
SKELETON = ("<think>", "</think>", "\\boxed{", "}")


@st.composite
def near_answers(draw) -> str:
    """The skeleton of a well-formed answer with junk between its pieces and some pieces
    dropped: real matches and near misses, which pure junk would rarely produce."""
    parts = [draw(st.sampled_from(["", " \n"]) | JUNK)]
    for piece in SKELETON:
        if draw(st.sampled_from([True, True, True, False])):
            parts.append(piece)
        parts.append(draw(JUNK))
    return "".join(parts)


ADVERSARIAL_TEXT = JUNK | near_answers()


@settings(max_examples=300, deadline=None)
@given(ADVERSARIAL_TEXT)
def test_format_check_agrees_with_reference_regex(text):
    expected = REFERENCE_FORMAT.fullmatch(normalize_tags(text).strip()) is not None
    event(f"reference matches: {expected}")
    assert has_think_box_format(text) is expected


# --- rewards --------------------------------------------------------------------------------

RIGHT_FORMAT_RIGHT = "<think>2 is more faithful</think> \\boxed{2}"
RIGHT_FORMAT_WRONG = "<think>1 is more faithful</think> \\boxed{1}"
WRONG_FORMAT_RIGHT = "The better one is \\boxed{2}"
WRONG_FORMAT_WRONG = "I cannot decide."
COMBINATIONS = [
    (RIGHT_FORMAT_RIGHT, 1.0, 1.0, 1.0),
    (WRONG_FORMAT_RIGHT, 0.0, 1.0, 0.9),
    (RIGHT_FORMAT_WRONG, 1.0, 0.0, 0.1),
    (WRONG_FORMAT_WRONG, 0.0, 0.0, 0.0),
]
COMBINATION_IDS = ["format-and-answer", "answer-only", "format-only", "neither"]


@pytest.mark.parametrize(("text", "fmt", "pref", "combined"), COMBINATIONS, ids=COMBINATION_IDS)
def test_format_and_preference_rewards_are_independent(text, fmt, pref, combined):
    assert format_reward([text]) == [fmt]
    assert preference_reward([text], answer=["2"]) == [pref]
    assert _training_total([text], ["2"], 0.1) == [pytest.approx(combined)]


def _training_total(texts: list[str], answer: list, format_weight: float) -> list[float]:
    """The total reward GRPO gives each completion: every training reward function, weighted
    by the GRPOConfig's reward_weights as TRL sums them."""
    columns = [reward(texts, answer=answer, prompts=None) for reward in critic_rewards()]
    per_function = torch.tensor(columns, dtype=torch.float32).T
    weights = torch.tensor(critic_weights(format_weight), dtype=torch.float32)
    return weighted_total(per_function, weights).tolist()


def critic_rewards() -> list:
    """The reward functions a critic run (pairwise records) trains with."""
    return training_rewards(RewardWeights(), ["pairwise"])[0]


def critic_weights(format_weight: float) -> list[float]:
    return [weight for _, weight in reward_plan(RewardWeights(format_weight), ["pairwise"])]


def test_training_runs_preference_then_format_under_stable_names():
    assert [reward.__name__ for reward in critic_rewards()] == ["preference", "format"]
    assert critic_weights(0.1) == [0.9, 0.1]


def test_the_weighted_total_is_what_trl_computes_for_its_advantages():
    """TRL's `_generate_and_score_completions` sums `rewards_per_func * reward_weights` with
    `nansum` (a reward function returning None for a sample gives NaN)."""
    import inspect

    from trl import GRPOTrainer

    source = inspect.getsource(GRPOTrainer._generate_and_score_completions)
    assert (
        "(rewards_per_func * self.reward_weights.to(device).unsqueeze(0)).nansum(dim=1)" in source
    )
    per_function = torch.tensor([[1.0, float("nan")], [0.0, 1.0]])
    assert weighted_total(per_function, torch.tensor([0.9, 0.1])).tolist() == pytest.approx(
        [0.9, 0.1]
    )


def test_two_different_boxed_verdicts_score_zero_preference():
    text = "<think>hm</think> \\boxed{1} or maybe \\boxed{2}"
    assert preference_reward([text], answer=["2"]) == [0.0]
    assert format_reward([text]) == [1.0]


def test_box_only_inside_think_scores_zero_preference():
    assert preference_reward(["<think>\\boxed{2}</think> done"], answer=["2"]) == [0.0]


@pytest.mark.parametrize(
    ("weight", "expected"),
    [(0.0, [1.0, 1.0, 0.0, 0.0]), (1.0, [1.0, 0.0, 1.0, 0.0]), (0.25, [1.0, 0.75, 0.25, 0.0])],
    ids=["preference-only", "format-only", "quarter"],
)
def test_custom_format_weight(weight, expected):
    texts = [text for text, *_ in COMBINATIONS]
    assert _training_total(texts, [2] * 4, weight) == pytest.approx(expected)


def test_training_rewards_pickle_for_data_loading_workers():
    restored = pickle.loads(pickle.dumps(critic_rewards()))
    assert [reward([RIGHT_FORMAT_WRONG], answer=["2"]) for reward in restored] == [[0.0], [1.0]]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("1", "\\boxed{1}"),
        (1, "\\boxed{1}"),
        (2, "\\boxed{Response 2}"),
        ("tie", "\\boxed{tie}"),
        ("Tie", "\\boxed{\\text{equal}}"),
        ("B", "\\boxed{2}"),
    ],
    ids=["str", "int-1", "int-2", "tie", "tie-variant", "letter"],
)
def test_ground_truth_is_normalised_like_the_verdict(answer, text):
    assert preference_reward([text], answer=[answer]) == [1.0]


def test_tie_verdict_does_not_match_an_index():
    assert preference_reward(["\\boxed{tie}", "\\boxed{1}"], answer=["1", "tie"]) == [0.0, 0.0]


@pytest.mark.parametrize("bad", ["7", "", None, True, "1 or 2"], ids=repr)
def test_ground_truth_that_cannot_be_normalised_raises(bad):
    for reward in (preference_reward, *critic_rewards()[:1]):
        with pytest.raises(ValueError, match=re.escape(f"answer[1] = {bad!r}")):
            reward(["\\boxed{1}", "\\boxed{1}"], answer=["1", bad])


def test_answer_count_must_match_completions():
    with pytest.raises(ValueError, match="2 answers for 1 completions"):
        preference_reward(["\\boxed{1}"], answer=["1", "2"])


# --- completion shapes and kwargs -----------------------------------------------------------

TEXTS = [text for text, *_ in COMBINATIONS]


@pytest.mark.parametrize(
    "to_completion",
    [
        chat,
        lambda text: [{"role": "assistant", "content": [{"type": "text", "text": text}]}],
        lambda text: [
            {"role": "assistant", "content": [{"type": "image"}, {"type": "text", "text": text}]}
        ],
    ],
    ids=["string-content", "text-parts", "image-and-text-parts"],
)
def test_string_and_chat_completions_get_the_same_rewards(to_completion):
    completions = [to_completion(text) for text in TEXTS]
    answer = ["2"] * len(TEXTS)
    assert [completion_text(c) for c in completions] == TEXTS
    for reward in (format_reward, preference_reward, *critic_rewards()):
        assert reward(completions, answer=answer) == reward(TEXTS, answer=answer)


def test_extra_trl_kwargs_are_ignored():
    extra = {
        "prompts": [chat("which is better?")] * 4,
        "completion_ids": [[1, 2, 3]] * 4,
        "trainer_state": object(),
        "images": [None] * 4,
        "log_metric": print,
        "id": ["a", "b", "c", "d"],
    }
    answer = ["2"] * 4
    assert format_reward(TEXTS, answer=answer, **extra) == [1.0, 0.0, 1.0, 0.0]
    assert preference_reward(TEXTS, answer=answer, **extra) == [1.0, 1.0, 0.0, 0.0]
    assert _training_total(TEXTS, answer, 0.1) == pytest.approx([1.0, 0.9, 0.1, 0.0])


@pytest.mark.parametrize(
    "completion",
    [
        [{"role": "assistant", "content": None}],
        [{"role": "assistant"}],
        [{"role": "assistant", "content": [{"type": "text", "text": None}, None, 3]}],
        [],
        None,
        42,
    ],
    ids=["none-content", "missing-content", "junk-parts", "no-messages", "none", "int"],
)
def test_junk_completion_is_empty_text(completion):
    assert completion_text(completion) == ""
    assert _training_total([completion], ["1"], 0.1) == [0.0]


def test_multiple_messages_are_read_in_order():
    completion = [
        {"role": "assistant", "content": "<think>a</think>"},
        {"role": "assistant", "content": "\\boxed{1}"},
    ]
    assert _training_total([completion], ["1"], 0.1) == pytest.approx([1.0])


# --- diagnostics ----------------------------------------------------------------------------


def test_verdict_reasons_count_parse_outcomes():
    completions = [
        RIGHT_FORMAT_RIGHT,
        chat(RIGHT_FORMAT_WRONG),
        WRONG_FORMAT_WRONG,
        "<think>\\boxed{1}</think>",
        "\\boxed{1}\\boxed{2}",
    ]
    assert verdict_reasons(completions) == {
        "ok": 2,
        "no_box": 1,
        "box_only_in_think": 1,
        "conflicting_boxes": 1,
    }


def test_parse_failures_are_logged_at_debug(caplog):
    with caplog.at_level(logging.DEBUG, logger="mmcritic.rewards.critic"):
        preference_reward([WRONG_FORMAT_WRONG, RIGHT_FORMAT_RIGHT], answer=["1", "2"])
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 1
    assert "completion 0" in messages[0]
    assert "no_box" in messages[0]
    assert caplog.records[0].levelno == logging.DEBUG


# --- robustness -----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(ADVERSARIAL_TEXT, min_size=1, max_size=4), as_chat=st.booleans())
def test_rewards_never_raise_and_stay_in_unit_interval(texts, as_chat):
    completions = [chat(text) for text in texts] if as_chat else texts
    answer = ["1", "2", "tie", 2][: len(texts)]
    for reward in (format_reward, preference_reward, *critic_rewards()):
        values = reward(completions, answer=answer, prompts=None)
        assert len(values) == len(texts)
        assert all(0.0 <= value <= 1.0 for value in values)
    assert sum(verdict_reasons(completions).values()) == len(texts)


ADVERSARIAL = {
    "open-boxes": "<think>" + "\\boxed{" * 50000,
    "nested-closed-boxes": "\\boxed{" * 25000 + "}" * 25000,
    "spaced-open-tag": "<" + " " * 200000,
    "tag-fragments": "< / " * 50000,
    "think-pairs": "<think></think>" * 14000,
    "conflicting-boxes": "</think>" + "\\boxed{1}\\boxed{2}" * 12000,
    "braces": "{" * 100000 + "}" * 100000,
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_long_adversarial_completion_is_parsed(text):
    # No time assertion: a catastrophic regex would hang here, and that is the failure signal.
    assert len(text) >= 200000
    completions = [text, chat(text)]
    assert len(_training_total(completions, ["1", "2"], 0.1)) == 2
    verdict_reasons(completions)


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("<think>Accurate, one slip.</think>\\boxed{7 Out of 10}", (7.0, "ok")),
        ("<think>Close.</think>\\boxed{**$8/10$**.}", (8.0, "ok")),
        ("<think>Good.</think>\\boxed{seven}", (None, "unrecognised")),
        ("<think>Good.</think> Score: 7", (None, "no_box")),
    ],
)
def test_a_pointwise_score_is_read_in_the_form_answers_are_voted_in(completion, expected):
    assert parse_score(completion) == expected
