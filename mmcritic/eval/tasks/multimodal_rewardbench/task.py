"""Multimodal RewardBench: Output1 shown first; accuracy per reporting category."""

from __future__ import annotations

from mmcritic.eval import metrics
from mmcritic.eval.tasks import CriticTask, DatasetRef, Pair, Row

HEADLINE = "accuracy"


def _category(row: Row) -> str:
    """The benchmark's reporting category; safety and reasoning split by id as its
    `2_get_accuracy.py` does."""
    category, item_id = str(row["category"]), str(row["id"]).lower()
    if category == "safety":
        return "safety/bias" if item_id.startswith("pairs") else "safety/toxicity"
    if category == "reasoning":
        return "reasoning/math" if item_id.startswith("math") else "reasoning/coding"
    return category


def build_pair(row: Row) -> Pair:
    truth = "2" if str(row["better"]) == "Output2" else "1"
    meta = {"category": _category(row)}
    return Pair(
        str(row["text"]),
        str(row["output_1"]),
        str(row["output_2"]),
        truth,
        images=[row["image"]],
        meta=meta,
    )


TASK = CriticTask(
    name="multimodal_rewardbench",
    dataset=DatasetRef(
        (),
        "train",
        local_hint=(
            "Multimodal RewardBench is not on the hub: clone facebookresearch/"
            "multimodal_rewardbench, run scripts/0_download_data.py, then pass "
            "--task-data multimodal_rewardbench=<clone>/data/all_data.json"
        ),
    ),
    fields={
        "id": "ID",
        "text": "Text",
        "image": "Image",
        "output_1": "Output1",
        "output_2": "Output2",
        "better": "Better",
        "category": "Category",
    },
    pair=build_pair,
    aggregate=metrics.critic_metrics("category"),
    scoring=(
        "rule-based: the protocol's verdict reading (lmms-eval and official: [[A]]/[[B]] as the "
        "release reads them; where the release draws a random label the verdict is wrong and "
        "counted here); Output1 shown first, as in the release's judge script; overall and "
        "per-category accuracy"
    ),
)
