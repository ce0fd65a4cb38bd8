"""Rows that are already verifiable: `question`, `answer`, `image` (or `video`); and open
questions, the same rows without an answer.

The first is the layout of `lmms-lab/LLaVA-Critic-GRPO-dataset`, whose questions already hold
the whole critic prompt with both responses; the converter adds only the think/boxed
instruction, and not twice. Open questions ("Describe the scene.") have no reference answer: a
policy trained on them is rewarded by a critic alone (`rewards.critic_model`), and the records
keep an empty answer, which the answer reward and the held-out accuracy leave out.
"""

from __future__ import annotations

from typing import Any

from mmcritic.data.formats.base import (
    FormatOptions,
    VerifiableItem,
    pick_column,
    register_format,
    require_question,
    row_id,
    row_source,
)
from mmcritic.data.formats.chosen_rejected import QUESTION_COLUMNS, raw_media
from mmcritic.data.schema import RecordError

ANSWER_COLUMNS = ("answer", "solution", "label", "ground_truth", "gt")


@register_format(
    "verifiable",
    kind="verifiable",
    description="already-verifiable rows: question, answer, image or video",
)
def parse_verifiable(row: dict[str, Any], index: int, options: FormatOptions) -> VerifiableItem:
    answer = require_answer(row, options)
    media = raw_media(row, options)
    return VerifiableItem(
        id=row_id(row, index, options, "verifiable"),
        source=row_source(row, options, "verifiable"),
        question=require_question(row, QUESTION_COLUMNS, options, media),
        answer=answer,
        media=media,
    )


def require_answer(row: dict[str, Any], options: FormatOptions) -> str:
    """Answers are often stored as numbers (`2`, `0.5`); the record keeps them as text."""
    name = pick_column(row, "answer", ANSWER_COLUMNS, options)
    value = row.get(name) if name else None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RecordError(
            "missing_field" if value is None else "malformed_field",
            f"no answer (looked for {list(ANSWER_COLUMNS)}); the row has {sorted(row)}",
        )
    answer = str(value).strip()
    if not answer:
        raise RecordError("bad_label", "the answer is empty")
    return answer


@register_format(
    "open-question",
    kind="verifiable",
    description="questions without a reference answer (rewarded by a critic): question, image",
)
def parse_open_question(row: dict[str, Any], index: int, options: FormatOptions) -> VerifiableItem:
    media = raw_media(row, options)
    return VerifiableItem(
        id=row_id(row, index, options, "open"),
        source=row_source(row, options, "open"),
        question=require_question(row, QUESTION_COLUMNS, options, media),
        answer="",
        media=media,
    )
