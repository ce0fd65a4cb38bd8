"""One sample never stops an eval: bad benchmark rows are rejected with their reason, a response
that breaks a scorer is recorded with its error, and a resumed run neither stops at them again
nor counts them twice. The same inputs give a one-line error to `mmcritic critique`."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest

from mmcritic.cli import main
from mmcritic.eval import runner
from mmcritic.eval.runner import REJECTED_ROWS, EvalOptions, run_eval, samples_path
from tests.media_factory import write_png


def _declared_huge_png(path: Path, side: int = 30_000) -> Path:
    """A valid PNG whose header declares side x side pixels: decoders refuse or exhaust on it."""
    write_png(path, (8, 8))
    data = bytearray(path.read_bytes())
    header = struct.pack(">II", side, side) + bytes(data[24:29])
    data[16:29] = header
    data[29:33] = struct.pack(">I", zlib.crc32(b"IHDR" + header))
    path.write_bytes(bytes(data))
    return path


@pytest.fixture
def bad_benchmark(tmp_path: Path) -> Path:
    """ChartQA rows of every bad kind between good ones, media beside the file."""
    folder = tmp_path / "chartqa"
    write_png(folder / "good.png")
    (folder / "empty.png").write_bytes(b"")
    (folder / "garbage.png").write_bytes(b"\x89PNG not really" * 20)
    _declared_huge_png(folder / "huge.png")
    rows = [
        {"question": "What percentage likes tea?", "answer": "12", "image": "good.png"},
        {"question": "No answer here?", "answer": None, "image": "good.png"},
        {"question": "Empty answer?", "answer": "", "image": "good.png"},
        {"question": "An empty file?", "answer": "3", "image": "empty.png"},
        {"question": "Garbage bytes?", "answer": "4", "image": "garbage.png"},
        {"question": "A huge picture?", "answer": "5", "image": "huge.png"},
        {"question": "A missing file?", "answer": "6", "image": "missing.png"},
        {"question": "How many units?", "answer": "1000", "image": "good.png"},
    ]
    path = folder / "test.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _options(model: Path, data: Path, out: Path, **kwargs) -> EvalOptions:
    return EvalOptions(
        model=str(model),
        tasks=("chartqa",),
        output=out,
        task_data={"chartqa": str(data)},
        batch_size=3,
        max_new_tokens=4,
        device="cpu",
        show_progress=False,
        **kwargs,
    )


def test_every_bad_row_is_rejected_with_its_reason_and_the_good_ones_are_scored(
    tiny_model_dir, bad_benchmark, tmp_path
) -> None:
    out = tmp_path / "run"
    results = run_eval(_options(tiny_model_dir, bad_benchmark, out))

    task = results["tasks"]["chartqa"]
    assert task["n_samples"] == 2 and task["n_rejected"] == 6
    assert task["rejected_doc_ids"] == [1, 2, 3, 4, 5, 6]
    rejected = [json.loads(line) for line in (out / REJECTED_ROWS).read_text().splitlines()]
    reasons = {line["doc_id"]: line["rejected"] for line in rejected}
    assert "holds null for 'answer'" in reasons[1] and "no gold answer" in reasons[2]
    assert all(reasons[doc].startswith("media: ") for doc in (3, 4, 5))
    assert "DecompressionBomb" in reasons[5]
    assert "missing.png" in reasons[6]
    assert all(line["task"] == "chartqa" for line in rejected)
    questions = [line["row"]["question"] for line in rejected[:2]]
    assert questions == ["'No answer here?'", "'Empty answer?'"]
    assert all("?" in line["prompt"] for line in rejected[2:])

    again = run_eval(_options(tiny_model_dir, bad_benchmark, out, resume=True))
    assert again["tasks"]["chartqa"]["n_rejected"] == 6
    assert len((out / REJECTED_ROWS).read_text().splitlines()) == 6
    assert len(samples_path(out, "chartqa").read_text().splitlines()) == 8


def test_a_response_that_breaks_scoring_is_recorded_and_the_run_goes_on(
    tiny_model_dir, bad_benchmark, tmp_path, monkeypatch
) -> None:
    reading = runner.final_answer
    broken: list[str] = []

    def breaks_once(response: str) -> str:
        if not broken:
            broken.append(response)
            raise OverflowError("int too large to convert to float")
        return reading(response)

    monkeypatch.setattr(runner, "final_answer", breaks_once)
    out = tmp_path / "run"
    results = run_eval(_options(tiny_model_dir, bad_benchmark, out))

    task = results["tasks"]["chartqa"]
    assert (task["n_samples"], task["n_score_errors"]) == (1, 1)
    lines = [json.loads(line) for line in samples_path(out, "chartqa").read_text().splitlines()]
    [errored] = [line for line in lines if "score_error" in line]
    assert errored["score_error"].startswith("OverflowError") and errored["response"] == broken[0]
    assert "score" not in errored


def test_eval_resume_counts_a_row_logged_twice_once(tiny_model_dir, bad_benchmark, tmp_path):
    out = tmp_path / "run"
    run_eval(_options(tiny_model_dir, bad_benchmark, out, limit=1))
    log = samples_path(out, "chartqa")
    log.write_text(log.read_text() * 2)

    results = run_eval(_options(tiny_model_dir, bad_benchmark, out, limit=1, resume=True))

    assert results["tasks"]["chartqa"]["n_samples"] == 1
    assert len(log.read_text().splitlines()) == 1


@pytest.mark.parametrize("picture", ["empty.png", "garbage.png", "huge.png"])
def test_critique_names_an_unreadable_image_in_one_line(
    tiny_model_dir, bad_benchmark, picture, caplog
) -> None:
    image = bad_benchmark.parent / picture
    flags = ["critique", f"--model={tiny_model_dir}", f"--image={image}", "--question=q"]
    assert main([*flags, "--response-a=a", "--response-b=b", "--device=cpu"]) == 2
    assert f"cannot read image {image}" in caplog.text


def test_a_mistyped_model_folder_is_named_as_missing(tmp_path, bad_benchmark, caplog) -> None:
    image = bad_benchmark.parent / "good.png"
    missing = tmp_path / "runs" / "critc"
    flags = ["critique", f"--model={missing}", f"--image={image}", "--question=q"]
    assert main([*flags, "--response-a=a", "--response-b=b", "--device=cpu"]) == 2
    assert f"no such folder: {missing}" in caplog.text  # one line, no hub lookup


def test_a_row_the_reader_cannot_parse_is_rejected_with_its_text(tiny_model_dir, tmp_path) -> None:
    folder = tmp_path / "chartqa"
    write_png(folder / "good.png")
    good = {"question": "What share likes tea?", "answer": "12", "image": "good.png"}
    surrogate = dict(good, question="What share likes tea \ud800?")  # no UTF-8 holds it
    lines = [json.dumps(good), '{"question": "torn', json.dumps(surrogate), json.dumps(good)]
    data = folder / "test.jsonl"
    data.write_text("".join(line + "\n" for line in lines))
    out = tmp_path / "run"

    results = run_eval(_options(tiny_model_dir, data, out))

    task = results["tasks"]["chartqa"]
    assert (task["n_samples"], task["rejected_doc_ids"]) == (2, [1, 2])
    rejected = [json.loads(line) for line in (out / REJECTED_ROWS).read_text("utf-8").splitlines()]
    assert all(line["rejected"].startswith("unreadable row: ") for line in rejected)
    assert "surrogate" in rejected[1]["rejected"]
    assert [line["raw"] for line in rejected] == [repr(f"{line}\n") for line in lines[1:3]]
    again = run_eval(_options(tiny_model_dir, data, out, resume=True))
    assert again["tasks"]["chartqa"]["n_rejected"] == 2


def test_a_finished_eval_resumed_leaves_its_files_as_they_were(
    tiny_model_dir, bad_benchmark, tmp_path
) -> None:
    out = tmp_path / "run"
    first = run_eval(_options(tiny_model_dir, bad_benchmark, out))
    assert first["engine"]["samples_this_run"] == 2

    def files() -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".mmcritic.lock"}

    before = files()
    again = run_eval(_options(tiny_model_dir, bad_benchmark, out, resume=True))

    assert files() == before  # the speed of the run that did the work stays on record
    assert again["engine"] == first["engine"]
