"""Text with a lone surrogate, which JSON can escape and UTF-8 cannot hold, is written and read
back without stopping a run: records keep it exactly, model output reads as a tokenizer would
decode it."""

from __future__ import annotations

import json

from mmcritic.eval.runner import SampleLog
from mmcritic.inference.engines.served import _read_choices
from mmcritic.text import json_text, without_lone_surrogates

_LONE = "The answer is \ud800 5"


def test_a_record_with_a_lone_surrogate_is_written_as_utf8_and_read_back_exactly() -> None:
    record = {"doc_id": 0, "response": _LONE, "question": "¿Qué es 猫?"}
    line = json_text(record)
    line.encode("utf-8")
    assert json.loads(line) == record


def test_a_record_without_one_keeps_its_characters_as_written() -> None:
    assert json_text({"question": "¿Qué es 猫?"}) == '{"question": "¿Qué es 猫?"}'


def test_a_sample_log_keeps_a_response_with_a_lone_surrogate_across_a_resume(tmp_path) -> None:
    path = tmp_path / "samples.jsonl"
    SampleLog(path, resume=False).append({"doc_id": 3, "response": _LONE})
    assert SampleLog(path, resume=True).records == [{"doc_id": 3, "response": _LONE}]


def test_model_output_reads_a_lone_surrogate_as_a_replacement_character() -> None:
    assert without_lone_surrogates(_LONE) == "The answer is \ufffd 5"
    assert without_lone_surrogates("\ud83d\ude00") == "\U0001f600"
    assert without_lone_surrogates("plain") == "plain"


def test_a_server_reply_escaping_a_lone_surrogate_reads_as_a_replacement_character() -> None:
    reply = {"model": "m", "choices": [{"index": 0, "message": {"content": _LONE}}]}
    texts, model = _read_choices(json.dumps(reply).encode())
    assert texts == ["The answer is \ufffd 5"] and model == "m"
    texts[0].encode("utf-8")
