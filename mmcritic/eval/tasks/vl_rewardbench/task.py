"""VL-RewardBench (test): the pair in lmms-eval's length-parity order, accuracy per category."""

from __future__ import annotations

from mmcritic.eval import metrics
from mmcritic.eval.tasks import CriticTask, DatasetRef, Pair, Row

HEADLINE = "accuracy"
# VL-RewardBench's category of an item, from the source named by its id prefix (lmms-eval's
# vl_rewardbench utils; unknown prefixes are "general" there too).
_GROUPS = {
    "mathverse": "reasoning",
    "mmmu": "reasoning",
    "hallucination": "hallucination",
    "rlhf": "hallucination",
    "rlaif": "hallucination",
    "wildvision": "general",
    "vlfeedback": "general",
}


def length_parity_order(first: str, second: str) -> bool:
    """Whether to present the pair swapped: lmms-eval's VL-RewardBench shows the responses in
    dataset order when their total length is even and swapped when odd, a fixed pseudo-random
    order that the published numbers use."""
    return (len(first) + len(second)) % 2 == 1


def build_pair(row: Row) -> Pair:
    responses = [str(response) for response in row["response"]]
    ranking = list(row["human_ranking"])
    swapped = length_parity_order(responses[0], responses[1])
    first, second = (responses[1], responses[0]) if swapped else tuple(responses)
    better_index = ranking.index(0)
    truth = "1" if (better_index == 1) == swapped else "2"
    source = str(row["id"]).split("-")[0].split("_")[0].lower()
    meta = {"category": _GROUPS.get(source, "general"), "swapped": swapped}
    return Pair(row["query"], first, second, truth, images=[row["image"]], meta=meta)


TASK = CriticTask(
    name="vl_rewardbench",
    dataset=DatasetRef(("MMInstruction/VL-RewardBench",), "test"),
    fields={
        "id": "id",
        "query": "query",
        "response": "response",
        "human_ranking": "human_ranking",
        "image": "image",
    },
    pair=build_pair,
    aggregate=metrics.critic_metrics("category", macro=True),
    scoring=(
        "rule-based: the protocol's verdict reading (r1: box, else stated verdict; lmms-eval and "
        "official: 'Overall Judgment: Answer X is better' first, never a random pick); order as "
        "lmms-eval's (length parity); overall and macro accuracy over general, hallucination "
        "and reasoning"
    ),
)
