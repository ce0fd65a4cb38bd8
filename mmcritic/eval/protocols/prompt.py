"""What one sample asks the model under a protocol: text and media in reading order, decoding."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Decoding:
    """How the answer is decoded: greedy at temperature 0, sampled above it."""

    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0

    def describe(self) -> dict[str, Any]:
        return asdict(self) | {"sampled": self.temperature > 0}


@dataclass(frozen=True)
class Prompt:
    """Text pieces and media slots in the order the model reads them (an int indexes
    `images + videos`), the decoding, and where the wording comes from (`source`). `images` and
    `videos` hold the row's own values; the runner loads them."""

    parts: tuple[str | int, ...]
    images: tuple[Any, ...] = ()
    videos: tuple[Any, ...] = ()
    decoding: Decoding | None = None
    source: str = ""

    @property
    def text(self) -> str:
        """The text the model reads, media left out."""
        return "".join(part for part in self.parts if isinstance(part, str))

    @property
    def layout(self) -> tuple[str | int, ...] | None:
        """The parts, or None when every item comes first and one text follows (the default
        chat layout, `mmcritic.data.prompts.user_message`)."""
        count = len(self.images) + len(self.videos)
        return None if self.parts == (*range(count), self.text) else self.parts

    def shown(self) -> str:
        """The prompt as the model reads it, each item written `<image>` or `<video>`: what a
        sample line records and the snapshot tests pin."""
        kinds = ["image"] * len(self.images) + ["video"] * len(self.videos)
        return "".join(part if isinstance(part, str) else f"<{kinds[part]}>" for part in self.parts)


def media_first(text: str, images: Sequence[Any] = (), videos: Sequence[Any] = ()) -> Prompt:
    """Every item first, images before videos, then the text: Qwen's order, and lmms-eval's
    default `doc_to_messages`."""
    slots = tuple(range(len(images) + len(videos)))
    return Prompt((*slots, text), tuple(images), tuple(videos))


@dataclass(frozen=True)
class TaskPrompt:
    """How one task asks under one protocol: a builder laying out the row's text and media,
    the decoding, and where the wording comes from. `build` takes the row and the task's
    `Problem` (policy tasks) or the `Pair` and whether to show it swapped (critic suites)."""

    build: Callable[..., Prompt]
    decoding: Decoding
    source: str

    def __call__(self, *args: Any) -> Prompt:
        return replace(self.build(*args), decoding=self.decoding, source=self.source)

    def describe(self) -> dict[str, Any]:
        return {"prompt_source": self.source, "decoding": self.decoding.describe()}
