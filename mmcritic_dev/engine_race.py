"""The same eval slice through the hf engine and through `transformers serve` servers, in turns.

Every configuration answers the same requests (the r1 policy prompt over generated pictures of
several sizes, greedy) with the same total CPU threads: the hf engine's torch threads, one
server's, or split over two servers. Rounds rotate the order, the first round is dropped, and
each configuration reports its median samples per second and the share of its answers equal to
the hf engine's (outer whitespace aside: transformers serve trims it).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from mmcritic.data.prompts import load_template, render
from mmcritic.inference import Media
from mmcritic.inference.engines import Engine, EngineOptions, Request, Sampling, open_engine
from mmcritic.inference.engines.options import server_options
from mmcritic.inference.engines.served import ServedEngine
from mmcritic_dev.local_server import LocalServer, start_server

QUESTIONS = (
    "What colour is the shape in the picture?",
    "How many shapes are there?",
    "Is the shape on the left or on the right?",
    "Describe the picture in one sentence.",
)


@dataclass(frozen=True)
class RaceResult:
    """One configuration's measured rounds."""

    engine: str
    servers: int
    samples_per_s: list[float]
    same_answers: float

    def line(self) -> str:
        median = statistics.median(self.samples_per_s)
        return (
            f"engine={self.engine} servers={self.servers} samples_per_s={median:.3f} "
            f"same_answers={self.same_answers:.3f}"
        )


def eval_slice(count: int) -> list[Request]:
    """`count` policy questions about pictures of several sizes, asked the r1 way."""
    colours = [(200, 40, 40), (40, 160, 60), (40, 60, 200), (220, 200, 40)]
    template = load_template(None, "verifiable")
    requests = []
    for index in range(count):
        side = 112 + 56 * (index % 4)
        picture = Image.new("RGB", (side, side * 3 // 4), colours[index % len(colours)])
        question = f"{QUESTIONS[index % len(QUESTIONS)]} (item {index})"
        text = render(template, think_suffix=True, question=question)
        requests.append(Request(text, Media.image(picture)))
    return requests


def race_engines(
    model_dir: Path,
    work: Path,
    requests: Sequence[Request],
    max_new_tokens: int,
    threads: int,
    rounds: int,
) -> list[RaceResult]:
    """Runs every configuration `rounds` times in rotating order, the first round dropped."""
    import torch

    torch.set_num_threads(threads)
    sampling = Sampling(max_new_tokens=max_new_tokens)
    hf = open_engine(EngineOptions("hf", str(model_dir), "cpu", "float32", batch_size=8))
    one = [start_server(model_dir, work / "one.log", threads=threads)]
    two = [
        start_server(model_dir, work / f"two_{i}.log", threads=max(threads // 2, 1))
        for i in range(2)
    ]
    try:
        engines: dict[tuple[str, int], Engine] = {
            ("hf", 0): hf,
            ("openai", 1): _served(model_dir, one),
            ("openai", 2): _served(model_dir, two),
        }
        return _rounds(engines, requests, sampling, rounds)
    finally:
        for server in (*one, *two):
            server.kill()


def _served(model_dir: Path, servers: list[LocalServer]) -> ServedEngine:
    urls = tuple(server.url for server in servers)
    return ServedEngine(server_options(EngineOptions("openai", str(model_dir), base_urls=urls)))


def _rounds(
    engines: dict[tuple[str, int], Engine],
    requests: Sequence[Request],
    sampling: Sampling,
    rounds: int,
) -> list[RaceResult]:
    keys = list(engines)
    rates: dict[tuple[str, int], list[float]] = {key: [] for key in keys}
    answers: dict[tuple[str, int], list[str]] = {}
    for round_index in range(rounds + 1):
        order = keys[round_index % len(keys) :] + keys[: round_index % len(keys)]
        for key in order:
            seconds, texts = _timed(lambda key=key: engines[key].generate(requests, sampling))
            if round_index > 0:  # the first round warms caches and servers
                rates[key].append(len(requests) / seconds)
            answers[key] = [row[0].strip() for row in texts]
    reference = answers[("hf", 0)]
    return [
        RaceResult(
            name, servers, rates[(name, servers)], _same(answers[(name, servers)], reference)
        )
        for name, servers in keys
    ]


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def _same(texts: Sequence[str], reference: Sequence[str]) -> float:
    return sum(a == b for a, b in zip(texts, reference, strict=True)) / len(reference)
