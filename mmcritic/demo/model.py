"""The demo's only door to the model: `mmcritic.inference`'s critic and policy, plus streaming.

Judgements come from `Critic` and `best_of_n` unchanged, so the demo shows exactly what the
library and the command line return (same prompts, same verdict parser). Streaming is added from
outside: the critic's backend is given a model wrapper whose `generate` also feeds a streamer,
and the critic runs in a worker thread while the texts decoded so far are handed to the page.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from PIL import Image
from transformers.generation.streamers import BaseStreamer

from mmcritic.inference import (
    Answer,
    BestOfN,
    Comparison,
    Critic,
    Media,
    Policy,
    Score,
    best_of_n,
    load_model_for_inference,
)
from mmcritic.inference.engines import Engine

T = TypeVar("T")


class BatchTextStreamer(BaseStreamer):
    """The decoded text so far of every row of a batched `generate`.

    transformers' `TextIteratorStreamer` takes one row only; the critic judges both orders of a
    pair in one batch, and both rationales should grow on the page side by side. Iterating
    yields the latest snapshot (one string per row), skipping snapshots the reader was too slow
    to see."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        self._rows: list[list[int]] | None = None
        self._prompt_seen = False
        self._snapshots: queue.Queue[list[str] | None] = queue.Queue()

    def put(self, value: Any) -> None:
        if not self._prompt_seen:  # generate's first call hands over the prompt ids
            self._prompt_seen = True
            return
        tokens = value.reshape(value.shape[0], -1).tolist()
        if self._rows is None:
            self._rows = [[] for _ in tokens]
        for row, new in zip(self._rows, tokens, strict=True):
            row.extend(new)
        self._snapshots.put(self.tokenizer.batch_decode(self._rows, skip_special_tokens=True))

    def end(self) -> None:
        self._snapshots.put(None)

    def __iter__(self) -> Iterator[list[str]]:
        while (snapshot := self._snapshots.get()) is not None:
            while not self._snapshots.empty():
                newer = self._snapshots.get()
                if newer is None:
                    yield snapshot
                    return
                snapshot = newer
            yield snapshot


class _StreamingModel:
    """Stands in for the model inside the critic's backend; `generate` also feeds `streamer`."""

    def __init__(self, model: Any):
        self._model = model
        self.streamer: BaseStreamer | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        return self._model.generate(*args, streamer=self.streamer, **kwargs)


class DemoModel:
    """A critic and a policy sharing one loaded model, one request at a time, or sharing a
    served engine (`served`), whose critiques appear when complete rather than token by token.

    The lock serialises generation whatever queue settings the page uses: two threads calling
    `generate` on one model would only compete for the same memory and cores."""

    def __init__(self, model: Any, processor: Any, max_new_tokens: int = 512):
        self._streaming: _StreamingModel | None = _StreamingModel(model)
        self._tokenizer = processor.tokenizer
        self.critic = Critic(self._streaming, processor, max_new_tokens)
        self.policy = Policy(model, processor, max_new_tokens)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str, device: str = "auto", max_new_tokens: int = 512) -> DemoModel:
        """Loads a checkpoint folder (or hub id) with `load_model_for_inference`."""
        model, processor = load_model_for_inference(path, device=device)
        return cls(model, processor, max_new_tokens)

    @classmethod
    def served(cls, engine: Engine, max_new_tokens: int = 512) -> DemoModel:
        """Critic and policy on an engine already open (OpenAI-compatible servers)."""
        demo = cls.__new__(cls)
        demo._streaming, demo._tokenizer = None, None
        demo.critic = Critic.on(engine, max_new_tokens=max_new_tokens)
        demo.policy = Policy.on(engine, max_new_tokens=max_new_tokens)
        demo._lock = threading.Lock()
        return demo

    def compare(
        self, image: Image.Image, question: str, answer_a: str, answer_b: str, both_orders: bool
    ) -> Iterator[list[str] | Comparison]:
        """The critic's outputs so far (one text per order judged), then the `Comparison`."""
        media = Media.image(image)
        return self._streamed(
            lambda: self.critic.compare(media, question, answer_a, answer_b, both_orders)
        )

    def score(self, image: Image.Image, question: str, answer: str) -> Iterator[list[str] | Score]:
        """The critic's output so far, then the `Score`."""
        media = Media.image(image)
        return self._streamed(lambda: self.critic.score(media, question, answer))

    def answers(
        self, image: Image.Image, question: str, n: int, temperature: float, seed: int
    ) -> list[Answer]:
        """`n` sampled answers from the policy."""
        with self._lock:
            return self.policy.answer(Media.image(image), question, n, temperature, seed)

    def best_of_n(
        self, image: Image.Image, question: str, candidates: list[str], seed: int
    ) -> BestOfN:
        """The knockout bracket over `candidates`, judged by the critic."""
        with self._lock:
            return best_of_n(self.critic, Media.image(image), question, candidates, seed=seed)

    def _streamed(self, call: Callable[[], T]) -> Iterator[list[str] | T]:
        if self._streaming is None:
            with self._lock:
                result = call()
            yield result
            return
        with self._lock:
            streamer = BatchTextStreamer(self._tokenizer)
            self._streaming.streamer = streamer
            outcome: dict[str, Any] = {}
            worker = threading.Thread(target=_run, args=(call, outcome, streamer), daemon=True)
            worker.start()
            try:
                yield from streamer
            finally:
                worker.join()
                self._streaming.streamer = None
        if "error" in outcome:
            raise outcome["error"]
        yield outcome["result"]


def _run(call: Callable[[], Any], outcome: dict[str, Any], streamer: BatchTextStreamer) -> None:
    """Runs `call` in the worker thread. The stream is ended here too, so the reader stops even
    when `call` fails before or inside `generate`; an error is re-raised by the reader."""
    try:
        outcome["result"] = call()
    except Exception as err:
        outcome["error"] = err
    finally:
        streamer.end()
