"""Two responses held in one list with their ranks, as VL-RewardBench stores its pairs.

A row has the question (`query`), the two responses (`response`, a list of two) and their ranks
(`human_ranking`, lower is better: `[0, 1]` means the first is better); equal ranks are a tie.
Columns are renamable with `--columns question=...,responses=...,ranking=...`.
"""

from __future__ import annotations

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
from mmcritic.data.formats.chosen_rejected import raw_media
from mmcritic.data.schema import RecordError

QUESTION_COLUMNS = ("query", "question", "prompt")
RESPONSES_COLUMNS = ("response", "responses", "answers")
RANKING_COLUMNS = ("human_ranking", "ranking", "ranks")


def _pair_column(row: dict[str, Any], role: str, aliases: tuple[str, ...], options) -> list:
    name = pick_column(row, role, aliases, options)
    if name is None:
        raise RecordError(
            "missing_field",
            f"no {role} column (looked for {list(aliases)}); the row has {sorted(row)}",
        )
    value = row[name]
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise RecordError("malformed_field", f"{role} must hold two entries, got {value!r:.80}")
    return list(value)


def _better(ranking: list[Any]) -> str:
    try:
        first, second = (float(rank) for rank in ranking)
    except (TypeError, ValueError) as err:
        raise RecordError("bad_label", f"ranks must be numbers, got {ranking!r}") from err
    return "tie" if first == second else "1" if first < second else "2"


@register_format(
    "ranked-pair",
    kind="pairwise",
    description="two responses in a list with their ranks, lower better (VL-RewardBench layout)",
)
def parse_ranked_pair(row: dict[str, Any], index: int, options: FormatOptions) -> PairwiseItem:
    responses = _pair_column(row, "responses", RESPONSES_COLUMNS, options)
    ranking = _pair_column(row, "ranking", RANKING_COLUMNS, options)
    texts = tuple(message_text(response, "response").strip() for response in responses)
    if not all(texts):
        raise RecordError("malformed_field", "a response is empty")
    media = raw_media(row, options)
    return PairwiseItem(
        id=row_id(row, index, options, "ranked"),
        source=row_source(row, options, "ranked-pair"),
        question=require_question(row, QUESTION_COLUMNS, options, media),
        responses=texts,
        better=_better(ranking),
        media=media,
    )
