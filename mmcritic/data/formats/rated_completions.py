"""Several rated responses to one question, of which the best and the worst make the pair.

VLFeedback's layout: `prompt`, `completions` (a list of `{"model", "response", "annotations"}`,
where `annotations` maps each aspect, Helpfulness, Visual Faithfulness and Ethical
Considerations, to `{"Rating": "1".."5", "Rationale": ...}`), and the image path (`img_path`).

A response's score is the mean of its numeric aspect ratings (a rating that is not a number,
such as "N/A", is left out of the mean; a response with none is left out of the pair). The pair
is the highest-scoring response against the lowest-scoring one: the widest margin is the label
least likely to be noise. Among equal scores the earlier response is taken. A row whose
responses all score the same has no preference and is rejected (`no_preference`), as is one
with fewer than two rated responses. The chosen and rejected responses' scores and models go
to `meta`.
"""

from __future__ import annotations

import math
from typing import Any

from mmcritic.data.formats.base import (
    FormatOptions,
    PairwiseItem,
    message_text,
    pick_column,
    register_format,
    require_question,
    row_id,
    row_source,
)
from mmcritic.data.formats.chosen_rejected import QUESTION_COLUMNS, raw_media
from mmcritic.data.schema import RecordError

COMPLETIONS_COLUMNS = ("completions", "responses")


@register_format(
    "rated-completions",
    kind="pairwise",
    description="rated responses per question, best against worst (VLFeedback layout)",
)
def parse_rated_completions(
    row: dict[str, Any], index: int, options: FormatOptions
) -> PairwiseItem:
    rated = [scored for scored in map(_scored, _completions(row, options)) if scored]
    if len(rated) < 2:
        raise RecordError("bad_label", f"{len(rated)} rated responses; a pair needs two")
    best = max(rated, key=lambda scored: scored[0])
    worst = min(rated, key=lambda scored: scored[0])
    if best[0] == worst[0]:
        raise RecordError("no_preference", f"every response scores {best[0]:g}")
    media = raw_media(row, options)
    return PairwiseItem(
        id=row_id(row, index, options, "rated"),
        source=row_source(row, options, "rated-completions"),
        question=require_question(row, QUESTION_COLUMNS, options, media),
        responses=(best[1], worst[1]),
        better="1",
        media=media,
        meta={
            "chosen_score": best[0],
            "rejected_score": worst[0],
            "chosen_model": best[2],
            "rejected_model": worst[2],
        },
    )


def _completions(row: dict[str, Any], options: FormatOptions) -> list[Any]:
    name = pick_column(row, "completions", COMPLETIONS_COLUMNS, options)
    if name is None:
        raise RecordError(
            "missing_field",
            f"no completions column (looked for {list(COMPLETIONS_COLUMNS)}); "
            f"the row has {sorted(row)}",
        )
    value = row[name]
    if not isinstance(value, list):
        raise RecordError("malformed_field", f"{name} is not a list: {type(value).__name__}")
    return value


def _scored(completion: Any) -> tuple[float, str, str] | None:
    """(mean rating, response text, model) or None for a completion with no numeric rating."""
    if not isinstance(completion, dict):
        raise RecordError("malformed_field", f"a completion is {type(completion).__name__}")
    ratings = [_rating(aspect) for aspect in (completion.get("annotations") or {}).values()]
    numbers = [rating for rating in ratings if rating is not None]
    if not numbers:
        return None
    response = message_text(completion.get("response"), "response").strip()
    if not response:
        raise RecordError("empty_response", "a rated response is empty")
    return sum(numbers) / len(numbers), response, str(completion.get("model", ""))


def _rating(aspect: Any) -> float | None:
    value = aspect.get("Rating") if isinstance(aspect, dict) else aspect
    try:
        rating = float(value)
    except (TypeError, ValueError):
        return None
    return rating if math.isfinite(rating) else None
