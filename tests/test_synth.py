"""Synthetic tasks: truth known by construction, balanced labels, real media files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mmcritic.data.prompts import reasoned_answer
from mmcritic.data.synth import COLORS, synthesize
from mmcritic.rewards.answers import as_judged
from mmcritic.rewards.parsing import VERDICT_MARKER


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "data.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("task", ["color", "count", "motion"])
def test_synthetic_dataset_has_the_dataset_layout(tmp_path, task):
    stats = synthesize(task, 10, tmp_path / task, seed=1)
    assert stats["written"] == 10 and stats["reconciles"]
    assert stats["label_balance"] == {"1": 5, "2": 5}
    assert json.loads((tmp_path / task / "stats.json").read_text()) == stats
    for record in records(tmp_path / task):
        media = record["videos"] if task == "motion" else record["images"]
        assert len(media) == 1 and (tmp_path / task / media[0]).is_file()
        assert record["meta"]["rationale"]


def test_correct_response_sits_at_the_answer_index(tmp_path):
    synthesize("color", 12, tmp_path, seed=2)
    for record in records(tmp_path):
        correct = f"The shape is {record['meta']['color']}."
        assert record["meta"]["responses"][int(record["answer"]) - 1] == correct


@pytest.mark.parametrize("task", ["color", "count"])
def test_reasoned_responses_are_the_policy_answers_as_the_critic_is_shown_them(tmp_path, task):
    # the same seed draws the same images for pairs and questions, item by item
    synthesize(task, 8, tmp_path / "pairs", seed=4, responses="reasoned")
    synthesize(task, 8, tmp_path / "questions", seed=4, kind="verifiable")
    pairs, questions = records(tmp_path / "pairs"), records(tmp_path / "questions")
    for pair, question in zip(pairs, questions, strict=True):
        responses = pair["meta"]["responses"]
        right = responses[int(pair["answer"]) - 1]
        wrong = responses[2 - int(pair["answer"])]
        # what SFT teaches a policy to answer this question, as a critic is shown it
        taught = as_judged(reasoned_answer(question["meta"]["rationale"], question["answer"]))
        assert right == taught
        assert wrong.endswith(f"Final answer: {pair['meta']['wrong']}")
        # the wrong response states the wrong observation, not the right one
        assert f" {question['answer']}" not in wrong.split("\n")[0]
        assert not VERDICT_MARKER.search(right + wrong)


def test_colour_image_shows_the_colour_its_truth_names(tmp_path):
    synthesize("color", 6, tmp_path, seed=3)
    for record in records(tmp_path):
        pixels = np.asarray(Image.open(tmp_path / record["images"][0]).convert("RGB"))
        colours = {tuple(p) for p in pixels.reshape(-1, 3)}
        assert COLORS[record["meta"]["color"]] in colours


def test_motion_video_moves_the_dot_in_the_named_direction(tmp_path):
    import av

    synthesize("motion", 4, tmp_path, seed=4)
    for record in records(tmp_path):
        with av.open(str(tmp_path / record["videos"][0])) as container:
            frames = [f.to_ndarray(format="gray") for f in container.decode(video=0)]
        first, last = (np.argwhere(frame > 128).mean(axis=0) for frame in (frames[0], frames[-1]))
        dy, dx = last - first
        direction = record["meta"]["direction"]
        expected = {"left": dx < -10, "right": dx > 10, "up": dy < -10, "down": dy > 10}
        assert expected[direction], (direction, dx, dy)


def test_ties_are_both_correct_and_answered_tie(tmp_path):
    stats = synthesize("count", 10, tmp_path, seed=5, tie_fraction=0.3)
    assert stats["label_balance"]["tie"] == 3
    for record in records(tmp_path):
        if record["answer"] == "tie":
            assert all(str(record["meta"]["count"]) in r for r in record["meta"]["responses"])
            assert "equally good" in record["meta"]["rationale"]


def test_same_seed_gives_the_same_dataset(tmp_path):
    synthesize("count", 8, tmp_path / "a", seed=7)
    synthesize("count", 8, tmp_path / "b", seed=7)
    assert (tmp_path / "a/data.jsonl").read_text() == (tmp_path / "b/data.jsonl").read_text()


def test_existing_folder_is_not_overwritten_silently(tmp_path):
    synthesize("color", 2, tmp_path)
    with pytest.raises(FileExistsError):
        synthesize("color", 2, tmp_path)
    assert synthesize("color", 3, tmp_path, overwrite=True)["written"] == 3


def test_unknown_task_lists_the_valid_ones(tmp_path):
    with pytest.raises(ValueError, match="valid tasks"):
        synthesize("shapes", 2, tmp_path)


def test_narrow_palette_draws_only_its_colours(tmp_path):
    synthesize("color", 12, tmp_path, seed=8, colors=2)
    records = [json.loads(line) for line in (tmp_path / "data.jsonl").open()]
    used = {record["meta"][key] for record in records for key in ("color", "wrong")}
    assert used == set(list(COLORS)[:2])


def test_palette_of_one_colour_is_refused(tmp_path):
    with pytest.raises(ValueError, match="colors must be between 2"):
        synthesize("color", 2, tmp_path, colors=1)
