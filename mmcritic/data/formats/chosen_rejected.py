"""Generic preference pairs: VLFeedback, RLAIF-V, RLHF-V, POVID, MM-RLHF and the like.

Each row holds a question, a chosen and a rejected response, and an image or a video. Column
names differ between sets, so each role tries the common names and `--columns role=name`
overrides them. Responses may be plain strings or chat-message lists (TRL's preference format).
The chosen response is always "1" here; the converter shuffles or swaps the order.
"""

from __future__ import annotations

from typing import Any

from mmcritic.data.formats.base import (
    FormatOptions,
    PairwiseItem,
    RawMedia,
    media_values,
    pick_column,
    register_format,
    require_question,
    require_text,
    row_id,
    row_source,
)

QUESTION_COLUMNS = ("question", "prompt", "query", "instruction", "input")
CHOSEN_COLUMNS = ("chosen", "chosen_response", "response_chosen", "preferred", "better")
REJECTED_COLUMNS = ("rejected", "rejected_response", "response_rejected", "dispreferred", "worse")
IMAGE_COLUMNS = ("image", "images", "image_path", "image_file")
VIDEO_COLUMNS = ("video", "videos", "video_path", "video_file")


def raw_media(row: dict[str, Any], options: FormatOptions) -> RawMedia:
    """Image and video columns of a row, each as a list of raw values."""
    image = pick_column(row, "image", IMAGE_COLUMNS, options)
    video = pick_column(row, "video", VIDEO_COLUMNS, options)
    return RawMedia(
        images=media_values(row[image]) if image else [],
        videos=media_values(row[video]) if video else [],
    )


@register_format(
    "chosen-rejected",
    kind="pairwise",
    description="preference pairs: question, chosen, rejected, image or video (columns renamable)",
)
def parse_chosen_rejected(row: dict[str, Any], index: int, options: FormatOptions) -> PairwiseItem:
    media = raw_media(row, options)
    return PairwiseItem(
        id=row_id(row, index, options, "pair"),
        source=row_source(row, options, "chosen-rejected"),
        question=require_question(row, QUESTION_COLUMNS, options, media),
        responses=(
            require_text(row, "chosen", CHOSEN_COLUMNS, options).strip(),
            require_text(row, "rejected", REJECTED_COLUMNS, options).strip(),
        ),
        better="1",
        media=media,
    )
