"""Voting@k: k sampled critiques per pair, the majority verdict and how settled it was, through
`Critic.compare`, `mmcritic critique --votes` and `mmcritic eval --critic-votes`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import cycle

import pytest
from PIL import Image

from mmcritic.cli import main
from mmcritic.eval.runner import EvalOptions, run_eval, samples_path
from mmcritic.inference import Critic, Media
from mmcritic.inference.engines import Request, Sampling
from mmcritic.inference.votes import majority_vote
from tests.test_eval_model import RecordingEngine, _recorded, _tiny_run, eval_data  # noqa: F401
from tests.test_inference import (
    BUDGET,
    PAIR,
    media_files,  # noqa: F401
    run_command,
)

BOXED = "<think>{}</think> \\boxed{{{}}}"


class TurnsBackend:
    """Gives each request the next texts of a fixed list, `sampling.n` of them (one sampled
    critique each), and keeps the samplings: the vote logic without a model's randomness."""

    def __init__(self, texts: Sequence[str]):
        self.texts = cycle(texts)
        self.samplings: list[Sampling] = []

    def generate(self, requests: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        self.samplings.append(sampling)
        return [[next(self.texts) for _ in range(sampling.n)] for _ in requests]


@pytest.fixture
def picture() -> Media:
    return Media.image(Image.new("RGB", (40, 30), "red"))


def test_the_majority_of_sampled_critiques_is_the_verdict(picture):
    backend = TurnsBackend([BOXED.format("a", 2), BOXED.format("b", 1), BOXED.format("c", 2)])
    critic = Critic(None, None, engine=backend, vote_temperature=0.7)
    judged = critic.compare(picture, *PAIR, votes=3)
    assert (judged.verdict, judged.reason, judged.votes) == ("2", "ok", ("2", "1", "2"))
    assert judged.vote_margin == pytest.approx(1 / 3)
    assert judged.rationale == "a", "the shown critique gave the winning verdict"
    assert (backend.samplings[0].n, backend.samplings[0].temperature) == (3, 0.7)


def test_a_split_vote_decides_nothing(picture):
    backend = TurnsBackend([BOXED.format("", 1), BOXED.format("", 2), "no verdict here"])
    judged = Critic(None, None, engine=backend).compare(picture, *PAIR, votes=3)
    assert (judged.verdict, judged.reason, judged.vote_margin) == (None, "split_vote", 0.0)
    assert judged.votes == ("1", "2", None)


def test_votes_on_the_swapped_pair_are_mapped_back_to_the_shown_order(picture):
    # the first order votes 1, 1, 2; the swapped order votes 2, 2, 2, i.e. "the first shown"
    # (response b) three times: mapped back, response a wins in neither
    texts = [BOXED.format("", v) for v in (1, 1, 2, 2, 2, 2)]
    backend = TurnsBackend(texts)
    judged = Critic(None, None, engine=backend).compare(picture, *PAIR, both_orders=True, votes=3)
    assert judged.votes == ("1", "1", "2") and judged.verdict == "1"
    assert judged.swapped_votes == ("1", "1", "1") and judged.swapped_verdict == "1"
    assert judged.agreement is True and judged.swapped_vote_margin == 1.0


def test_one_vote_is_one_greedy_critique(picture):
    backend = TurnsBackend([BOXED.format("", 1)])
    judged = Critic(None, None, engine=backend).compare(picture, *PAIR)
    assert judged.votes == () and judged.vote_margin is None
    assert (backend.samplings[0].n, backend.samplings[0].temperature) == (1, 0.0)


def test_majority_vote_counts_only_readable_critiques():
    assert majority_vote([None, None]).reason == "no_readable_vote"
    vote = majority_vote(["1", None, "1", "2", "1"])
    assert (vote.verdict, vote.margin, vote.counts) == ("1", 0.4, {"1": 3, "2": 1})
    with pytest.raises(ValueError):
        majority_vote([])


def test_the_tiny_model_samples_k_critiques_per_order(tiny_model_and_processor, media_files):  # noqa: F811
    critic = Critic(*tiny_model_and_processor, max_new_tokens=8)
    image = Media.image(media_files["image"], **BUDGET)
    judged = critic.compare(image, *PAIR, both_orders=True, votes=3)
    assert len(judged.votes) == 3 and len(judged.swapped_votes) == 3
    assert judged.vote_margin is not None


def test_critique_command_reports_the_votes(tiny_model_dir, media_files, capsys):  # noqa: F811
    question, a, b = PAIR
    flags = ["--image", str(media_files["image"]), "--question", question]
    flags += ["--response-a", a, "--response-b", b, "--votes", "3"]
    output = run_command(capsys, tiny_model_dir, "critique", *flags)
    assert len(output["votes"]) == 3 and "vote_margin" in output
    with pytest.raises(SystemExit):
        main(["critique", "--model", str(tiny_model_dir), *flags[:4], "--votes", "0"])


def test_eval_critic_votes_sample_k_critiques_and_score_the_majority(
    tiny_model_dir,
    eval_data,  # noqa: F811
    tmp_path,
):
    options = _tiny_run(tiny_model_dir, eval_data, tmp_path, ("vl_rewardbench",))
    options = EvalOptions(
        **{**options.__dict__, "limit": 2, "critic_votes": 3, "both_orders": True}
    )
    backend, engine = _recorded(options)
    run_eval(options, backend=backend)
    assert {(s.n, s.temperature) for s in engine.samplings} == {(3, 1.0)}
    lines = [json.loads(line) for line in samples_path(options.output, "vl_rewardbench").open()]
    assert all(len(line["votes"]) == 3 and len(line["swapped_votes"]) == 3 for line in lines)
    assert all(line["parsed"] == majority_vote(line["votes"]).verdict for line in lines)


def test_replayed_critiques_cannot_be_voted(tmp_path):
    with pytest.raises(ValueError, match="replay"):
        EvalOptions(
            model=f"replay:{tmp_path / 'saved.jsonl'}",
            tasks=("vl_rewardbench",),
            output=tmp_path,
            critic_votes=3,
        )
