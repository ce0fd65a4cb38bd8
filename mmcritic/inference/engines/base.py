"""What every engine takes and gives: requests (prompt text and media), sampling settings, and
per request either its completions or the reason it failed.

Critic, policy, Best-of-N, the eval runner, the demo, the judge and the critic reward only build
requests and read texts; an engine turns requests into completions. In-process engines fail as a
whole (an exception); a served engine can lose single requests to a dead server, and callers that
must not lose work (eval, the critic reward) ask with `try_generate` and keep the failures apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mmcritic.data.prompts import user_message
from mmcritic.data.resize import PATCH_SIZE
from mmcritic.inference.media import Media, MediaInput, MediaKind, media_counts, media_list
from mmcritic.models.families import Family

EngineName = Literal["hf", "vllm", "openai"]
ENGINE_NAMES: tuple[EngineName, ...] = ("hf", "vllm", "openai")


@dataclass(frozen=True)
class Request:
    """One prompt: the user text and what is shown with it: one `Media`, a sequence of them, or
    None for text only. By default every item comes first, images before videos, then the text
    (`user_message`). `layout` places them otherwise: text pieces and media indices in the order
    the model reads them, so MMMU's pictures can stand where its question refers to them
    (`("Compare", 0, "with", 1, ".")`); it must name every media item once."""

    text: str
    media: MediaInput
    layout: tuple[str | int, ...] | None = None

    def __post_init__(self) -> None:
        if self.layout is not None:
            slots = sorted(part for part in self.layout if isinstance(part, int))
            if slots != list(range(len(media_list(self.media)))):
                raise ValueError(
                    f"a layout must place each of the {len(media_list(self.media))} media items "
                    f"once; it places {slots}"
                )

    def message(self) -> list[dict[str, Any]]:
        """The chat message: a placeholder per image and per video, and the text."""
        if self.layout is None:
            return user_message(self.text, *media_counts(self.media))
        items = media_list(self.media)
        content = [
            {"type": "text", "text": part} if isinstance(part, str) else {"type": items[part].kind}
            for part in self.layout
        ]
        return [{"role": "user", "content": content}]

    def loaded(self, kind: MediaKind, patch_size: int = PATCH_SIZE) -> list[Any]:
        """The images (PIL) or videos (`LoadedVideo`) of this prompt, loaded on the pixel grid
        of a model with this vision patch size, in the order the message places them."""
        return [item.load(patch_size) for item in self.in_order() if item.kind == kind]

    def in_order(self) -> list[Media]:
        """The media in the order the message places them."""
        items = media_list(self.media)
        if self.layout is None:
            return list(items)
        return [items[part] for part in self.layout if isinstance(part, int)]


@dataclass(frozen=True)
class Sampling:
    """How to decode; temperature 0 is greedy. The same seed and batch size give the same text.
    Generation ends at the model's end-of-turn token or at the first of `stop`, which is left
    out of the text (as OpenAI-compatible servers leave it out). Repetition penalty and the like
    stay at the checkpoint's `generation_config`, on every engine."""

    max_new_tokens: int = 512
    n: int = 1
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestFailed:
    """A request that got no completion: where it went, after how many attempts, and why."""

    reason: str
    url: str = ""
    attempts: int = 1

    def describe(self) -> str:
        where = f" at {self.url}" if self.url else ""
        return f"failed{where} after {self.attempts} attempt(s): {self.reason}"


Completions = list[str] | RequestFailed


class LostRequests(RuntimeError):
    """Work that got no completion from the engine; the command that lost it exits non-zero."""


class EngineError(LostRequests):
    """Some requests of a call got no completion; `failures` holds them by request index."""

    def __init__(self, failures: dict[int, RequestFailed], total: int):
        self.failures = failures
        first_index, first = next(iter(failures.items()))
        super().__init__(
            f"{len(failures)} of {total} requests failed; request {first_index} {first.describe()}"
        )


class Engine(ABC):
    """Turns requests into completions. Subclasses implement `try_generate`. `family` is the
    model family behind it (`mmcritic.models.families`), None where the engine cannot tell (a
    server whose model's config is not here): media are loaded on its pixel grid, and protocols
    size media for it."""

    name: EngineName
    family: Family | None = None

    @property
    def patch_size(self) -> int:
        """The vision patch size of the model, Qwen2.5-VL's when the family is unknown (a
        server's own processor then resizes what it is sent onto its grid)."""
        return self.family.patch_size if self.family is not None else PATCH_SIZE

    @abstractmethod
    def try_generate(self, requests: Sequence[Request], sampling: Sampling) -> list[Completions]:
        """For each request, in order, `sampling.n` completion texts or why it failed."""

    def generate(self, requests: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        """`sampling.n` completions for each request, in request order; raises `EngineError`
        if any request failed."""
        outcomes = self.try_generate(requests, sampling)
        failures = {i: out for i, out in enumerate(outcomes) if isinstance(out, RequestFailed)}
        if failures:
            raise EngineError(failures, len(outcomes))
        return [out for out in outcomes if not isinstance(out, RequestFailed)]

    def describe(self) -> dict[str, Any]:
        """What results files record about the engine: its name and, for servers, their
        URLs and request counts."""
        return {"engine": self.name}


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """The text up to the first stop string, as a server returns it."""
    ends = [index for index in (text.find(word) for word in stop if word) if index >= 0]
    return text[: min(ends)] if ends else text
