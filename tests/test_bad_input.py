"""Untrusted input never stops a conversion: every bad row is rejected with a reason that names
it and its raw text, every good row is written, and the counts reconcile."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmcritic.cli import main
from mmcritic.data.convert import BuildOptions, PreprocessOptions, preprocess
from mmcritic.data.formats.llava_critic import parse_pair_verdict
from mmcritic.data.schema import RecordError
from mmcritic.data.sources import Source, parse_row
from tests.media_factory import write_png

HUMAN = (
    "<image>\nPlease serve as an unbiased and fair judge.\nQuestion: [What colour is the bus?]\n"
    "The first response: [{first}]\nThe second response: [{second}]\nASSISTANT:\n"
)
VERDICT = "The first one names the colour.\nThe better response: [The first response]"


def llava_row(row_id: str, image: object = "images/ok.png", **text: str) -> dict:
    first = text.get("first", "The bus is red.")
    second = text.get("second", "The bus is blue.")
    human = text.get("human", HUMAN.format(first=first, second=second))
    return {
        "id": row_id,
        "source": "VLFeedback",
        "image": image,
        "conversations": [
            {"from": "human", "value": human},
            {"from": "gpt", "value": text.get("gpt", VERDICT)},
        ],
    }


def line(row: dict) -> bytes:
    return json.dumps(row).encode() + b"\n"


def huge_png_header(path: Path, width: int = 20_000, height: int = 20_000) -> None:
    """A PNG that declares 400 megapixels in a few dozen bytes: only the header is real."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def messy_source(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A JSON Lines file holding one row of every kind of bad input, next to good rows; returns
    it and the reason each bad row must be rejected with, by its position."""
    images = tmp_path / "raw" / "images"
    images.mkdir(parents=True)
    write_png(images / "ok.png")
    huge_png_header(images / "huge.png")
    os.mkfifo(images / "pipe.png")
    (images / "folder.png").mkdir()
    rows: list[tuple[bytes, str | None]] = [
        (b"\xef\xbb\xbf" + line(llava_row("bom_first_line")), None),
        (line(llava_row("huge", image="images/huge.png")), "image_too_large"),
        (line(llava_row("str_bytes", image={"bytes": "not bytes"})), "media_corrupt"),
        (line(llava_row("int_bytes", image={"bytes": [137, 80, 78]})), "media_corrupt"),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "invalid_json"),
        (b'{"id": "surrogate", "text": "\\ud800"}\n', "encoding"),
        (b'{"id": "big", "n": ' + b"9" * 5000 + b"}\n", "invalid_json"),
        (line(llava_row("nul_path", image="images/ok\x00.png")), "media_missing"),
        (b'{"id": "latin1", "text": "caf\xe9"}\n', "encoding"),
        (line(llava_row("dup")), None),
        (line(llava_row("dup")), "duplicate_id"),
        (line(llava_row("dup")), "duplicate_id"),
        (
            line(llava_row("quoted_marker", first="Unlike the second response: it is red.")),
            "ambiguous_split",
        ),
        (
            line(
                llava_row(
                    "trailing_paragraph",
                    human=HUMAN.format(first="Red.", second="Blue.").replace(
                        "]\nASSISTANT:\n", "\n\nPlease note the roof is white.]"
                    ),
                )
            ),
            "ambiguous_split",
        ),
        (
            line(
                llava_row(
                    "contradiction",
                    gpt="The better response: [second]. Actually the first response is better.",
                )
            ),
            "ambiguous_verdict",
        ),
        (line(llava_row("carriage")).replace(b'"source"', b'\r"source"'), None),
        (line(llava_row("fifo", image="images/pipe.png")), "media_not_a_file"),
        (line(llava_row("directory", image="images/folder.png")), "media_not_a_file"),
        (b'{"id": "torn", "conversations": [{"fr\n', "invalid_json"),
        (b'"a string, not a row"\n', "invalid_json"),
        (line(llava_row("good_last")), None),
    ]
    source = tmp_path / "raw" / "messy.jsonl"
    source.write_bytes(b"".join(text for text, _ in rows))
    return source, {str(i): reason for i, (_, reason) in enumerate(rows) if reason}


def convert(source: Path, out: Path, fmt: str = "llava-critic-pairwise", **options) -> dict:
    preprocess_options = PreprocessOptions(
        format=fmt, build=BuildOptions(shuffle=False, max_prompt_tokens=None), **options
    )
    return preprocess(Source(str(source)), out, preprocess_options, show_progress=False)


def rejections(out: Path) -> list[dict]:
    return [json.loads(text) for text in (out / "rejected.jsonl").read_text().splitlines()]


def test_every_bad_row_is_rejected_with_its_reason_and_the_good_rows_are_written(
    messy_source, tmp_path
):
    source, expected = messy_source
    out = tmp_path / "out"
    stats = convert(source, out)
    assert stats["reconciles"] and stats["read"] == 21
    got = {str(entry["row"]): entry["reason"] for entry in rejections(out)}
    assert got == expected
    written = [json.loads(text)["id"] for text in (out / "data.jsonl").read_text().splitlines()]
    assert written == ["bom_first_line", "dup", "carriage", "good_last"]


def test_a_row_that_could_not_be_parsed_keeps_its_raw_text_with_bytes_escaped(
    messy_source, tmp_path
):
    source, _ = messy_source
    out = tmp_path / "out"
    convert(source, out)
    by_row = {entry["row"]: entry for entry in rejections(out)}
    assert by_row[8]["record"] == '{"id": "latin1", "text": "caf\\xe9"}\n'
    assert by_row[18]["record"].startswith('{"id": "torn"')
    assert by_row[5]["message"] == "a string holds a lone UTF-16 surrogate escape"


def test_resume_keeps_rejecting_duplicates_of_ids_written_before_the_stop(messy_source, tmp_path):
    source, expected = messy_source
    out = tmp_path / "out"
    convert(source, out, limit=10)  # stops right after the first "dup" is written
    stats = preprocess(
        Source(str(source)),
        out,
        PreprocessOptions(
            format="llava-critic-pairwise",
            build=BuildOptions(shuffle=False, max_prompt_tokens=None),
        ),
        mode="resume",
        show_progress=False,
    )
    assert stats["reconciles"] and stats["read"] == 21
    assert {str(entry["row"]): entry["reason"] for entry in rejections(out)} == expected


def test_json_array_with_a_bad_element_converts_the_others(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    write_png(images / "ok.png")
    good = [json.dumps(llava_row(f"row_{i}")) for i in range(3)]
    source = tmp_path / "rows.json"
    source.write_text(
        "[\n" + ",\n".join([good[0], '{"id": "bad", ]', good[1], "17", good[2]]) + "\n]"
    )
    stats = convert(source, tmp_path / "out")
    assert stats["written"] == 3 and stats["read"] == 5
    assert stats["rejected_by_reason"] == {"invalid_json": 2}


@pytest.mark.parametrize(
    ("path", "reason"),
    [("/etc/hostname", "absolute"), ("../outside.png", "climbs out"), ("link.png", "symlink")],
)
def test_confined_media_stays_under_the_media_root(tmp_path, path, reason):
    root = tmp_path / "raw"
    (root / "images").mkdir(parents=True)
    write_png(tmp_path / "outside.png")
    (root / "link.png").symlink_to(tmp_path / "outside.png")
    source = root / "rows.jsonl"
    source.write_bytes(line(llava_row("escape", image=path)))
    out = tmp_path / "out"
    stats = convert(source, out, confine_media=True)
    assert stats["rejected_by_reason"] == {"media_outside_root": 1}
    assert reason in rejections(out)[0]["message"]


def test_image_pixel_limit_is_configurable(tmp_path):
    (tmp_path / "images").mkdir()
    write_png(tmp_path / "images" / "ok.png", size=(300, 200))
    source = tmp_path / "rows.jsonl"
    source.write_bytes(line(llava_row("wide")))
    stats = convert(source, tmp_path / "out", max_image_pixels=50_000)
    assert stats["rejected_by_reason"] == {"image_too_large": 1}
    assert "300x200" in rejections(tmp_path / "out")[0]["message"]


def test_mistyped_local_input_fails_at_once_naming_it_and_leaves_nothing(tmp_path, caplog):
    out = tmp_path / "out"
    args = ["--quiet", "preprocess", "--format", "llava-critic-pairwise", "--output", str(out)]
    assert main([*args, "--input", "data/typo.jsonl"]) == 2
    assert main([*args, "--input", "not a hub id"]) == 2
    errors = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert "data/typo.jsonl: no such file" in errors[0]
    assert "neither an existing local path nor a hub id" in errors[1]
    assert not out.exists()


def test_offline_hub_fails_fast_in_one_line(tmp_path, caplog, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    out = tmp_path / "out"
    args = ["--quiet", "preprocess", "--format", "llava-critic-pairwise", "--output", str(out)]
    assert main([*args, "--input", "lmms-lab/llava-critic-113k"]) == 2
    (error,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert "the hub is switched off" in error and "\n" not in error
    assert not out.exists()


def test_empty_leftover_of_a_failed_run_does_not_block_the_retry(tmp_path):
    (tmp_path / "images").mkdir()
    write_png(tmp_path / "images" / "ok.png")
    source = tmp_path / "rows.jsonl"
    source.write_bytes(line(llava_row("only")))
    out = tmp_path / "out"
    out.mkdir()
    (out / "data.jsonl").write_text("")
    (out / ".progress.json").write_text(json.dumps({"rows_done": 0}))
    assert convert(source, out)["written"] == 1


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_parse_to_a_row_or_a_rejection(raw):
    row = parse_row(raw)
    assert isinstance(row, dict | RecordError)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_judgement_gives_a_verdict_or_a_rejection(text):
    try:
        assert parse_pair_verdict(text) in ("1", "2", "tie")
    except RecordError as err:
        assert err.reason in ("unparseable_verdict", "ambiguous_verdict")


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.sampled_from(["images/ok.png", "/dev/zero", "images", "\x00", "a" * 200]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
FIELDS = ("id", "source", "image", "conversations", "question", "chosen", "rejected", "answer")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES), max_size=6),
    junk=st.lists(st.binary(max_size=40), max_size=3),
    fmt=st.sampled_from(["llava-critic-pairwise", "chosen-rejected", "verifiable"]),
)
def test_any_rows_in_any_format_never_stop_the_conversion_and_always_reconcile(
    tmp_path_factory, rows, junk, fmt
):
    folder = tmp_path_factory.mktemp("property")
    (folder / "images").mkdir()
    write_png(folder / "images" / "ok.png")
    lines = [json.dumps(row).encode() for row in rows] + [j.replace(b"\n", b" ") for j in junk]
    source = folder / "rows.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    stats = convert(source, folder / "out", fmt=fmt)
    assert stats["reconciles"]
    # a UTF-8 byte-order mark opening the file marks its encoding; it is not a row of its own
    counted = [lines[0].removeprefix(b"\xef\xbb\xbf"), *lines[1:]] if lines else []
    if b"\n".join(counted).lstrip().startswith(b"["):
        # read as one JSON array, its elements the rows: an unclosed one is still a rejection
        assert stats["read"] >= 1
    else:
        assert stats["read"] == sum(1 for text in counted if text.strip())
    assert "unexpected_error" not in stats["rejected_by_reason"]


@pytest.mark.slow  # about a minute: 150 generated files through the whole conversion (in CI)
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    elements=st.lists(JSON_VALUES, max_size=6),
    cut=st.integers(min_value=0, max_value=400),
    junk=st.binary(max_size=20),
)
def test_any_json_array_even_damaged_never_stops_the_conversion(
    tmp_path_factory, elements, cut, junk
):
    folder = tmp_path_factory.mktemp("array")
    text = json.dumps(elements).encode()
    damaged = text[:cut] + junk + text[cut:] if junk else text
    source = folder / "rows.json"
    source.write_bytes(damaged)
    stats = convert(source, folder / "out", fmt="verifiable")
    assert stats["reconciles"]
    assert "unexpected_error" not in stats["rejected_by_reason"]
    if not junk:
        assert stats["read"] == len(elements)


def test_a_json_array_that_is_never_closed_is_rejected_not_read_as_empty(tmp_path):
    source = tmp_path / "rows.json"
    source.write_bytes(b"[\n")
    stats = convert(source, tmp_path / "out", fmt="llava-critic-pairwise")
    assert (stats["read"], stats["rejected"]) == (1, 1)
    assert stats["rejected_by_reason"] == {"invalid_json": 1}
