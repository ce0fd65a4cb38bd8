"""Critic benchmarks: pairs of responses, which one is better, and how accuracy is reported.

A task supplies the question, the two responses in the order the benchmark's published numbers
use, and the truth; the run's protocol (`mmcritic.eval.protocols`) decides the judge prompt (the
training template under r1, the benchmark's own under lmms-eval and official) and how verdicts
are read. A tie or an unreadable verdict is simply wrong, and counted. Scoring both orders
(`--both-orders`) adds the order-robust figures described in `metrics.critic_metrics`.
"""

from __future__ import annotations

from typing import Any

from mmcritic.eval import metrics
from mmcritic.eval.tasks import CriticTask, DatasetRef, Pair, Row

# VL-RewardBench's category of an item, from the source named by its id prefix (lmms-eval's
# vl_rewardbench utils; unknown prefixes are "general" there too).
_VL_REWARDBENCH_GROUPS = {
    "mathverse": "reasoning",
    "mmmu": "reasoning",
    "hallucination": "hallucination",
    "rlhf": "hallucination",
    "rlaif": "hallucination",
    "wildvision": "general",
    "vlfeedback": "general",
}
_MM_RLHF_CATEGORIES = ("mcq", "long", "short", "safety", "video")


def length_parity_order(first: str, second: str) -> bool:
    """Whether to present the pair swapped: lmms-eval's VL-RewardBench shows the responses in
    dataset order when their total length is even and swapped when odd, a fixed pseudo-random
    order that the published numbers use."""
    return (len(first) + len(second)) % 2 == 1


def _ordered(question: str, better: str, worse: str, **media_and_meta: Any) -> Pair:
    """A chosen/rejected pair shown in length-parity order."""
    swapped = length_parity_order(better, worse)
    first, second = (worse, better) if swapped else (better, worse)
    return Pair(question, first, second, "2" if swapped else "1", **media_and_meta)


def _vl_rewardbench_pair(row: Row) -> Pair:
    responses = [str(response) for response in row["response"]]
    ranking = list(row["human_ranking"])
    swapped = length_parity_order(responses[0], responses[1])
    first, second = (responses[1], responses[0]) if swapped else tuple(responses)
    better_index = ranking.index(0)
    truth = "1" if (better_index == 1) == swapped else "2"
    source = str(row["id"]).split("-")[0].split("_")[0].lower()
    meta = {"category": _VL_REWARDBENCH_GROUPS.get(source, "general"), "swapped": swapped}
    return Pair(row["query"], first, second, truth, images=[row["image"]], meta=meta)


VL_REWARDBENCH = CriticTask(
    name="vl_rewardbench",
    dataset=DatasetRef(("MMInstruction/VL-RewardBench",), "test"),
    fields={
        "id": "id",
        "query": "query",
        "response": "response",
        "human_ranking": "human_ranking",
        "image": "image",
    },
    pair=_vl_rewardbench_pair,
    aggregate=metrics.critic_metrics("category", macro=True),
    scoring=(
        "rule-based: the protocol's verdict reading (r1: box, else stated verdict; lmms-eval and "
        "official: 'Overall Judgment: Answer X is better' first, never a random pick); order as "
        "lmms-eval's (length parity); overall and macro accuracy over general, hallucination "
        "and reasoning"
    ),
)


def _mm_rlhf_pair(row: Row) -> Pair:
    """A video is a folder of frames in the release, which does not give their rate; the runner
    loads it with `Media.frames` at its default rate, the budget's sampling rate, so every frame
    is shown up to 32 and 32 evenly spaced ones beyond, as the release's evaluation script
    samples longer clips (32 frames by linspace)."""
    image, video = row.get("image"), row.get("video")
    path = str(image or video or "")
    category = next((name for name in _MM_RLHF_CATEGORIES if name in path), "other")
    return _ordered(
        str(row["prompt"]),
        str(row["chosen"]),
        str(row["rejected"]),
        images=[image] if image else [],
        videos=[video] if video and not image else [],
        meta={"category": category, "pair_group": row["id"]},
    )


MM_RLHF_REWARDBENCH = CriticTask(
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
    pair=_mm_rlhf_pair,
    aggregate=metrics.mm_rlhf_rewardbench,
    scoring=(
        "rule-based: box, else stated verdict; Acc per pair and Acc+ per question (all its "
        "pairs right), as in the benchmark's scoring; the benchmark fixes no order for "
        "generative critics, so the length-parity order of VL-RewardBench is used; "
        "frame-folder videos up to 32 frames"
    ),
    max_frames=32,
)


def _multimodal_rewardbench_category(row: Row) -> str:
    """The benchmark's reporting category; safety and reasoning split by id as its
    `2_get_accuracy.py` does."""
    category, item_id = str(row["category"]), str(row["id"]).lower()
    if category == "safety":
        return "safety/bias" if item_id.startswith("pairs") else "safety/toxicity"
    if category == "reasoning":
        return "reasoning/math" if item_id.startswith("math") else "reasoning/coding"
    return category


def _multimodal_rewardbench_pair(row: Row) -> Pair:
    truth = "2" if str(row["better"]) == "Output2" else "1"
    meta = {"category": _multimodal_rewardbench_category(row)}
    return Pair(
        str(row["text"]),
        str(row["output_1"]),
        str(row["output_2"]),
        truth,
        images=[row["image"]],
        meta=meta,
    )


MULTIMODAL_REWARDBENCH = CriticTask(
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
    pair=_multimodal_rewardbench_pair,
    aggregate=metrics.critic_metrics("category"),
    scoring=(
        "rule-based: the protocol's verdict reading (lmms-eval and official: [[A]]/[[B]] as the "
        "release reads them; where the release draws a random label the verdict is wrong and "
        "counted here); Output1 shown first, as in the release's judge script; overall and "
        "per-category accuracy"
    ),
)

CRITIC_TASKS = (VL_REWARDBENCH, MM_RLHF_REWARDBENCH, MULTIMODAL_REWARDBENCH)
