"""A verifiable dataset folder as the `datasets.Dataset` TRL's trainers read.

Records keep media as paths; images and videos are opened only when a batch asks for them
(`with_transform`), resized into the recipe's budgets by qwen-vl-utils, so host memory does not
grow with the dataset. Before training, every prompt's exact token count (text through the chat
template plus each image's and video's visual tokens, from file headers alone) is checked against
the limit: a prompt that would be truncated through its media tokens, or whose media cannot be
read, is rejected here, naming the record, instead of failing mid-run with "Image features and
image tokens do not match".
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmcritic.data.media import MediaBudget, image_token_count
from mmcritic.data.pairs import pair_key
from mmcritic.data.schema import Record, RecordError
from mmcritic.data.video import VideoBudget, load_video, probe_video, video_token_count

logger = logging.getLogger(__name__)

TRAIN_REJECTED_FILE = "rejected_train.jsonl"


@dataclass(frozen=True)
class ExampleRejection:
    id: str
    reason: str
    message: str


def prompt_token_count(record: Record, processor: Any, budget: MediaBudget) -> int:
    """Exact prompt length as the trainer will tokenize it: chat template text plus the visual
    tokens each image and video expands to, computed from file headers, not pixels."""
    from PIL import Image

    text = processor.apply_chat_template(record.prompt, tokenize=False, add_generation_prompt=True)
    tokens = len(processor.tokenizer(text, add_special_tokens=False)["input_ids"])
    for path in record.images:
        with Image.open(path) as image:
            width, height = image.size
        tokens += image_token_count(width, height, budget.image) - 1
    video_budget = record_video_budget(record, budget.video)
    for path in record.videos:
        tokens += video_token_count(probe_video(path), video_budget) - 1
    return tokens


def record_video_budget(record: Record, budget: VideoBudget) -> VideoBudget:
    """The run's video budget with the record's own `meta.video` settings on top."""
    return budget.with_overrides(record.meta.get("video"))


def filter_by_prompt_length(
    records: list[Record], processor: Any, budget: MediaBudget, max_tokens: int
) -> tuple[list[Record], list[ExampleRejection]]:
    """Splits records into those that fit and rejections that say why the others cannot train:
    unreadable media, or a prompt that would be truncated through its media tokens."""
    kept, rejected = [], []
    for record in records:
        try:
            tokens = prompt_token_count(record, processor, budget)
        except RecordError as err:
            rejected.append(ExampleRejection(record.id, err.reason, str(err)))
            continue
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


def to_dataset(records: list[Record], budget: MediaBudget, sft_target: str | None = None) -> Any:
    """The records as a `datasets.Dataset` whose `images` and `videos` columns open files lazily;
    with an `sft_target` (`SFTSettings.target`), a row per completion SFT imitates."""
    import datasets

    from mmcritic.train.sft import sft_completions

    if sft_target in ("answer_first", "answer_match", "own_verdict"):
        _check_own_answers(records)
    rows = [
        {
            "id": record.id,
            "kind": record.kind,
            "prompt": record.prompt,
            "question": str(record.meta.get("question", "")),
            "images": record.images,
            "videos": record.videos,
            # the paths again: `images` and `videos` hold loaded media once a batch is read,
            # and a critic judging the rollouts (`train.critic_reward`) opens the files itself
            "image_paths": record.images,
            "video_paths": record.videos,
            "video_options": video_options(record),
            "answer": record.answer,
            "answer_position": position_of_answer(record),
            # both orders of a pair share `pair`; `responses` in the order the prompt shows them
            "pair": pair_key(record) if record.kind == "pairwise" else record.id,
            "responses": list(record.meta.get("responses") or []),
            "rationale": str(record.meta.get("rationale", "")),
            "own_answer": str(record.meta.get("own_answer") or ""),
            # critique rows: the critiqued answer as written (the policy revises it) and the
            # reference a revision is scored against (`train.refinement_reward`)
            "answer_text": str(record.meta.get("answer_text", "")),
            "reference": str(record.meta.get("reference", "")),
        }
        for record in records
    ]
    if sft_target is not None:
        rows = [
            {**row, "completion": completion}
            for row in rows
            for completion in sft_completions(row, sft_target)
        ]
    dataset = datasets.Dataset.from_list(rows)
    return dataset.with_transform(MediaLoader(budget))


def _check_own_answers(records: list[Record]) -> None:
    """An `answer_first` warm start thinks each pair's own answer: a pair never answered would
    quietly be taught an empty think block instead."""
    pairs = [record for record in records if record.kind == "pairwise"]
    missing = [record.id for record in pairs if "own_answer" not in record.meta]
    if missing:
        raise ValueError(
            f"sft.target answer_first needs meta.own_answer on every pair; {len(missing)} of "
            f"{len(pairs)} have none (first: {missing[0]}): write it with "
            "mmcritic.inference.questions.with_own_answers"
        )


def video_options(record: Record) -> str:
    """A record's own video settings (`meta.video`) as the JSON string `MediaLoader` reads: a
    string column, because records override different keys."""
    return json.dumps(record.meta.get("video") or {})


class MediaLoader:
    """`with_transform` hook: image paths -> PIL images resized into the pixel budget, video
    paths -> sampled, resized frames (`LoadedVideo`) under the record's video budget.

    A class rather than a closure so the dataset stays picklable for dataloader workers.
    """

    def __init__(self, budget: MediaBudget):
        self.budget = budget

    def __call__(self, batch: dict[str, list]) -> dict[str, list]:
        """Loads the batch's media, each distinct file once: GRPO batches hold every prompt n
        times, and the copies share one loaded object."""
        batch = dict(batch)
        images: dict[str, Any] = {}
        batch["images"] = [
            [images.get(path) or images.setdefault(path, self._image(path)) for path in paths]
            for paths in batch["images"]
        ]
        if "videos" in batch:
            options = batch.get("video_options") or ["{}"] * len(batch["videos"])
            videos: dict[tuple[str, str], Any] = {}
            batch["videos"] = [
                [self._video(path, extra, videos) for path in paths]
                for paths, extra in zip(batch["videos"], options, strict=True)
            ]
        return batch

    def _video(self, path: str, extra: str, loaded: dict[tuple[str, str], Any]) -> Any:
        key = (path, extra)
        if key not in loaded:
            budget = self.budget.video.with_overrides(json.loads(extra))
            loaded[key] = load_video(path, budget, self.budget.patch_size)
        return loaded[key]

    def load_records(self, records: list[Record]) -> dict[str, list]:
        """The images and videos of records, loaded as a dataset batch of them would be."""
        return self(
            {
                "images": [record.images for record in records],
                "videos": [record.videos for record in records],
                "video_options": [video_options(record) for record in records],
            }
        )

    def _image(self, path: str) -> Any:
        from qwen_vl_utils import fetch_image

        return fetch_image(
            {
                "image": path,
                "min_pixels": self.budget.image.min_pixels,
                "max_pixels": self.budget.image.max_pixels,
            },
            image_patch_size=self.budget.patch_size,
        )
