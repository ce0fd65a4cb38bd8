"""Raw LLaVA-Critic-style pairwise rows with known labels, in the source's own layout.

The preprocess throughput benchmark needs 100k realistic rows, and the parser round-trip test
needs rows whose question, responses and verdict are known; both come from here. The wordings
mirror the families found in LLaVA-Critic-113k (first/second response, Answer 1/2, Response A/B,
Assistant start/end blocks, arena verdicts, LLaVA-Bench score pairs).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HUMAN_WORDINGS = (
    "<image>\nGiven an image and a corresponding question, please serve as an unbiased and fair "
    "judge to evaluate the quality of the answers provided by a Large Multimodal Model (LMM).\n"
    "Question: [{q}]\nThe first response: [{r1}]\nThe second response: [{r2}]\nASSISTANT:\n",
    "<image>\nPlease analyze the following image and question, then determine which of the two "
    "provided answers is better.\n\nQuestion: {q}\n\nAnswer 1: {r1}\n\nAnswer 2: {r2}\n\nPlease "
    "evaluate both answers based on accuracy, completeness and clarity.",
    "<image>\nQuestion: {q}\nResponse A: {r1}\nResponse B: {r2}\nWhich response is better?",
    "[Question]\n{q}\n\n[The Start of Assistant 1's Answer]\n{r1}\n[The End of Assistant 1's "
    "Answer]\n\n[The Start of Assistant 2's Answer]\n{r2}\n[The End of Assistant 2's Answer]\n\n"
    "[System]\nPlease rate the two answers.",
    "<image>\nPlease act as an impartial judge.\n\n[User Question]\n{q}\n\n[The Start of "
    "Assistant A's Answer]\n{r1}\n[The End of Assistant A's Answer]\n\n[The Start of Assistant "
    "B's Answer]\n{r2}\n[The End of Assistant B's Answer]",
)
GPT_VERDICTS = {
    "1": (
        "The first response matches the image.\nThe better response: [The first response]",
        "Answer 1 is accurate while Answer 2 is not.\nOverall Judgment: Answer 1 is better",
        "Response A describes the image faithfully. Response A is better.",
        "9 4\nAssistant 1 is accurate; Assistant 2 hallucinates.",
        "Assistant B makes an error. My final verdict is: [[A>B]]",
    ),
    "2": (
        "The second response matches the image.\nThe better response: [The second response]",
        "Answer 2 is accurate while Answer 1 is not.\nOverall Judgment: Answer 2 is better",
        "Response B describes the image faithfully. Response B is better.",
        "3 8\nAssistant 2 is accurate; Assistant 1 hallucinates.",
        "Assistant A makes an error. My final verdict is: [[B>>A]]",
    ),
}
SUBJECTS = ("bus", "dog", "kite", "chair", "boat", "lamp", "train", "clock", "cup", "tree")
COLOURS = ("red", "blue", "green", "yellow", "white", "black", "orange", "purple")


def raw_pairwise_rows(n: int, images: list[str], seed: int = 0) -> Iterator[dict[str, Any]]:
    """`n` rows in LLaVA-Critic pairwise layout; `meta_truth` holds what a parser should find."""
    rng = random.Random(seed)
    for index in range(n):
        subject = rng.choice(SUBJECTS)
        right, wrong = rng.sample(COLOURS, 2)
        question = f"What colour is the {subject} in this picture?"
        good = f"The {subject} is {right}, and it stands out against the background."
        bad = f"The {subject} is {wrong}; it is partly hidden."
        better = rng.choice("12")
        first, second = (good, bad) if better == "1" else (bad, good)
        wording = index % len(HUMAN_WORDINGS)
        yield {
            "id": f"synthetic_{index}",
            "source": "synthetic",
            "image": images[index % len(images)],
            "conversations": [
                {
                    "from": "human",
                    "value": HUMAN_WORDINGS[wording].format(q=question, r1=first, r2=second),
                },
                {"from": "gpt", "value": GPT_VERDICTS[better][wording]},
            ],
            "meta_truth": {"question": question, "responses": [first, second], "better": better},
        }


def write_raw_pairwise(path: Path, n: int, images: list[str], seed: int = 0) -> Path:
    """Writes `raw_pairwise_rows` as JSON Lines, streaming, so n can be large."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in raw_pairwise_rows(n, images, seed):
            handle.write(json.dumps(row) + "\n")
    return path
