"""Each script in preprocessing/ converts a small local file in its dataset's real schema."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from PIL import Image

from mmcritic.data.dataset import read_records
from mmcritic.data.public import script_main
from tests.media_factory import write_mp4, write_png

SCRIPTS = Path(__file__).parents[1] / "preprocessing"


def _dataset(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(name: str, source: Path, out: Path, *extra: str) -> dict:
    module = _dataset(name)
    argv = ["--input", str(source), "--output", str(out), *extra]
    return script_main(module.DATASET, argv)


def _rejections(out: Path) -> dict[str, str]:
    """Rejected row id (or row number) -> reason."""
    lines = (out / "rejected.jsonl").read_text().splitlines()
    rows = map(json.loads, lines)
    return {str(row["row"] if row["id"] is None else row["id"]): row["reason"] for row in rows}


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _conversation(human: str, gpt: str) -> list[dict[str, str]]:
    return [{"from": "human", "value": human}, {"from": "gpt", "value": gpt}]


def test_every_script_names_a_hub_dataset_and_is_tested_here():
    scripts = sorted(path.stem for path in SCRIPTS.glob("*.py"))
    assert scripts == [
        "llava_critic_grpo",
        "llava_critic_pairwise",
        "llava_critic_pointwise",
        "mm_rlhf",
        "rlaif_v",
        "rlhf_v",
        "vl_rewardbench_pairs",
        "vlfeedback",
    ]
    for name in scripts:
        dataset = _dataset(name).DATASET
        assert "/" in dataset.hub_id and dataset.schema


def test_llava_critic_pairwise_rows_become_pairwise_records(tmp_path, capsys):
    from mmcritic_dev.raw_synth import raw_pairwise_rows

    write_png(tmp_path / "images" / "a.png")
    rows = [
        {k: v for k, v in row.items() if k != "meta_truth"}
        for row in raw_pairwise_rows(4, ["images/a.png"], seed=3)
    ]
    rows.append({"id": "broken", "source": "x", "image": "images/a.png", "conversations": []})
    source = tmp_path / "pairwise.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))

    stats = _run("llava_critic_pairwise", source, tmp_path / "out")

    records = read_records(tmp_path / "out")
    assert (stats["written"], stats["rejected"]) == (4, 1)
    assert all(record.answer in ("1", "2") and record.images for record in records)
    assert all("What colour is the" in json.dumps(record.prompt) for record in records)
    assert {record.source for record in records} == {"synthetic"}  # the rows' own column


def test_llava_critic_pointwise_rows_become_scored_records(tmp_path, capsys):
    write_png(tmp_path / "images" / "b.png")
    rows = [
        {
            "id": f"point_{score}",
            "source": "vlfeedback",
            "image": "images/b.png",
            "conversations": _conversation(
                "Question: [What is shown?]\nThe response: [A red bus.]\nRate it out of 100.",
                f"The response is accurate. Score: {score}",
            ),
        }
        for score in (85, 40)
    ]
    source = tmp_path / "pointwise.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))

    stats = _run("llava_critic_pointwise", source, tmp_path / "out")

    assert (stats["written"], stats["rejected"]) == (2, 0)
    assert len(read_records(tmp_path / "out")) == 2


def _png_bytes(colour: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (48, 32), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_rlaif_v_rows_with_embedded_images_become_pairwise_records(tmp_path, capsys):
    import datasets

    rows = {
        "ds_name": ["RLAIF-V"] * 3,
        "image": [{"bytes": _png_bytes(c), "path": f"{c}.png"} for c in ("red", "blue", "gray")],
        "question": ["What colour is the car?", "Describe the image.", "What is shown?"],
        "chosen": ["The car is red.", "A blue square on a plain background.", ""],
        "rejected": ["The car is green.", "A cat sleeping on a sofa.", "A dog."],
        "origin_dataset": ["COCO"] * 3,
        "origin_split": ['{"model": "x"}'] * 3,
        "idx": ["rlaif_0", "rlaif_1", "rlaif_2"],
        "image_path": ["coco/0.jpg", "coco/1.jpg", "coco/2.jpg"],
    }
    features = datasets.Features(
        {name: datasets.Image() if name == "image" else datasets.Value("string") for name in rows}
    )
    source = tmp_path / "rlaif_v.parquet"
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(source))

    stats = _run("rlaif_v", source, tmp_path / "out")

    records = read_records(tmp_path / "out")
    assert (stats["written"], stats["rejected"]) == (2, 1)
    assert {record.id for record in records} == {"rlaif_0", "rlaif_1"}
    assert all(Path(record.images[0]).is_file() for record in records)
    assert {record.source for record in records} == {"rlaif-v"}
    rejected = (tmp_path / "out" / "rejected.jsonl").read_text()
    assert "rlaif_2" in rejected or "chosen" in rejected


def test_ranked_pairs_take_the_lower_rank_as_better_and_equal_ranks_as_a_tie(tmp_path, capsys):
    import datasets

    rows = {
        "id": ["rlaif_1", "mathverse_2", "wildvision_3", "broken_4"],
        "query": ["What is the man holding?", "Find x.", "Describe the scene.", "Q?"],
        "response": [
            ["A red umbrella.", "A blue kite."],
            ["x = 3", "x = 4, since 2x + 1 = 9."],
            ["A busy street.", "A busy street at night."],
            ["Only one response."],
        ],
        "human_ranking": [[0, 1], [1, 0], [0, 0], [0]],
        "image": [{"bytes": _png_bytes("red"), "path": f"{i}.png"} for i in range(4)],
        "query_source": ["rlaif", "mathverse", "wildvision", "x"],
    }
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "query": datasets.Value("string"),
            "response": datasets.Sequence(datasets.Value("string")),
            "human_ranking": datasets.Sequence(datasets.Value("int64")),
            "image": datasets.Image(),
            "query_source": datasets.Value("string"),
        }
    )
    source = tmp_path / "pairs.parquet"
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(source))

    stats = _run("vl_rewardbench_pairs", source, tmp_path / "out")

    records = {record.id: record for record in read_records(tmp_path / "out")}
    assert stats["rejected_by_reason"] == {"malformed_field": 1, "tie_dropped": 1}
    assert set(records) == {"rlaif_1", "mathverse_2"}  # the tie is dropped by default
    for name, text in (("rlaif_1", "A red umbrella."), ("mathverse_2", "x = 4")):
        prompt = json.dumps(records[name].prompt)
        better = records[name].answer
        shown = prompt.index(text) < prompt.index("second response")
        assert (better == "1") == shown, name


def _rated(model: str, response: str, *ratings: str) -> dict:
    aspects = ("Helpfulness", "Ethical Considerations", "Visual Faithfulness")
    return {
        "annotations": {
            aspect: {"Rating": rating, "Rationale": "..."}
            for aspect, rating in zip(aspects, ratings, strict=True)
        },
        "model": model,
        "response": response,
    }


def test_vlfeedback_pairs_the_best_rated_response_with_the_worst(tmp_path, capsys):
    write_png(tmp_path / "merged_images" / "svit" / "1.jpg")
    completions = [
        _rated("llava", "A dog on a sofa.", "2", "5", "2"),
        _rated("gpt-4v", "A brown dog asleep on a grey sofa.", "5", "5", "5"),
        _rated("fuyu", "A cat.", "1", "5", "1"),
        _rated("qwen-vl", "A dog resting.", "4", "5", "N/A"),
    ]
    rows = [
        {
            "id": "vlf_1",
            "prompt": "<image>\nDescribe the image.",
            "models": [],
            "completions": completions,
            "img_path": "svit/1.jpg",
        },
        {
            "id": "vlf_2",
            "prompt": "What is shown?",
            "models": [],
            "completions": [
                _rated("a", "A dog.", "3", "3", "3"),
                _rated("b", "Dog.", "3", "3", "3"),
            ],
            "img_path": "svit/1.jpg",
        },
        {
            "id": "vlf_3",
            "prompt": "What is shown?",
            "models": [],
            "completions": [
                _rated("a", "A dog.", "4", "5", "4"),
                _rated("b", "Dog.", "N/A", "N/A", "N/A"),
            ],
            "img_path": "svit/1.jpg",
        },
    ]
    source = _write_jsonl(tmp_path / "vlfeedback_80k.jsonl", rows)

    out = tmp_path / "out"
    stats = _run("vlfeedback", source, out, "--media-root", str(tmp_path / "merged_images"))

    (record,) = read_records(out)
    assert record.id == "vlf_1"
    responses = record.meta["responses"]
    better = responses[int(record.answer) - 1]
    worse = responses[2 - int(record.answer)]
    assert (better, worse) == ("A brown dog asleep on a grey sofa.", "A cat.")
    assert (record.meta["chosen_score"], record.meta["rejected_score"]) == (5.0, 7 / 3)
    assert record.meta["chosen_model"] == "gpt-4v"
    assert "<image>" not in json.dumps(record.prompt)
    assert _rejections(out) == {"vlf_2": "no_preference", "vlf_3": "bad_label"}
    assert stats["written"] + stats["rejected"] == stats["read"] == 3


def test_rlhf_v_reads_the_pair_from_its_json_text_column(tmp_path, capsys):
    import datasets

    texts = [
        {
            "question": "What is on the table?",
            "chosen": "A red mug and a book.",
            "rejected": "A red mug, a laptop and a cat.",
        },
        {
            "question": "Describe the photo.",
            "chosen": "Two people walk a dog.",
            "rejected": "Three people walk two dogs.",
        },
    ]
    rows = {
        "ds_name": ["RLHF-V"] * 3,
        "image": [{"bytes": _png_bytes(c), "path": f"{c}.png"} for c in ("red", "blue", "gray")],
        "text": [json.dumps(text) for text in texts] + ['{"question": "Q?", "chosen": '],
        "origin_dataset": ["COCO"] * 3,
        "origin_split": ['{"model": "muffin"}'] * 3,
        "idx": [0, 1, 2],
        "image_path": ["coco/0.jpg", "coco/1.jpg", "coco/2.jpg"],
    }
    features = datasets.Features(
        {
            **{name: datasets.Value("string") for name in rows},
            "image": datasets.Image(),
            "idx": datasets.Value("int64"),
        }
    )
    source = tmp_path / "RLHF-V-Dataset.parquet"
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(source))

    out = tmp_path / "out"
    stats = _run("rlhf_v", source, out)

    records = {record.id: record for record in read_records(out)}
    assert set(records) == {"0", "1"}
    first = records["0"]
    assert first.meta["question"] == "What is on the table?"
    assert first.meta["responses"][int(first.answer) - 1] == "A red mug and a book."
    assert all(Path(record.images[0]).is_file() for record in records.values())
    assert _rejections(out) == {"2": "malformed_field"}  # row 2: its JSON text is torn
    assert (stats["written"], stats["rejected"]) == (2, 1)


def test_mm_rlhf_turns_image_and_video_pairs_into_records(tmp_path, capsys):
    release = tmp_path / "MM-RLHF"
    write_png(release / "short" / "img_1.jpg")
    write_mp4(release / "video" / "clip_1.mp4", frames=8)
    rows = [
        {
            "prompt": "What colour is the square?",
            "chosen": "Red.",
            "rejected": "Blue.",
            "image": "short/img_1.jpg",
        },
        {
            "prompt": "Which way does the square move?",
            "chosen": "To the right.",
            "rejected": "Upwards.",
            "video": "video/clip_1.mp4",
        },
        {
            "prompt": "What is shown?",
            "chosen": "A dog.",
            "rejected": "A cat.",
            "image": "short/missing.jpg",
        },
    ]
    source = _write_jsonl(tmp_path / "dpo_pairs.jsonl", rows)

    out = tmp_path / "out"
    stats = _run("mm_rlhf", source, out, "--media-root", str(release))

    records = read_records(out)
    assert [(len(r.images), len(r.videos)) for r in records] == [(1, 0), (0, 1)]
    assert '"type": "video"' in json.dumps(records[1].prompt)
    assert Path(records[1].videos[0]).is_file()
    assert list(_rejections(out).values()) == ["media_missing"]
    assert stats["written"] == 2


def test_llava_critic_grpo_rows_keep_their_prompt_and_answer(tmp_path, capsys):
    import datasets

    suffix = (
        "You FIRST think about the reasoning process as an internal monologue and then provide "
        "the final answer. The reasoning process MUST BE enclosed within <think> </think> tags. "
        "The final answer MUST BE put in \\boxed{}."
    )
    prompt = (
        "<image>\nYou are provided with an image and a question for this image. Please review "
        "the corresponding responses.\nQuestion: [What colour is the bus?]\n"
        "The first response: [The bus is red.]\nThe second response: [The bus is blue.]\n"
        "Which response is better?"
    )
    rows = {
        "question": [prompt, f"{prompt} {suffix}", prompt],
        "answer": ["1", "2", ""],
        "images": [[{"bytes": _png_bytes("red"), "path": f"{i}.png"}] for i in range(3)],
    }
    features = datasets.Features(
        {
            "question": datasets.Value("string"),
            "answer": datasets.Value("string"),
            "images": datasets.Sequence(datasets.Image()),
        }
    )
    source = tmp_path / "train.parquet"
    datasets.Dataset.from_dict(rows, features=features).to_parquet(str(source))

    out = tmp_path / "out"
    stats = _run("llava_critic_grpo", source, out)

    records = read_records(out)
    assert [record.answer for record in records] == ["1", "2"]
    for record in records:
        text = json.dumps(record.prompt)
        assert "<image>" not in text and text.count("MUST BE put in") == 1
        assert record.kind == "verifiable" and len(record.images) == 1
    assert list(_rejections(out).values()) == ["bad_label"]
    assert stats["rejected"] == 1


def test_a_script_run_offline_fails_in_one_line_as_mmcritic_preprocess_does(tmp_path) -> None:
    script = SCRIPTS / "rlaif_v.py"
    done = subprocess.run(
        [sys.executable, str(script), "--output", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | {"HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    [error] = [line for line in done.stderr.splitlines() if " ERROR " in line]
    assert "openbmb/RLAIF-V-Dataset" in error
