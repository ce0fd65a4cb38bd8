"""Turning parsed items into verifiable records, and the `preprocess` pipeline around it.

`RecordBuilder` is the one place that writes prompts, orders responses and enforces the length
limits; `preprocess` and the synthetic generator both go through it, so a synthetic record and a
converted one cannot drift apart.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Literal

from tqdm.auto import tqdm

from mmcritic.data.cores import usable_cores
from mmcritic.data.dataset import DatasetWriter, WriteMode
from mmcritic.data.folder_lock import folder_lock
from mmcritic.data.formats.base import (
    FormatOptions,
    Item,
    PairwiseItem,
    PointwiseItem,
    RawMedia,
    VerifiableItem,
    get_format,
)
from mmcritic.data.guards import (
    DEFAULT_MAX_RESPONSE_CHARS,
    check_question,
    check_response,
    comparable,
)
from mmcritic.data.media import (
    DEFAULT_MAX_IMAGE_PIXELS,
    MediaCheck,
    MediaResolver,
    PixelBudget,
    image_token_count,
    text_token_estimate,
)
from mmcritic.data.prompts import (
    TIE_CLAUSE,
    load_template,
    media_word,
    render,
    think_boxed_suffix,
    user_message,
)
from mmcritic.data.resize import PATCH_SIZE
from mmcritic.data.schema import ConvertedRows, Record, RecordError
from mmcritic.data.sources import Source, iter_raw_rows, read_row
from mmcritic.data.video import VideoBudget, video_token_count

logger = logging.getLogger(__name__)

# Chat-template tokens around the user text: system turn, role tags, vision start/end markers.
CHAT_OVERHEAD_TOKENS = 32
LOGGED_REJECTIONS = 20
PROGRESS_EVERY = 1000
# rows a worker converts per task, and tasks queued per worker ahead of the writer: a task
# costs the writer's process a pipe round trip and a thread switch, so tasks are large (1,024
# rows: 20% less wall time than 256 on two cores, a few MiB in flight)
CHUNK_ROWS = 1024
CHUNKS_IN_FLIGHT_PER_WORKER = 4
# below this many rows one process is faster than starting workers
PARALLEL_FROM_ROWS = 5000
MAX_AUTO_WORKERS = 8
RESPONSE_LABELS = ("the first response", "the second response")
TieMode = Literal["drop", "keep"]


@dataclass(frozen=True)
class BuildOptions:
    """How items become records; these settings decide the output, so they fingerprint a run."""

    template: str | None = None
    think_suffix: bool = True
    swap_augment: bool = False
    shuffle: bool = True
    ties: TieMode = "drop"
    seed: int = 0
    min_pixels: int = PixelBudget.min_pixels
    max_pixels: int = PixelBudget.max_pixels
    video: VideoBudget = field(default_factory=VideoBudget)
    max_prompt_tokens: int | None = 6142  # LLaVA-Critic-R1's limit
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS
    tokenizer: str | None = None
    patch_size: int = PATCH_SIZE  # the vision patch of the model family the data is for

    def __post_init__(self) -> None:
        if self.ties not in ("drop", "keep"):
            raise ValueError(f"ties must be 'drop' or 'keep', got {self.ties!r}")
        if self.max_prompt_tokens is not None and self.max_prompt_tokens <= 0:
            raise ValueError(f"max_prompt_tokens must be positive, got {self.max_prompt_tokens}")
        PixelBudget(self.min_pixels, self.max_pixels)


@dataclass
class ResolvedMedia:
    """Record paths of an item's media and the visual tokens they will cost."""

    images: list[str] = field(default_factory=list)
    videos: list[str] = field(default_factory=list)
    visual_tokens: int = 0


