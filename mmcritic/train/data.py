"""A verifiable dataset folder as the `datasets.Dataset` TRL's trainers read.

Records keep media as paths; images are opened only when a batch asks for them (`with_transform`),
resized into the recipe's pixel budget by qwen-vl-utils, so host memory does not grow with the
dataset. Before training, every prompt's exact token count (text through the chat template plus
each image's visual tokens, from the image size alone) is checked against the limit: a prompt
that would be truncated through its media tokens is rejected here, naming the record, instead of
failing mid-run with "Image features and image tokens do not match".
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmcritic.data.media import PixelBudget, image_token_count
from mmcritic.data.schema import DATA_FILE, Record

logger = logging.getLogger(__name__)

TRAIN_REJECTED_FILE = "rejected_train.jsonl"


@dataclass(frozen=True)
class ExampleRejection:
    id: str
    reason: str
    message: str


def read_records(folder: str | Path) -> list[Record]:
    """Records of a dataset folder, with media paths made absolute."""
    folder = Path(folder)
    path = folder / DATA_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{folder} is not a verifiable dataset folder: {DATA_FILE} is missing "
            "(make one with `mmcritic preprocess` or `mmcritic synth`)"
        )
    records = []
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = Record.from_dict(json.loads(line))
            except (json.JSONDecodeError, ValueError) as err:
                raise ValueError(f"{path} line {line_number}: {err}") from err
            record.images = [_absolute(folder, p) for p in record.images]
            record.videos = [_absolute(folder, p) for p in record.videos]
            records.append(record)
    return records


def _absolute(folder: Path, path: str) -> str:
    return path if Path(path).is_absolute() else str((folder / path).resolve())


def prompt_token_count(record: Record, processor: Any, budget: PixelBudget) -> int:
    """Exact prompt length as the trainer will tokenize it: chat template text plus the visual
    tokens each image expands to, computed from the image header, not its pixels."""
    from PIL import Image

    text = processor.apply_chat_template(record.prompt, tokenize=False, add_generation_prompt=True)
    tokens = len(processor.tokenizer(text, add_special_tokens=False)["input_ids"])
    for path in record.images:
        with Image.open(path) as image:
            width, height = image.size
        tokens += image_token_count(width, height, budget) - 1
    return tokens


def filter_by_prompt_length(
    records: list[Record], processor: Any, budget: PixelBudget, max_tokens: int
) -> tuple[list[Record], list[ExampleRejection]]:
    """Splits records into those that fit and rejections that say by how much they do not."""
    kept, rejected = [], []
    for record in records:
        try:
            tokens = prompt_token_count(record, processor, budget)
        except OSError as err:
            rejected.append(ExampleRejection(record.id, "media_unreadable", str(err)))
            continue
        if tokens > max_tokens:
            rejected.append(
                ExampleRejection(
                    record.id,
                    "prompt_too_long",
                    f"prompt is {tokens:,} tokens, over data.max_prompt_tokens={max_tokens:,}; "
                    "truncating it would cut through its media tokens",
                )
            )
        else:
            kept.append(record)
    return kept, rejected


def write_rejections(rejections: list[ExampleRejection], path: Path) -> None:
    """Logs and files each rejected training example so none disappears silently."""
    if not rejections:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for rejection in rejections:
            handle.write(json.dumps(rejection.__dict__) + "\n")
    for rejection in rejections[:10]:
        logger.warning("rejected %s: %s: %s", rejection.id, rejection.reason, rejection.message)
    logger.warning("%d training examples rejected; all are listed in %s", len(rejections), path)


def position_of_answer(record: Record) -> str:
    """Where the correct response sits ("1", "2", "tie" or "n/a"), for position-bias metrics."""
    return record.answer if record.kind == "pairwise" else "n/a"


def to_dataset(records: list[Record], budget: PixelBudget, sft_target: str | None = None) -> Any:
    """The records as a `datasets.Dataset` whose `images` column opens files lazily; with an
    `sft_target` ("rationale" or "format"), the completion SFT imitates for each record."""
    import datasets

    from mmcritic.train.sft import sft_completion

    rows = [
        {
            "id": record.id,
            "prompt": record.prompt,
            "images": record.images,
            "answer": record.answer,
            "answer_position": position_of_answer(record),
            "rationale": str(record.meta.get("rationale", "")),
        }
        for record in records
    ]
    if sft_target is not None:
        for row in rows:
            row["completion"] = sft_completion(row, sft_target)
    dataset = datasets.Dataset.from_list(rows)
    return dataset.with_transform(ImageLoader(budget))


class ImageLoader:
    """`with_transform` hook: image paths -> PIL images resized into the pixel budget.

    A class rather than a closure so the dataset stays picklable for dataloader workers.
    """

    def __init__(self, budget: PixelBudget):
        self.budget = budget

    def __call__(self, batch: dict[str, list]) -> dict[str, list]:
        from qwen_vl_utils import fetch_image

        batch = dict(batch)
        batch["images"] = [
            [
                fetch_image(
                    {
                        "image": path,
                        "min_pixels": self.budget.min_pixels,
                        "max_pixels": self.budget.max_pixels,
                    }
                )
                for path in paths
            ]
            for paths in batch["images"]
        ]
        return batch
