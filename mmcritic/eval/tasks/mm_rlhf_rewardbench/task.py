"""MM-RLHF-RewardBench: Acc and Acc+, pairs in VL-RewardBench's length-parity order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mmcritic.eval import metrics
from mmcritic.eval.metrics import Record
from mmcritic.eval.tasks import CriticTask, DatasetRef, Pair, Row
from mmcritic.eval.tasks.vl_rewardbench.task import length_parity_order

HEADLINE = "accuracy"
_CATEGORIES = ("mcq", "long", "short", "safety", "video")


def _ordered(question: str, better: str, worse: str, **media_and_meta: Any) -> Pair:
    """A chosen/rejected pair shown in length-parity order."""
    swapped = length_parity_order(better, worse)
    first, second = (worse, better) if swapped else (better, worse)
    return Pair(question, first, second, "2" if swapped else "1", **media_and_meta)


def build_pair(row: Row) -> Pair:
    """A video is a folder of frames in the release, which does not give their rate; the runner
    loads it with `Media.frames` at its default rate, the budget's sampling rate, so every frame
    is shown up to 32 and 32 evenly spaced ones beyond, as the release's evaluation script
    samples longer clips (32 frames by linspace)."""
    image, video = row.get("image"), row.get("video")
    path = str(image or video or "")
    category = next((name for name in _CATEGORIES if name in path), "other")
    return _ordered(
        str(row["prompt"]),
        str(row["chosen"]),
        str(row["rejected"]),
        images=[image] if image else [],
        videos=[video] if video and not image else [],
        meta={"category": category, "pair_group": row["id"]},
    )


def aggregate(records: Sequence[Record]) -> dict[str, float]:
    """MM-RLHF-RewardBench's Acc (per pair) and Acc+ (per question: every pair built from its
    responses right), overall and per category, as in the benchmark's released scoring."""
    scored = [{**record, "score": float(record["correct"])} for record in records]
    result = metrics.critic_metrics("category")(records)
    result["acc_plus"] = metrics.all_correct_rate(scored, ("pair_group",))
    categories = sorted({str(record["meta"]["category"]) for record in scored})
    for name in categories:
        members = [record for record in scored if str(record["meta"]["category"]) == name]
        result[f"acc_plus/{name}"] = metrics.all_correct_rate(members, ("pair_group",))
    return result


TASK = CriticTask(
    name="mm_rlhf_rewardbench",
    dataset=DatasetRef(
        ("yifanzhang114/MM-RLHF-RewardBench",),
        "train",
        local_hint=(
            "the release's mm_reward_bench.jsonl names image and video paths relative to its "
            "folder; pass --media-root mm_rlhf_rewardbench=DIR when they live elsewhere"
        ),
    ),
    fields={
        "id": "id",
        "prompt": "prompt",
        "chosen": "chosen",
        "rejected": "rejected",
        "image": "image",
        "video": "video",
    },
    pair=build_pair,
    aggregate=aggregate,
    scoring=(
        "rule-based: box, else stated verdict; Acc per pair and Acc+ per question (all its "
        "pairs right), as in the benchmark's scoring; the benchmark fixes no order for "
        "generative critics, so the length-parity order of VL-RewardBench is used; "
        "frame-folder videos up to 32 frames"
    ),
    max_frames=32,
)
