"""A change of the readers is held to every corpus line: `benchmarks/scorer_agreement.py
--against` names each line whose agreement moved and fails when one that agreed no longer
does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mmcritic_dev.scorer_agreement import moved_lines

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "scorer_agreement.py"
REWARD_LINES = [
    {"completion": "<think>Two is right.</think>\n\\boxed{2}", "answer": "2"},
    {"completion": "<think>One is right.</think>\n\\boxed{1}", "answer": "1"},
]


def test_a_line_moves_when_its_agreement_changes_and_an_added_line_does_not() -> None:
    before = {"reward": [True, True], "chartqa": [False]}
    after = {"reward": [True, False, True], "chartqa": [True]}
    assert moved_lines(before, after) == [("reward", 2, False), ("chartqa", 1, True)]


def _run(corpus: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), "--corpus", str(corpus), *flags]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_the_script_fails_on_a_line_that_no_longer_agrees(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    lines = [{**line, "format": 1.0, "preference": 1.0} for line in REWARD_LINES]
    (corpus / "reward.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    saved = tmp_path / "agrees.json"
    first = _run(corpus, "--save", str(saved))
    assert first.returncode == 0 and json.loads(saved.read_text()) == {"reward": [True, True]}
    unchanged = _run(corpus, "--against", str(saved))
    assert unchanged.returncode == 0 and "0 lines moved" in unchanged.stdout
    lines[1]["preference"] = 0.0  # the same output now labelled otherwise: line 2 disagrees
    (corpus / "reward.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    moved = _run(corpus, "--against", str(saved))
    assert moved.returncode == 1 and "reward line 2 NO LONGER AGREES" in moved.stdout
