"""Text generation backends behind the critic and the policy.

Critic and policy only build prompts and read answers; a backend turns (prompt text, media)
requests into completions. transformers' `generate` is the default and runs anywhere; vLLM is an
optional, much faster backend on GPUs, selected by loading the model with `backend="vllm"`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from mmcritic.data.prompts import user_message
from mmcritic.inference.media import Media, MediaInput, MediaKind, media_counts, media_list
from mmcritic.models.generation import generate
from mmcritic.models.loading import load_model, load_processor, resolve_device, resolve_dtype

logger = logging.getLogger(__name__)

BackendName = Literal["transformers", "vllm"]


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

    def loaded(self, kind: MediaKind) -> list[Any]:
        """The images (PIL) or videos (`LoadedVideo`) of this prompt, loaded, in the order the
        message places them."""
        return [item.load() for item in self._in_order() if item.kind == kind]

    def _in_order(self) -> list[Media]:
        items = media_list(self.media)
        if self.layout is None:
            return list(items)
        return [items[part] for part in self.layout if isinstance(part, int)]


@dataclass(frozen=True)
class Sampling:
    """How to decode; temperature 0 is greedy. The same seed and batch size give the same text."""

    max_new_tokens: int = 512
    n: int = 1
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0


class Backend(Protocol):
    def generate(self, requests: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        """`sampling.n` completions for each request, in request order."""
        ...


class TransformersBackend:
    """`model.generate` in batches of `batch_size` prompts (each with `n` samples)."""

    def __init__(self, model: Any, processor: Any, batch_size: int = 8):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.model, self.processor, self.batch_size = model, processor, batch_size

    def generate(self, requests: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        outputs: list[list[str]] = []
        for start in range(0, len(requests), self.batch_size):
            outputs += self._generate_batch(requests[start : start + self.batch_size], sampling)
        return outputs

    def _generate_batch(self, batch: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        return generate(
            self.model,
            self.processor,
            [request.message() for request in batch],
            [request.loaded("image") for request in batch],
            max_new_tokens=sampling.max_new_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            num_samples=sampling.n,
            seed=sampling.seed,
            videos=[request.loaded("video") for request in batch],
        )


class VLLMBackend:
    """vLLM's offline `LLM.generate` with Qwen's multimodal prompt dict; vLLM batches itself."""

    def __init__(self, llm: Any, processor: Any):
        self.llm, self.processor = llm, processor

    def generate(self, requests: Sequence[Request], sampling: Sampling) -> list[list[str]]:
        from vllm import SamplingParams

        params = SamplingParams(
            n=sampling.n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens,
            seed=sampling.seed,
        )
        outputs = self.llm.generate([self._prompt(r) for r in requests], params, use_tqdm=False)
        return [[sample.text for sample in output.outputs] for output in outputs]

    def _prompt(self, request: Request) -> dict[str, Any]:
        text = self.processor.apply_chat_template(
            request.message(), tokenize=False, add_generation_prompt=True
        )
        prompt: dict[str, Any] = {"prompt": text}
        images, videos = request.loaded("image"), request.loaded("video")
        data: dict[str, Any] = {"image": _one_or_all(images)} if images else {}
        if videos:
            data["video"] = _one_or_all([video.frames for video in videos])
            fps = _one_or_all([video.sample_fps for video in videos])
            prompt["mm_processor_kwargs"] = {"fps": fps}
        if data:
            prompt["multi_modal_data"] = data
        return prompt


def _one_or_all(values: list[Any]) -> Any:
    """vLLM takes one item bare and several as a list; a one-item list of frame tensors could be
    read as one video rather than a list of one."""
    return values[0] if len(values) == 1 else values


def make_backend(model: Any, processor: Any, batch_size: int = 8) -> Backend:
    """The backend matching what `load_model_for_inference` returned."""
    if type(model).__module__.startswith("vllm"):
        return VLLMBackend(model, processor)
    return TransformersBackend(model, processor, batch_size)


def load_model_for_inference(
    path: str,
    device: str = "auto",
    dtype: str = "auto",
    backend: BackendName = "transformers",
    **vllm_kwargs: Any,
) -> tuple[Any, Any]:
    """(model, processor) ready for `Critic` and `Policy`: in eval mode on the chosen device, or
    a vLLM engine when `backend="vllm"` (extra keyword arguments go to `vllm.LLM`)."""
    if backend == "vllm":
        return _load_vllm(path, dtype, **vllm_kwargs), load_processor(path)
    if backend != "transformers":
        raise ValueError(f"unknown backend {backend!r}; choose 'transformers' or 'vllm'")
    resolved_device = resolve_device(device)
    model = load_model(path, resolve_dtype(dtype, resolved_device)).to(resolved_device).eval()
    logger.info("loaded %s on %s", path, resolved_device)
    return model, load_processor(path)


class FromPretrained:
    """`from_pretrained` for the classes built from `(model, processor, **options)`."""

    @classmethod
    def from_pretrained(
        cls,
        path: str,
        device: str = "auto",
        dtype: str = "auto",
        backend: BackendName = "transformers",
        **kwargs: Any,
    ) -> Any:
        """Loads the model with `load_model_for_inference`; other arguments go to the class."""
        model, processor = load_model_for_inference(path, device, dtype, backend)
        return cls(model, processor, **kwargs)


def _load_vllm(path: str, dtype: str, **kwargs: Any) -> Any:
    try:
        from vllm import LLM
    except ImportError as err:
        raise ImportError(
            "the vllm backend needs vLLM, which is not installed; run `pip install vllm` "
            "(GPU only) or use backend='transformers'"
        ) from err
    # vLLM reserves memory for the most media a prompt may hold: MMMU asks about up to 7
    # images, BLINK about 4; pass limit_mm_per_prompt to change it.
    kwargs.setdefault("limit_mm_per_prompt", {"image": 8, "video": 2})
    return LLM(model=path, dtype=dtype, **kwargs)