class RecordBuilder:
    """Writes the records for one parsed item: prompt, response order, answer, limits."""

    def __init__(self, options: BuildOptions, kind: str):
        self.options = options
        self.template = load_template(options.template, kind)
        self.count_text_tokens = _token_counter(options.tokenizer)

    def build(self, item: Item, media: ResolvedMedia, row_index: int | None) -> list[Record]:
        if isinstance(item, PairwiseItem):
            return self._pairwise(item, media, row_index)
        if isinstance(item, PointwiseItem):
            return [self._pointwise(item, media, row_index)]
        return [self._verifiable(item, media, row_index)]

    def _pairwise(
        self, item: PairwiseItem, media: ResolvedMedia, row_index: int | None
    ) -> list[Record]:
        if item.better not in ("1", "2", "tie"):
            raise RecordError("bad_label", f"the better response is {item.better!r}, not 1/2/tie")
        if item.better == "tie" and self.options.ties == "drop":
            raise RecordError("tie_dropped", "the responses are tied and --ties is drop")
        question = check_question(item.question)
        responses = tuple(
            check_response(text, label, self.options.max_response_chars)
            for text, label in zip(item.responses, RESPONSE_LABELS, strict=True)
        )
        if comparable(responses[0]) == comparable(responses[1]):
            raise RecordError("identical_responses", "both responses are the same text")
        if self.options.swap_augment:
            orders = [False, True]
        else:
            orders = [self.options.shuffle and self._coin(item.id)]
        return [
            self._pairwise_record(item, question, responses, media, swapped, row_index)
            for swapped in orders
        ]

    def _coin(self, item_id: str) -> bool:
        """Whether to swap an item's responses: a hash of the seed and the id, so a resumed or
        reordered run makes the same choice, and labels come out balanced (a hash, not a
        `random.Random` seeded per row, which costs a SHA-512 and a generator on every row)."""
        digest = hashlib.blake2b(f"{self.options.seed}:{item_id}".encode(), digest_size=1)
        return digest.digest()[0] < 128

    def _pairwise_record(
        self,
        item: PairwiseItem,
        question: str,
        responses: tuple[str, ...],
        media: ResolvedMedia,
        swapped: bool,
        row_index: int | None,
    ) -> Record:
        first, second = reversed(responses) if swapped else responses
        answer = item.better if item.better == "tie" or not swapped else _other(item.better)
        text = render(
            self.template,
            self.options.think_suffix,
            question=question,
            response_1=first,
            response_2=second,
            media=media_word(len(media.images), len(media.videos)),
            tie_clause=TIE_CLAUSE if self.options.ties == "keep" else "",
        )
        meta = {"swapped": swapped, "question": question, "responses": [first, second]}
        suffix = "#swap" if swapped and self.options.swap_augment else ""
        return self._record(
            item, f"{item.id}{suffix}", "pairwise", text, answer, media, meta, row_index
        )

    def _pointwise(
        self, item: PointwiseItem, media: ResolvedMedia, row_index: int | None
    ) -> Record:
        question = check_question(item.question)
        response = check_response(item.response, "the response", self.options.max_response_chars)
        text = render(
            self.template,
            self.options.think_suffix,
            question=question,
            response=response,
            scale=item.scale,
            media=media_word(len(media.images), len(media.videos)),
        )
        answer = f"{item.score:g}"
        meta = {"scale": item.scale, "question": question, "response": response}
        return self._record(item, item.id, "pointwise", text, answer, media, meta, row_index)

    def _verifiable(
        self, item: VerifiableItem, media: ResolvedMedia, row_index: int | None
    ) -> Record:
        question = check_question(item.question)
        has_suffix = think_boxed_suffix() in question
        text = render(
            self.template, self.options.think_suffix and not has_suffix, question=question
        )
        meta = {"question": question}
        return self._record(item, item.id, "verifiable", text, item.answer, media, meta, row_index)

    def _record(
        self,
        item: Item,
        record_id: str,
        kind: str,
        text: str,
        answer: str,
        media: ResolvedMedia,
        meta: dict[str, Any],
        row_index: int | None,
    ) -> Record:
        tokens = self.count_text_tokens(text) + media.visual_tokens + CHAT_OVERHEAD_TOKENS
        limit = self.options.max_prompt_tokens
        if limit is not None and tokens > limit:
            raise RecordError(
                "prompt_too_long",
                f"the prompt is ~{tokens:,} tokens ({media.visual_tokens:,} visual), over "
                f"--max-prompt-tokens {limit:,}",
            )
        meta = {**item.meta, **meta, "prompt_tokens_est": tokens}
        if row_index is not None:
            meta["row"] = row_index
        return Record(
            id=record_id,
            source=item.source,
            kind=kind,
            prompt=user_message(text, len(media.images), len(media.videos)),
            answer=answer,
            images=media.images,
            videos=media.videos,
            meta=meta,
        )


def _other(choice: str) -> str:
    return "2" if choice == "1" else "1"


def _token_counter(tokenizer: str | None) -> Callable[[str], int]:
    """Exact counts with the model's tokenizer when given one, else a byte-based estimate."""
    if tokenizer is None:
        return text_token_estimate
    from transformers import AutoTokenizer

    loaded = AutoTokenizer.from_pretrained(tokenizer)
    return lambda text: len(loaded(text, add_special_tokens=False)["input_ids"])


