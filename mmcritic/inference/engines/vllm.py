"""The in-process vLLM engine: `vllm.LLM.generate` with Qwen's multimodal prompt dicts.

Prompts go as chat-template text, so each image and video stands as one placeholder that vLLM's
processor expands itself (never pre-expanded pad tokens), with the media already sized by
qwen-vl-utils and the processor settings the hf engine's processor uses, so both engines encode
the same tokens (`mmcritic.models.vllm_media` holds those settings, for rollouts and here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mmcritic.inference.engines.base import Completions, Engine, Request, Sampling
from mmcritic.models.families import Family
from mmcritic.models.loading import vision_token_ids
from mmcritic.models.vllm_media import media_fields

# vLLM reserves memory for the most media a prompt may hold: MMMU asks about up to 7 images,
# BLINK about 4; pass limit_mm_per_prompt to change it.
MEDIA_PER_PROMPT = {"image": 8, "video": 2}


class VLLMEngine(Engine):
    """vLLM's offline `LLM.generate`; vLLM batches itself."""

    name = "vllm"

    def __init__(self, llm: Any, processor: Any, family: Family | None = None):
        self.llm, self.processor, self.family = llm, processor, family

    def try_generate(self, requests: Sequence[Request], sampling: Sampling) -> list[Completions]:
        prompts = [self.prompt(request) for request in requests]
        outputs = self.llm.generate(prompts, self.sampling_params(sampling), use_tqdm=False)
        return [[sample.text for sample in output.outputs] for output in outputs]

    def sampling_params(self, sampling: Sampling) -> Any:
        """vLLM's sampling settings for `sampling`, with no top-k cut (Qwen's generation config
        sets 1) and the vision placeholders suppressed, as the hf engine decodes."""
        from vllm import SamplingParams

        return SamplingParams(
            n=sampling.n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=-1,
            max_tokens=sampling.max_new_tokens,
            seed=sampling.seed,
            stop=list(sampling.stop) or None,
            logit_bias=suppressed(vision_token_ids(self.processor.tokenizer)),
        )

    def prompt(self, request: Request) -> dict[str, Any]:
        """The prompt dict vLLM expands into the tokens the hf engine encodes."""
        text = self.processor.apply_chat_template(
            request.message(), tokenize=False, add_generation_prompt=True
        )
        images = request.loaded("image", self.patch_size)
        videos = request.loaded("video", self.patch_size)
        size = self.processor.image_processor.size
        return {"prompt": text, **media_fields(images, videos, size, self.family)}


def suppressed(token_ids: Sequence[int]) -> dict[int, float] | None:
    """The logit bias that keeps vision placeholders out of answers, as the hf engine's
    `suppress_tokens` does (a bias of -100 leaves them no probability a sampler can reach)."""
    return {token: -100.0 for token in token_ids} or None


def load_vllm(path: str, dtype: str, **kwargs: Any) -> Any:
    """A `vllm.LLM` for `path`; extra keyword arguments go to it."""
    try:
        from vllm import LLM
    except ImportError as err:
        raise ImportError(
            "the vllm engine needs vLLM, which is not installed: "
            'pip install "mmcritic[vllm]" (GPU only; docs/gpu_install.md), or use --engine hf'
        ) from err
    kwargs.setdefault("limit_mm_per_prompt", MEDIA_PER_PROMPT)
    return LLM(model=path, dtype=dtype, **kwargs)
