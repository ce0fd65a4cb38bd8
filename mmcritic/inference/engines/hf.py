"""The in-process engine: transformers' `generate` on a loaded model, in batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mmcritic.inference.engines.base import Completions, Engine, Request, Sampling, cut_at_stop
from mmcritic.models.families import family_of
from mmcritic.models.generation import generate


class HFEngine(Engine):
    """`model.generate` in batches of `batch_size` prompts (each with `n` samples)."""

    name = "hf"

    def __init__(self, model: Any, processor: Any, batch_size: int = 8):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.model, self.processor, self.batch_size = model, processor, batch_size
        self.family = family_of(model.config)

    def try_generate(self, requests: Sequence[Request], sampling: Sampling) -> list[Completions]:
        outputs: list[Completions] = []
        for start in range(0, len(requests), self.batch_size):
            outputs += self._generate_batch(requests[start : start + self.batch_size], sampling)
        return outputs

    def _generate_batch(self, batch: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        texts = generate(
            self.model,
            self.processor,
            [request.message() for request in batch],
            [request.loaded("image", self.patch_size) for request in batch],
            max_new_tokens=sampling.max_new_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            num_samples=sampling.n,
            seed=sampling.seed,
            videos=[request.loaded("video", self.patch_size) for request in batch],
            stop=sampling.stop,
        )
        return [[cut_at_stop(text, sampling.stop) for text in samples] for samples in texts]