def resolve_media(
    raw: RawMedia,
    resolver: MediaResolver,
    budget: PixelBudget,
    video_budget: VideoBudget,
    patch_size: int = PATCH_SIZE,
) -> ResolvedMedia:
    """Record paths and visual-token cost of an item's media, from headers, before decoding,
    for a model of this vision patch size."""
    resolved = ResolvedMedia()
    for value in raw.images:
        path, (width, height) = resolver.image(value)
        resolved.images.append(path)
        resolved.visual_tokens += image_token_count(width, height, budget, patch_size)
    for value in raw.videos:
        path, info = resolver.video(value)
        resolved.videos.append(path)
        resolved.visual_tokens += video_token_count(info, video_budget, patch_size)
    return resolved


@dataclass(frozen=True)
class PreprocessOptions:
    """Everything `mmcritic preprocess` takes besides the source and output folder."""

    format: str
    build: BuildOptions = field(default_factory=BuildOptions)
    columns: dict[str, str] = field(default_factory=dict)
    source_name: str | None = None
    media_root: str | None = None
    check_media: MediaCheck = "verify"
    limit: int | None = None
    # images larger than this (from their header) are rejected before any decode
    max_image_pixels: int = DEFAULT_MAX_IMAGE_PIXELS
    # media only under the media root: no absolute paths, `..` or symlinks leading out
    confine_media: bool = False
    # processes that parse and convert rows; 0: one per usable core for a source of at least
    # PARALLEL_FROM_ROWS rows (or of unknown length), else one. The output is the same for any.
    workers: int = 0

    def settings(self, source: Source) -> dict[str, Any]:
        """What decides the output, to refuse resuming a run under other settings."""
        build = asdict(self.build)
        build["template_text"] = load_template(self.build.template, get_format(self.format).kind)
        return {
            "source": asdict(source),
            "format": self.format,
            "build": build,
            "columns": dict(sorted(self.columns.items())),
            "source_name": self.source_name,
            "media_root": self.media_root,
            "check_media": self.check_media,
            "max_image_pixels": self.max_image_pixels,
            "confine_media": self.confine_media,
        }


class RowConverter:
    """Raw row -> records for one source format, with media resolved under `out_dir`."""

    def __init__(self, options: PreprocessOptions, media_root: Path, out_dir: Path):
        self.format = get_format(options.format)
        self.format_options = FormatOptions(options.columns, options.source_name)
        self.builder = RecordBuilder(options.build, self.format.kind)
        self.resolver = MediaResolver(
            out_dir,
            media_root,
            options.check_media,
            options.max_image_pixels,
            options.confine_media,
        )
        self.budget = PixelBudget(options.build.min_pixels, options.build.max_pixels)
        self.options = options.build

    def convert(self, index: int, row: dict[str, Any]) -> list[Record]:
        """The records for one row; raises RecordError saying why there are none."""
        item = self.format.parse(row, index, self.format_options)
        media = resolve_media(
            item.media, self.resolver, self.budget, self.options.video, self.options.patch_size
        )
        return self.builder.build(item, media, index)


def preprocess(
    source: Source,
    out_dir: Path,
    options: PreprocessOptions,
    mode: WriteMode = "new",
    show_progress: bool = True,
    checkpoint_every: int = 1000,
) -> dict[str, Any]:
    """Converts a raw preference source into a verifiable dataset folder; returns the stats.

    Every row ends in the writer, as records or as a rejection; an exception that is not a
    RecordError (a crash) still leaves a checkpoint that `mode="resume"` continues from. With
    `options.workers` > 1, rows are parsed and converted in worker processes, and written here
    in input order, so the folder is byte for byte the one a single process writes. The
    output folder is locked while it is written (`mmcritic.data.folder_lock`).
    """
    get_format(options.format)  # an unknown format is named before the source is looked at
    source.check()
    with folder_lock(out_dir):
        return _preprocess(source, out_dir, options, mode, show_progress, checkpoint_every)


def _preprocess(
    source: Source,
    out_dir: Path,
    options: PreprocessOptions,
    mode: WriteMode,
    show_progress: bool,
    checkpoint_every: int,
) -> dict[str, Any]:
    media_root = Path(options.media_root) if options.media_root else source.base_dir
    writer = DatasetWriter(out_dir, options.settings(source), mode, checkpoint_every)
    total = source.row_count()
    if options.limit is not None:
        total = options.limit if total is None else min(total, options.limit)
    bar = tqdm(
        total=total,
        initial=writer.rows_done,
        unit="row",
        disable=not show_progress,
        desc=f"preprocess {options.format}",
    )
    rows = iter_raw_rows(source, start=writer.rows_done)
    if options.limit is not None:
        rows = islice(rows, max(options.limit - writer.rows_done, 0))
    workers = options.workers or auto_workers(total)
    done = 0
    try:
        for converted in _converted_rows(rows, (options, media_root, out_dir), workers):
            for position, (index, rejection, row) in enumerate(converted.rejected):
                _log_rejection(writer.stats.rejected + position, index, row, rejection)
            writer.add_rows(converted)
            bar.update(converted.rows)
            if (done + converted.rows) // PROGRESS_EVERY > done // PROGRESS_EVERY:
                bar.set_postfix(written=writer.stats.written, rejected=writer.stats.rejected)
            done += converted.rows
    finally:
        bar.close()
        writer.checkpoint()
    stats = writer.close()
    logger.info("preprocess %s -> %s: %s", source.location, out_dir, stats)
    return stats


