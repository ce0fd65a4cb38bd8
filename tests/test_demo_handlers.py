"""The demo's behaviour without a server: input checks, example drawing, and how judgements are
shown. A scripted model stands in where a readable verdict is needed, which the random-weight
tiny model never writes. `tmp_path` plays Gradio's upload folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

pytest.importorskip("gradio")

from mmcritic.cli import build_parser
from mmcritic.demo.examples import best_of_n_rows, compare_rows, score_rows, write_examples
from mmcritic.demo.handlers import DemoApp
from mmcritic.demo.inputs import (
    MAX_IMAGE_PIXELS,
    UPLOAD_MARKER,
    InputError,
    load_image,
    require_count,
    require_flag,
    require_positive,
    require_text,
    uploaded_file,
)
from mmcritic.inference import Comparison, Score


class ScriptedModel:
    """Streams one partial text per order, then returns the judgement it was given."""

    def __init__(self, comparison: Comparison | None = None, score: Score | None = None):
        self.comparison, self._score = comparison, score
        self.critic = SimpleNamespace(scale=10)

    def compare(self, image, question, answer_a, answer_b, both_orders) -> Iterator:
        yield ["<think>looking"] * (2 if both_orders else 1)
        yield self.comparison

    def score(self, image, question, answer) -> Iterator:
        yield ["<think>looking"]
        yield self._score


def _upload(path: Path | str) -> dict[str, Any]:
    """A file object as Gradio hands an uploaded file to an event run without preprocessing."""
    return {"path": str(path), "orig_name": Path(path).name, "meta": UPLOAD_MARKER}


@pytest.fixture
def red_png(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "red.png"
    Image.new("RGB", (64, 48), (200, 20, 20)).save(path)
    return _upload(path)


def _last(views: Iterator):
    return list(views)[-1]


def test_load_image_reads_the_real_format_not_the_file_name(tmp_path: Path, red_png: dict):
    disguised = tmp_path / "photo.txt"
    disguised.write_bytes(Path(red_png["path"]).read_bytes())
    assert load_image(disguised).size == (64, 48)
    fake = tmp_path / "fake.png"
    fake.write_text("not pixels")
    with pytest.raises(InputError, match="not an image"):
        load_image(fake)


def test_load_image_refuses_images_over_the_pixel_limit_before_decoding(tmp_path: Path):
    path = tmp_path / "huge.png"
    Image.new("1", (5000, 4000)).save(path)  # 20 megapixels in a few kilobytes
    assert MAX_IMAGE_PIXELS < 5000 * 4000
    with pytest.raises(InputError, match=r"too large \(20\.0 megapixels, limit 16\.8\)"):
        load_image(path)


def test_load_image_pixel_limit_is_configurable(tmp_path: Path, red_png: dict):
    with pytest.raises(InputError, match=r"64 x 48 pixels, is too large \(0\.0 megapixels"):
        load_image(Path(red_png["path"]), max_pixels=64 * 47)
    assert load_image(Path(red_png["path"]), max_pixels=64 * 48).size == (64, 48)


def test_uploaded_file_accepts_a_regular_file_in_the_upload_folder(tmp_path: Path, red_png):
    assert uploaded_file(red_png, tmp_path) == Path(os.path.realpath(red_png["path"]))


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (None, "Upload an image first"),
        ("/etc/passwd", "must be an uploaded file, got text"),
        (["/etc/passwd"], "must be an uploaded file, got a list"),
        ({"url": "http://example.com/x.png"}, "must be an uploaded file, got an object"),
        ({"path": "/etc/passwd"}, "not uploaded to this demo"),
        ({"path": "/etc/passwd", "meta": {"_type": "other"}}, "not uploaded to this demo"),
        ({"path": "/etc/passwd", "meta": UPLOAD_MARKER}, "not uploaded to this demo"),
        ({"path": "x\0.png", "meta": UPLOAD_MARKER}, "not uploaded to this demo"),
    ],
)
def test_uploaded_file_refuses_what_gradio_did_not_receive(tmp_path: Path, payload, message):
    with pytest.raises(InputError, match=message):
        uploaded_file(payload, tmp_path)


def test_uploaded_file_refuses_paths_that_leave_the_upload_folder(tmp_path: Path):
    uploads, outside = tmp_path / "uploads", tmp_path / "secret.png"
    uploads.mkdir()
    Image.new("RGB", (8, 8)).save(outside)
    (uploads / "link.png").symlink_to(outside)
    for path in (uploads / "link.png", uploads / ".." / "secret.png"):
        with pytest.raises(InputError, match="not uploaded to this demo"):
            uploaded_file(_upload(path), uploads)


def test_uploaded_file_refuses_folders_fifos_and_missing_files_without_opening(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.png")  # opening it for reading would block until a writer came
    (tmp_path / "folder.png").mkdir()
    for name in ("pipe.png", "folder.png", "."):
        with pytest.raises(InputError, match="folder or a special file"):
            uploaded_file(_upload(tmp_path / name), tmp_path)
    with pytest.raises(InputError, match="no longer on the server"):
        uploaded_file(_upload(tmp_path / "gone.png"), tmp_path)


def test_uploaded_file_refuses_files_over_the_byte_limit(tmp_path: Path, red_png: dict):
    with pytest.raises(InputError, match=r"image file is too large \(0\.0 MiB"):
        uploaded_file(red_png, tmp_path, max_bytes=10)


@pytest.mark.parametrize("value", ["", "   ", None, "x" * 11])
def test_require_text_rejects_empty_and_overlong_fields(value):
    with pytest.raises(InputError, match="question"):
        require_text(value, "question", max_chars=10)


@pytest.mark.parametrize(
    ("value", "kind"), [(5, "a number"), (2.5, "a number"), (True, "true/false"), (["a"], "a list")]
)
def test_require_text_names_the_kind_of_a_value_that_is_not_text(value, kind):
    with pytest.raises(InputError, match=f"The question must be text, got {kind}\\."):
        require_text(value, "question", max_chars=10)


@pytest.mark.parametrize(("value", "kind"), [(1, "a number"), ("yes", "text"), (None, "nothing")])
def test_require_flag_takes_only_true_or_false(value, kind):
    with pytest.raises(InputError, match=f"must be true or false, got {kind}"):
        require_flag(value, "both orders")
    assert require_flag(False, "both orders") is False


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1, "1"),
        (9, "9"),
        (2.5, "2.5"),
        (float("nan"), "nan"),
        (10**400, "a number"),
        ("4", "text"),
        (True, "true/false"),
        (None, "nothing"),
        ({"n": 4}, "an object"),
    ],
)
def test_require_count_rejects_anything_but_whole_numbers_in_range(value, shown):
    with pytest.raises(InputError, match=f"whole number from 2 to 8, got {shown}\\."):
        require_count(value, "number of candidates", 2, 8)


def test_require_count_and_positive_accept_numbers_sent_as_floats():
    assert require_count(4.0, "n", 2, 8) == 4
    assert require_positive(0.7, "temperature", 2.0) == 0.7
    with pytest.raises(InputError, match="above 0"):
        require_positive(0, "temperature", 2.0)


def test_examples_come_from_synthetic_tasks_with_a_correct_and_a_wrong_answer(tmp_path: Path):
    examples = write_examples(tmp_path, seed=3)
    assert examples == write_examples(tmp_path, seed=3)
    for example in examples:
        assert Image.open(example.image).format == "PNG"
        assert example.correct != example.wrong
    compare = compare_rows(examples)
    assert {row[2] for row in compare} & {e.correct for e in examples}
    assert {row[3] for row in compare} & {e.correct for e in examples}
    assert compare[-1][4] is True and compare[0][4] is False
    assert len(score_rows(examples)) == len(best_of_n_rows(examples)) == len(examples)


def test_compare_streams_then_shows_the_verdict_both_orders_agree_on(tmp_path, red_png):
    judged = Comparison(
        "2", "B names the colour.", "raw", "ok", True, "2", "B again.", "raw", "ok", True
    )
    app = DemoApp(ScriptedModel(judged), tmp_path)
    views = list(app.compare(red_png, "Colour?", "blue", "red", True))
    assert views[0].rationale.startswith("[A shown first]\n<think>looking")
    final = views[-1]
    assert final.verdict == "B is better"
    assert "B names the colour." in final.rationale and "B again." in final.rationale
    assert "The orders agree" in final.agreement
    assert final.status.startswith("Judged in")


def test_compare_counts_disagreeing_orders_as_a_tie(tmp_path: Path, red_png: dict):
    judged = Comparison("1", "A.", "raw", "ok", True, "2", "B.", "raw", "ok", False)
    app = DemoApp(ScriptedModel(judged), tmp_path)
    final = _last(app.compare(red_png, "Colour?", "blue", "red", True))
    assert final.verdict == "Tie (the orders disagree)"
    assert "The orders disagree" in final.agreement


def test_unreadable_verdict_is_a_warning_with_the_raw_output_shown(tmp_path, red_png):
    notes: list[str] = []
    judged = Comparison(None, "gibberish", "gibberish", "no_box")
    app = DemoApp(ScriptedModel(judged), tmp_path, notify=notes.append)
    final = _last(app.compare(red_png, "Colour?", "blue", "red", False))
    assert (final.rationale, final.verdict) == ("gibberish", "No verdict")
    assert final.status.startswith("**Warning:**")
    assert "no answer in \\boxed{}" in notes[0]


def test_score_shows_the_number_and_the_scale(tmp_path: Path, red_png: dict):
    scored = Score(7.0, "Mostly right.", "raw", "ok")
    final = _last(DemoApp(ScriptedModel(score=scored), tmp_path).score(red_png, "Colour?", "red"))
    assert final.score == 7.0 and final.rationale == "Mostly right."
    assert final.status.startswith("Scored 7 of 10")


def test_model_failure_becomes_a_message_without_the_exception_text(tmp_path, red_png):
    class Broken(ScriptedModel):
        def score(self, image, question, answer) -> Iterator:
            raise RuntimeError(f"cannot read {tmp_path}/weights.safetensors")

    notes: list[str] = []
    app = DemoApp(Broken(), tmp_path, notify=notes.append)
    final = _last(app.score(red_png, "Colour?", "red"))
    assert (final.score, final.rationale) == (None, "")
    assert "model failed on this input (RuntimeError)" in final.status and notes
    assert str(tmp_path) not in final.status


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda app, image: app.compare(image, 5, "red", "blue", False), "question must be text"),
        (lambda app, image: app.compare(image, "Q?", ["red"], "blue", False), "answer A must be"),
        (lambda app, image: app.compare(image, "Q?", "red", "blue", "yes"), "true or false"),
        (lambda app, image: app.score(image, "Q?", {"text": "red"}), "answer must be text"),
        (lambda app, image: app.best_of_n(image, "Q?", "4", 1.0, 0), "got text"),
        (lambda app, image: app.best_of_n(image, "Q?", 4, None, 0), "got nothing"),
        (lambda app, image: app.best_of_n(image, "Q?", 4, 1.0, [0]), "seed must be"),
    ],
)
def test_wrong_types_become_messages_before_the_image_is_read(tmp_path, call, message):
    app = DemoApp(ScriptedModel(), tmp_path)
    never_opened = _upload(tmp_path / "not-there.png")
    final = _last(call(app, never_opened))
    assert message in final.status and "no longer on the server" not in final.status


def test_handlers_refuse_an_image_outside_the_upload_folder(tmp_path: Path):
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    Image.new("RGB", (8, 8)).save(tmp_path / "secret.png")
    final = _last(
        DemoApp(ScriptedModel(), uploads).score(_upload(tmp_path / "secret.png"), "Q?", "A")
    )
    assert "not uploaded to this demo" in final.status
    assert str(tmp_path) not in final.status


def test_demo_command_is_registered():
    args = build_parser().parse_args(["demo", "--model", "runs/tiny", "--port", "7999"])
    assert (args.model, args.port, args.share, args.host) == ("runs/tiny", 7999, False, "127.0.0.1")
    assert args.handler.__name__ == "_run_demo"
