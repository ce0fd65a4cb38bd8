"""Every scorer, and the training reward, against realistic outputs labelled by a careful
grader (tests/fixtures/scoring; see mmcritic_dev/scorer_agreement.py for the format)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmcritic_dev.scorer_agreement import corpus_agreement, policy_score, read_corpus

CORPUS = Path(__file__).parent / "fixtures" / "scoring"
CORPORA = sorted(CORPUS.glob("*.jsonl"))
MIN_LINES = 40
MIN_AGREEMENT = 0.97


@pytest.mark.parametrize("path", CORPORA, ids=[path.stem for path in CORPORA])
def test_scorer_agrees_with_the_careful_grader(path: Path) -> None:
    lines = read_corpus(path)
    assert len(lines) >= MIN_LINES
    result = corpus_agreement(path.stem, lines)
    shown = "\n".join(str(miss) for miss in result.misses)
    assert result.rate >= MIN_AGREEMENT, f"{result.agreed}/{result.total} agree:\n{shown}"


def test_the_corpora_cover_both_labels() -> None:
    for path in CORPORA:
        labels = {
            float(line.get("label", line.get("preference", 0))) > 0 for line in read_corpus(path)
        }
        assert labels == {True, False}, path.stem


def test_a_corpus_line_is_scored_by_the_task_scorer() -> None:
    row = {
        "index": 0,
        "question": "Which animal?\nOptions: A: cat, B: dog",
        "answer": "B",
        "category": "coarse perception",
        "l2_category": "image scene and topic",
    }
    assert policy_score("mmstar", row, "The correct choice is:\n\n**B**") == 1.0
    assert policy_score("mmstar", row, "A") == 0.0
