"""Video-MME (test): four options; the video file is <videoID>.mp4 under the media root."""

from __future__ import annotations

import re

from mmcritic.eval import metrics
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row
from mmcritic.eval.tasks.common import MC_INSTRUCTION, as_list, mc_score

HEADLINE = "accuracy"
_OPTION_PREFIX = re.compile(r"^\s*\(?[A-Z]\)?[.:)]\s*")  # Video-MME's "A. He buys a newspaper."


def build_problem(row: Row) -> Problem:
    option_lines = [str(option) for option in as_list(row["options"])]
    options = "\n".join(option_lines)
    text = (
        "Select the best answer to the following multiple-choice question based on the video.\n"
        f"{row['question']}\n{options}\n{MC_INSTRUCTION}"
    )
    meta = {
        "duration": row.get("duration", ""),
        "options": [_OPTION_PREFIX.sub("", line, count=1) for line in option_lines],
        "option_lines": option_lines,
    }
    videos = [f"{row['videoID']}.mp4"]
    return Problem(text, str(row["answer"]), videos=videos, meta=meta, question=row["question"])


TASK = PolicyTask(
    name="videomme",
    dataset=DatasetRef(
        ("lmms-lab/Video-MME", "lmms-lab-encoder/Video-MME"),
        "test",
        local_hint="videos are read as <videoID>.mp4 from --media-root videomme=DIR",
    ),
    fields={
        "question": "question",
        "options": "options",
        "answer": "answer",
        "videoID": "videoID",
        "duration": "duration",
    },
    problem=build_problem,
    score=mc_score,
    aggregate=metrics.accuracy_by("duration"),
    scoring="rule-based: option letter",
    max_frames=32,
)
