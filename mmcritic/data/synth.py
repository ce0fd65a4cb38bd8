"""Synthetic critic tasks whose truth is known by construction.

Each item draws media (a Pillow image or a PyAV mp4), asks a question about it, and pairs a
correct response with a wrong one. Labels are balanced exactly (half the items put the correct
response first), ties are optional (both responses correct, worded differently), and each item
carries a short rationale so a supervised warm start has something to imitate. The records go
through the same RecordBuilder as converted data, so prompts cannot drift between the two.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
from PIL import Image, ImageDraw

from mmcritic.data.convert import BuildOptions, RecordBuilder, resolve_media
from mmcritic.data.dataset import DatasetWriter
from mmcritic.data.formats.base import PairwiseItem, RawMedia, VerifiableItem
from mmcritic.data.media import MediaResolver, PixelBudget
from mmcritic.data.prompts import reasoned_answer
from mmcritic.data.schema import MEDIA_DIR
from mmcritic.rewards.answers import as_judged
from mmcritic.text import json_text

# how pair responses are worded: one short sentence, or a policy's reasoned answer as a critic
# is shown it (`Truth.reasoned`)
ResponseStyle = Literal["short", "reasoned"]
RESPONSE_STYLES: tuple[ResponseStyle, ...] = get_args(ResponseStyle)

IMAGE_SIDE = 112
BACKGROUND = (128, 128, 128)
COLORS = {
    "red": (220, 30, 30),
    "green": (30, 170, 60),
    "blue": (30, 70, 220),
    "yellow": (240, 220, 30),
    "purple": (140, 40, 180),
    "orange": (250, 140, 20),
}
SHAPES = ("circle", "square", "triangle")
MAX_COUNT = 6
DIRECTIONS = ("left", "right", "up", "down")
VIDEO_SIDE = 64
VIDEO_FRAMES = 16
VIDEO_FPS = 8


@dataclass(frozen=True)
class Truth:
    """What one synthetic item shows, and the answers a critic should tell apart."""

    question: str
    correct: str
    wrong: str
    paraphrase: str
    observation: str
    # the observation as a wrong answer would state it (the wrong colour, count, direction)
    wrong_observation: str
    right_word: str
    wrong_word: str
    facts: dict[str, Any]

    def rationale(self, tie: bool) -> str:
        """What a careful judge would think: what the media shows, then which response says so."""
        if tie:
            return f"{self.observation}. Both responses say {self.right_word}: equally good."
        return (
            f"{self.observation}. The response that says {self.right_word} is right; the one that "
            f"says {self.wrong_word} is wrong."
        )

    def reasoned(self, right: bool) -> str:
        """A response as a critic is shown a policy's answer to the synthetic question (the
        questions' SFT target, reasoning and a boxed answer, through `as_judged`), right or
        wrong."""
        if right:
            answer = reasoned_answer(f"{self.observation}.", self.right_word)
        else:
            answer = reasoned_answer(f"{self.wrong_observation}.", self.wrong_word)
        return as_judged(answer)


@dataclass(frozen=True)
class SynthTask:
    name: str
    modality: str
    make: Callable[[random.Random, Path, list[str]], Truth]
    description: str


def _draw_shape(draw: ImageDraw.ImageDraw, shape: str, box: tuple[int, int, int, int], fill):
    left, top, right, bottom = box
    if shape == "circle":
        draw.ellipse(box, fill=fill)
    elif shape == "square":
        draw.rectangle(box, fill=fill)
    else:
        draw.polygon([((left + right) // 2, top), (right, bottom), (left, bottom)], fill=fill)


def _one_shape(rng: random.Random, path: Path, palette: list[str]) -> tuple[str, str, str]:
    """Draws one shape of a palette colour at a random place and size; returns its colour, a
    wrong colour from the palette, and its shape."""
    color, wrong = rng.sample(palette, 2)
    shape = rng.choice(SHAPES)
    size = rng.randint(40, 80)
    left, top = rng.randint(0, IMAGE_SIDE - size), rng.randint(0, IMAGE_SIDE - size)
    image = Image.new("RGB", (IMAGE_SIDE, IMAGE_SIDE), BACKGROUND)
    _draw_shape(ImageDraw.Draw(image), shape, (left, top, left + size, top + size), COLORS[color])
    image.save(path.with_suffix(".png"))
    return color, wrong, shape


def _shown(color: str, shape: str) -> str:
    return f"The image shows one {color} {shape} on a grey background"


def _make_color(rng: random.Random, path: Path, palette: list[str]) -> Truth:
    color, wrong, shape = _one_shape(rng, path, palette)
    return Truth(
        question="What colour is the shape in the image?",
        correct=f"The shape is {color}.",
        wrong=f"The shape is {wrong}.",
        paraphrase=f"It is a {color} {shape}.",
        observation=_shown(color, shape),
        wrong_observation=_shown(wrong, shape),
        right_word=color,
        wrong_word=wrong,
        facts={"color": color, "shape": shape, "wrong": wrong},
    )


def _make_shape(rng: random.Random, path: Path, palette: list[str]) -> Truth:
    color, _, shape = _one_shape(rng, path, palette)
    wrong = rng.choice([other for other in SHAPES if other != shape])
    return Truth(
        question="What shape is in the image?",
        correct=f"It is a {shape}.",
        wrong=f"It is a {wrong}.",
        paraphrase=f"The image shows a {shape}.",
        observation=_shown(color, shape),
        wrong_observation=_shown(color, wrong),
        right_word=shape,
        wrong_word=wrong,
        facts={"color": color, "shape": shape, "wrong": wrong},
    )


def _make_yes_no(rng: random.Random, path: Path, palette: list[str]) -> Truth:
    """ "Is the shape X?", asked about its own colour half the time, so yes and no are even."""
    color, other, shape = _one_shape(rng, path, palette)
    asked = rng.choice((color, other))
    right, wrong = ("yes", "no") if asked == color else ("no", "yes")
    return Truth(
        question=f"Is the shape in the image {asked}?",
        correct=f"{right.capitalize()}, the shape is {color}.",
        wrong=f"{wrong.capitalize()}, the shape is {asked if asked != color else other}.",
        paraphrase=f"{right.capitalize()}: it is a {color} {shape}.",
        observation=_shown(color, shape),
        wrong_observation=_shown(asked if asked != color else other, shape),
        right_word=right,
        wrong_word=wrong,
        facts={"color": color, "shape": shape, "asked": asked},
    )


def _make_describe(rng: random.Random, path: Path, palette: list[str]) -> Truth:
    """A short free answer naming the colour and the shape ("a red circle")."""
    color, wrong, shape = _one_shape(rng, path, palette)
    right_words, wrong_words = _with_article(f"{color} {shape}"), _with_article(f"{wrong} {shape}")
    return Truth(
        question="Describe the image in a few words.",
        correct=f"{right_words.capitalize()} on a grey background.",
        wrong=f"{wrong_words.capitalize()} on a grey background.",
        paraphrase=f"One {color} {shape}.",
        observation=_shown(color, shape),
        wrong_observation=_shown(wrong, shape),
        right_word=right_words,
        wrong_word=wrong_words,
        facts={"color": color, "shape": shape, "wrong": wrong},
    )


def _with_article(words: str) -> str:
    return f"{'an' if words[0] in 'aeiou' else 'a'} {words}"


def _make_count(rng: random.Random, path: Path, palette: list[str]) -> Truth:
    count = rng.randint(1, MAX_COUNT)
    wrong = rng.choice([n for n in range(1, MAX_COUNT + 1) if n != count])
    cell = IMAGE_SIDE // 3
    image = Image.new("RGB", (IMAGE_SIDE, IMAGE_SIDE), BACKGROUND)
    draw = ImageDraw.Draw(image)
    color = rng.choice(palette)
    for slot in rng.sample(range(9), count):
        left, top = (slot % 3) * cell + 6, (slot // 3) * cell + 6
        _draw_shape(
            draw, rng.choice(SHAPES), (left, top, left + cell - 12, top + cell - 12), COLORS[color]
        )
    image.save(path.with_suffix(".png"))
    noun = "shape" if count == 1 else "shapes"
    return Truth(
        question="How many shapes are in the image?",
        correct=_count_phrase(count),
        wrong=_count_phrase(wrong),
        paraphrase=f"I count {count} {noun}.",
        observation=f"Counting the {color} shapes in the image gives {count}",
        wrong_observation=f"Counting the {color} shapes in the image gives {wrong}",
        right_word=str(count),
        wrong_word=str(wrong),
        facts={"count": count, "wrong": wrong},
    )


def _count_phrase(count: int) -> str:
    return "There is 1 shape." if count == 1 else f"There are {count} shapes."


def _make_motion(rng: random.Random, path: Path, palette: list[str]) -> Truth:
    direction, wrong = rng.sample(DIRECTIONS, 2)
    write_motion_video(path.with_suffix(".mp4"), direction, rng)
    return Truth(
        question="In which direction does the dot move in the video?",
        correct=f"The dot moves {direction}.",
        wrong=f"The dot moves {wrong}.",
        paraphrase=f"It travels {direction}.",
        observation=f"Across the frames the dot travels {direction}",
        wrong_observation=f"Across the frames the dot travels {wrong}",
        right_word=direction,
        wrong_word=wrong,
        facts={"direction": direction, "wrong": wrong},
    )


def write_motion_video(
    path: Path,
    direction: str,
    rng: random.Random,
    side: int = VIDEO_SIDE,
    frames: int = VIDEO_FRAMES,
    fps: int = VIDEO_FPS,
) -> None:
    """An H.264 mp4 of a white dot crossing a dark square frame in `direction`."""
    import av

    radius, margin = max(6, side // 12), max(10, side // 8)
    across = np.linspace(margin, side - margin, frames).round().astype(int)
    fixed = rng.randint(margin, side - margin)
    positions = {
        "right": [(x, fixed) for x in across],
        "left": [(x, fixed) for x in across[::-1]],
        "down": [(fixed, y) for y in across],
        "up": [(fixed, y) for y in across[::-1]],
    }[direction]
    ys, xs = np.mgrid[0:side, 0:side]
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width = stream.height = side
        stream.pix_fmt = "yuv420p"
        for x, y in positions:
            frame = np.full((side, side, 3), 20, dtype=np.uint8)
            frame[(xs - x) ** 2 + (ys - y) ** 2 <= radius**2] = 255
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode())


TASKS: dict[str, SynthTask] = {
    task.name: task
    for task in (
        SynthTask("color", "image", _make_color, "colour of one shape"),
        SynthTask("count", "image", _make_count, "number of shapes (1-6)"),
        SynthTask("shape", "image", _make_shape, "which shape (circle, square, triangle)"),
        SynthTask("yesno", "image", _make_yes_no, "yes or no: is the shape a given colour"),
        SynthTask("describe", "image", _make_describe, "a few words: the colour and the shape"),
        SynthTask("motion", "video", _make_motion, "direction a dot moves in a short mp4"),
    )
}


def get_task(name: str) -> SynthTask:
    if name not in TASKS:
        raise ValueError(f"unknown synthetic task {name!r}; valid tasks: {sorted(TASKS)}")
    return TASKS[name]


def synthesize(
    task_name: str,
    n: int,
    out_dir: Path,
    seed: int = 0,
    tie_fraction: float = 0.0,
    overwrite: bool = False,
    build: BuildOptions | None = None,
    colors: int = len(COLORS),
    kind: Literal["pairwise", "verifiable"] = "pairwise",
    responses: ResponseStyle = "short",
) -> dict[str, Any]:
    """Writes `n` synthetic items of one task to a dataset folder; returns the stats.

    `kind="pairwise"` writes critic items (a correct and a wrong response to judge);
    `kind="verifiable"` writes the same questions for a policy to answer, the true short answer
    (the colour, the count, the direction) as the answer a reward checks. `colors` narrows the
    palette (first entries of COLORS): fewer colours make an easier task, which lets a very
    small model show learning within minutes. `responses="reasoned"` writes the pairs'
    responses the way a policy answers the same questions (`Truth.reasoned`) instead of one
    short sentence, so a critic trained on them can judge such a policy's answers.
    """
    task = get_task(task_name)
    palette = _palette(n, colors)
    if not 0.0 <= tie_fraction <= 1.0:
        raise ValueError(f"the tie fraction must be in [0, 1], got {tie_fraction}")
    if responses not in RESPONSE_STYLES:
        raise ValueError(f"responses must be one of {RESPONSE_STYLES}, got {responses!r}")
    if tie_fraction and kind != "pairwise":
        raise ValueError("ties are pairs of equally good responses: only for kind='pairwise'")
    rng = random.Random(seed)
    labels = _balanced_labels(n, tie_fraction, rng)
    base = build or BuildOptions(max_prompt_tokens=None)
    options = BuildOptions(
        **{
            **base.__dict__,
            "ties": "keep" if tie_fraction else "drop",
            "shuffle": False,
            "seed": seed,
        }
    )
    builder = RecordBuilder(options, kind)
    settings = {"task": task_name, "n": n, "seed": seed, "ties": tie_fraction, "colors": colors}
    if kind != "pairwise":
        settings["kind"] = kind
    if responses != "short":
        settings["responses"] = responses
    writer = DatasetWriter(out_dir, settings, "overwrite" if overwrite else "new")
    (out_dir / MEDIA_DIR).mkdir(exist_ok=True)
    resolver = MediaResolver(out_dir, out_dir)
    budget = PixelBudget(options.min_pixels, options.max_pixels)
    for index, label in enumerate(labels):
        if kind == "pairwise":
            item = _item(task, index, label, rng, out_dir, palette, responses)
        else:
            item = _question(task, index, rng, out_dir, palette)
        media = resolve_media(item.media, resolver, budget, options.video)
        writer.add_row(builder.build(item, media, index))
    return writer.close()


# the file `write_critic_benchmark` writes, in VL-RewardBench's row schema
BENCHMARK_FILE = "test.jsonl"


def write_critic_benchmark(
    task_name: str,
    n: int,
    out_dir: Path,
    seed: int = 0,
    colors: int = len(COLORS),
    overwrite: bool = False,
) -> dict[str, Any]:
    """A local critic benchmark of `n` synthetic image pairs in VL-RewardBench's row schema
    (`id`, `query`, `response` [two], `human_ranking` [0 marks the better], `image`), media
    beside it, so `mmcritic eval --tasks vl_rewardbench --task-data
    vl_rewardbench=OUT/test.jsonl` runs with no download; the better response is first in half
    the rows."""
    task = get_task(task_name)
    if task.modality != "image":
        raise ValueError(f"a critic benchmark holds images; task {task_name!r} makes videos")
    palette = _palette(n, colors)
    target = out_dir / BENCHMARK_FILE
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} exists; pass --overwrite to replace it")
    (out_dir / MEDIA_DIR).mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    rows = []
    for index, label in enumerate(_balanced_labels(n, 0.0, rng)):
        truth, media = _drawn(task, index, rng, out_dir, palette)
        better_first = label == "1"
        rows.append(
            {
                "id": f"synth-{task_name}-{index:06d}",
                "query": truth.question,
                "response": [truth.correct, truth.wrong][:: 1 if better_first else -1],
                "human_ranking": [0, 1] if better_first else [1, 0],
                "image": media.images[0],
            }
        )
    target.write_text("".join(json_text(row) + "\n" for row in rows))
    return {"benchmark": str(target), "rows": n, "task": "vl_rewardbench", "seed": seed}


def _palette(n: int, colors: int) -> list[str]:
    """The first `colors` colours, after checking the item count and palette size."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 2 <= colors <= len(COLORS):
        raise ValueError(f"colors must be between 2 and {len(COLORS)}, got {colors}")
    return list(COLORS)[:colors]