ConverterArgs = tuple[PreprocessOptions, Path, Path]
_worker_converter: RowConverter | None = None


def auto_workers(rows: int | None) -> int:
    """One worker per usable core, for inputs long enough to repay starting them."""
    if rows is not None and rows < PARALLEL_FROM_ROWS:
        return 1
    return min(usable_cores(), MAX_AUTO_WORKERS)


def _converted_rows(
    rows: Iterator[tuple[int, bytes | dict[str, Any]]],
    converter_args: ConverterArgs,
    workers: int,
) -> Iterator[ConvertedRows]:
    """The rows converted, in input order: one at a time in this process (so a crash loses no
    finished row), or in chunks in `workers` processes when there are several, with a bounded
    number of chunks in flight so memory does not grow with the input."""
    if workers <= 1:
        converter = RowConverter(*converter_args)
        for numbered in rows:
            yield convert_rows(converter, [numbered])
        return
    # forkserver: workers start from a clean server process, not from this one and whatever
    # threads it runs; spawn where there is no forkserver
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    with context.Pool(workers, _start_worker, converter_args) as pool:
        pending: deque = deque()
        for chunk in _chunks(rows, CHUNK_ROWS):
            pending.append(pool.apply_async(_convert_chunk, (chunk,)))
            if len(pending) >= CHUNKS_IN_FLIGHT_PER_WORKER * workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _chunks(rows: Iterator[Any], size: int) -> Iterator[list[Any]]:
    while chunk := list(islice(rows, size)):
        yield chunk


def _start_worker(*converter_args: Any) -> None:
    global _worker_converter
    _worker_converter = RowConverter(*converter_args)


def _convert_chunk(chunk: list[tuple[int, bytes | dict[str, Any]]]) -> ConvertedRows:
    assert _worker_converter is not None, "the pool's initializer builds the converter"
    return convert_rows(_worker_converter, chunk)


def convert_rows(
    converter: RowConverter, rows: Iterable[tuple[int, bytes | dict[str, Any]]]
) -> ConvertedRows:
    """Numbered raw rows (text or a dataset's dicts) through parsing and conversion."""
    lines: list[str] = []
    records: list[tuple[str, str, str]] = []
    accepted: list[tuple[int, int]] = []
    rejected: list[tuple[int, RecordError, dict[str, Any] | None]] = []
    for index, raw in rows:
        row = read_row(raw)
        built, err = _convert_row(converter, index, row)
        if err is not None:
            rejected.append((index, err, None if isinstance(row, RecordError) else row))
            continue
        accepted.append((index, len(built)))
        for record in built:
            lines.append(record.to_json())
            records.append((record.id, record.kind, record.answer))
    text = "".join(line + "\n" for line in lines).encode()
    return ConvertedRows(text, records, accepted, rejected)


def _convert_row(
    converter: RowConverter, index: int, row: dict[str, Any] | RecordError
) -> tuple[list[Record], RecordError | None]:
    """A row's records, or the reason it has none. No row can stop the run: an exception no
    check foresaw is still that row's rejection (`unexpected_error`), logged with its traceback
    and counted in stats.json, so the bug is visible and the other rows are converted."""
    if isinstance(row, RecordError):
        return [], row
    try:
        return converter.convert(index, row), None
    except RecordError as err:
        return [], err
    except Exception as err:
        logger.exception("row %d raised %s; rejected as unexpected_error", index, type(err))
        return [], RecordError("unexpected_error", f"{type(err).__name__}: {err}"[:1000])


def _log_rejection(rejected_so_far: int, index: int, row: Any, err: RecordError) -> None:
    record_id = row.get("id") if isinstance(row, dict) else None
    name = f"row {index}" + (f" (id {record_id!r})" if record_id is not None else "")
    if rejected_so_far < LOGGED_REJECTIONS:
        logger.warning("rejected %s: %s: %s", name, err.reason, err.message)
    elif rejected_so_far == LOGGED_REJECTIONS:
        logger.warning("further rejections are logged only in rejected.jsonl")
    logger.debug("rejected %s: %s: %s", name, err.reason, err.message)
