"""MathVerse's prompt: the dataset's own direct-answer query (`query_wo`), which lmms-eval's
`format-prompt` and the release's README both use."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row


def query_wo(row: Row, problem: Problem) -> Prompt:
    """`format-prompt` with `query_wo`: the dataset's own direct-answer query, stripped; no
    image when the row's image is empty (text-only versions)."""
    image = row.get("image")
    images = [] if image is None or str(image).strip() == "" else [image]
    text = str(row["query_wo"]).strip()
    return media_first(text, images)


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(
        query_wo, Decoding(16384), "mathverse/mathverse_evals.py"
    ),
    "official": official.released(
        query_wo, Decoding(16384), "ZrrSkywalker/MathVerse README, query_wo [937b090]"
    ),
}