def _balanced_labels(n: int, tie_fraction: float, rng: random.Random) -> list[str]:
    ties = round(n * tie_fraction)
    rest = n - ties
    labels = ["tie"] * ties + ["1"] * (rest - rest // 2) + ["2"] * (rest // 2)
    rng.shuffle(labels)
    return labels


def _drawn(
    task: SynthTask, index: int, rng: random.Random, out_dir: Path, palette: list[str]
) -> tuple[Truth, RawMedia]:
    stem = out_dir / MEDIA_DIR / f"{task.name}_{index:06d}"
    truth = task.make(rng, stem, palette)
    suffix = ".mp4" if task.modality == "video" else ".png"
    return truth, RawMedia(**{f"{task.modality}s": [f"{MEDIA_DIR}/{stem.name}{suffix}"]})


def _question(
    task: SynthTask, index: int, rng: random.Random, out_dir: Path, palette: list[str]
) -> VerifiableItem:
    truth, media = _drawn(task, index, rng, out_dir, palette)
    return VerifiableItem(
        id=f"synth_{task.name}_question_{index:06d}",
        source=f"synth-{task.name}",
        question=truth.question,
        answer=truth.right_word,
        media=media,
        meta={"task": task.name, "rationale": f"{truth.observation}.", **truth.facts},
    )


def _item(
    task: SynthTask,
    index: int,
    label: str,
    rng: random.Random,
    out_dir: Path,
    palette: list[str],
    responses: ResponseStyle,
):
    truth, media = _drawn(task, index, rng, out_dir, palette)
    correct, wrong = (truth.correct, truth.wrong)
    if responses == "reasoned":
        correct, wrong = truth.reasoned(right=True), truth.reasoned(right=False)
    if label == "tie":
        shown = (correct, truth.paraphrase)
    else:
        shown = (correct, wrong) if label == "1" else (wrong, correct)
    return PairwiseItem(
        id=f"synth_{task.name}_{index:06d}",
        source=f"synth-{task.name}",
        question=truth.question,
        responses=shown,
        better=label,
        media=media,
        meta={
            "task": task.name,
            "rationale": truth.rationale(tie=label == "tie"),
            **truth.facts,
        },
    )
