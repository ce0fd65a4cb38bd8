"""A change of the readers is held to the corpus's outputs rewritten the ways real outputs vary:
`benchmarks/reading_variants.py --against` names each rewrite read differently and fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mmcritic_dev import reading_variants
from mmcritic_dev.reading_variants import VARIANTS, changed_readings, variant_readings

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "reading_variants.py"
CORPUS = Path(__file__).parent / "fixtures" / "scoring"


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    """Twenty lines each of a choice, a yes/no and a critic corpus."""
    for name in ("mmstar", "hallusionbench", "critic_verdicts"):
        lines = (CORPUS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()[:20]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_every_variant_rewrites_the_output() -> None:
    output = "<think>It is red.</think>\nThe answer is (B) red, since the ball is red."
    for name, rewrite in VARIANTS.items():
        assert rewrite(output, "No.") != output, name


def test_the_same_readers_read_every_rewrite_alike(small_corpus: Path) -> None:
    first, second = variant_readings(small_corpus), variant_readings(small_corpus)
    assert {name: len(lines) for name, lines in first.items()} == dict.fromkeys(first, 20)
    assert all(len(variants) == len(VARIANTS) for lines in first.values() for variants in lines)
    assert changed_readings(first, second) == []


def test_a_reader_that_reads_otherwise_changes_the_rewrites_it_reads(
    small_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = variant_readings(small_corpus)
    real = reading_variants.reading

    def no_critic_verdict(name: str, number: int, line: dict, text: str) -> object:
        return [None, None] if name == "critic_verdicts" else real(name, number, line, text)

    monkeypatch.setattr(reading_variants, "reading", no_critic_verdict)
    changed = changed_readings(before, variant_readings(small_corpus))
    assert changed and {name for name, *_ in changed} == {"critic_verdicts"}
    read_before = sum(v != [None, None] for line in before["critic_verdicts"] for v in line)
    assert len(changed) == read_before


def test_the_script_fails_on_a_rewrite_read_otherwise(small_corpus: Path, tmp_path: Path) -> None:
    readings = variant_readings(small_corpus)
    readings["mmstar"][0][0] = "not a score"
    saved = tmp_path / "readings.json"
    saved.write_text(json.dumps(readings))
    run = [sys.executable, str(SCRIPT), "--corpus", str(small_corpus), "--against", str(saved)]
    failed = subprocess.run(run, capture_output=True, text=True, check=False)
    assert failed.returncode == 1, failed.stderr
    assert "changed: mmstar line 1 cut_off" in failed.stdout
    assert "1 rewrites read differently" in failed.stdout


def test_readings_of_another_corpus_are_an_error_not_fewer_changes(small_corpus: Path) -> None:
    readings = variant_readings(small_corpus)
    for shorter in (
        {**readings, "mmstar": readings["mmstar"][:-1]},
        {"mmstar": readings["mmstar"]},
    ):
        with pytest.raises(ValueError, match="readings of another corpus"):
            changed_readings(shorter, readings)
