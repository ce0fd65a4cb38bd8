"""Each script in preprocessing/ converts a small local file in its dataset's real schema."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

from PIL import Image

from mmcritic.data.dataset import read_records
from tests.media_factory import write_png

SCRIPTS = Path(__file__).parents[1] / "preprocessing"


def _dataset(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(name: str, source: Path, out: Path) -> dict:
    module = _dataset(name)
    return module.script_main(module.DATASET, ["--input", str(source), "--output", str(out)])


def _conversation(human: str, gpt: str) -> list[dict[str, str]]:
    return [{"from": "human", "value": human}, {"from": "gpt", "value": gpt}]


def test_every_script_names_a_hub_dataset_and_is_tested_here():
    scripts = sorted(path.stem for path in SCRIPTS.glob("*.py"))
    assert scripts == [
        "llava_critic_pairwise",
        "llava_critic_pointwise",
        "rlaif_v",
        "vl_rewardbench_pairs",
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
