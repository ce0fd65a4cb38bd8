"""Evaluation protocols: whose prompts, media budget, decoding and verdict reading a run uses.

A number means something only next to the protocol that produced it:

- `r1`: LLaVA-Critic-R1's convention (the think/boxed instruction, greedy decoding up to 2,048
  new tokens, the critic's training template), as the model is trained;
- `lmms-eval`: exactly what lmms-eval 0.7.3 gives Qwen2.5-VL on each task (prompts, media
  placement, pixel budget, decoding), so numbers compare with tables made with lmms-eval;
- `official`: each benchmark's own released prompt where it has one, lmms-eval's otherwise.

A benchmark's own builders live in its folder (`mmcritic/eval/tasks/<name>/prompts.py`), on
the shared mechanics of `lmms_eval` and `official`; r1's in `r1`. This module names the
protocols, resolves a task's prompt under one, and says how its verdicts are read (`verdicts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from mmcritic.data.media import MediaBudget, PixelBudget
from mmcritic.data.video import VideoBudget
from mmcritic.eval.protocols import lmms_eval, r1
from mmcritic.eval.protocols.prompt import Decoding, Prompt, TaskPrompt, media_first
from mmcritic.eval.protocols.verdicts import verdict_reader
from mmcritic.eval.registry import benchmark
from mmcritic.eval.tasks import Pair, Problem, Row
from mmcritic.inference.media import EVAL_IMAGES
from mmcritic.models.families import DEFAULT_FAMILY, family_named

__all__ = [
    "PROTOCOLS",
    "PROTOCOL_NAMES",
    "Decoding",
    "Prompt",
    "Protocol",
    "critic_prompt",
    "media_first",
    "policy_prompt",
    "protocol",
    "task_prompt",
    "verdict_reader",
]

ProtocolName = Literal["r1", "lmms-eval", "official"]
PROTOCOL_NAMES: tuple[ProtocolName, ...] = ("r1", "lmms-eval", "official")

# lmms-eval's Qwen2.5-VL class: min_pixels 256*28*28, max_pixels 1605632; a video is 32 frames
# (fewer when it has fewer, always even), each frame in [200704, 1605632] pixels, which
# qwen-vl-utils 0.0.14 caps at 768 tokens (602,112 pixels) a frame within its default total.
LMMS_EVAL_MEDIA = MediaBudget(
    image=PixelBudget(200_704, 1_605_632, resize_twice=True),
    video=VideoBudget(
        min_frames=32,
        max_frames=32,
        min_pixels=200_704,
        max_pixels=768 * 28 * 28,
        total_pixels=int(128_000 * 28 * 28 * 0.9),
    ),
)


# lmms-eval's Qwen3-VL class (`--model qwen3_vl`, same version): the same pixel bounds, but the
# image goes to qwen-vl-utils as it is (no JPEG round trip, one resize) on Qwen3-VL's 32-pixel
# grid, and a video is 32 frames sampled by qwen-vl-utils (`nframes`), each frame within
# qwen-vl-utils' default cap of 768 tokens on that grid and total of 128,000 tokens.
LMMS_EVAL_QWEN3_VL_MEDIA = MediaBudget(
    image=PixelBudget(200_704, 1_605_632),
    video=VideoBudget(
        min_frames=32,
        max_frames=32,
        min_pixels=200_704,
        max_pixels=768 * 32 * 32,
        total_pixels=int(128_000 * 32 * 32 * 0.9),
    ),
    patch_size=16,
)


# lmms-eval's Qwen2-VL class (`--model qwen2_vl`, same version): images in [3136, 602112] pixels
# (JPEG data URLs, so resized twice as in the Qwen2.5-VL class), videos sampled by qwen-vl-utils
# at 2 frames a second and cut to 32 evenly spaced frames, each frame in the same bounds.
LMMS_EVAL_QWEN2_VL_MEDIA = MediaBudget(
    image=PixelBudget(3_136, 602_112, resize_twice=True),
    video=VideoBudget(
        max_frames=32,
        min_pixels=3_136,
        max_pixels=602_112,
        total_pixels=int(128_000 * 28 * 28 * 0.9),
    ),
)
# by lmms-eval model class (`Family.lmms_eval_model`); qwen2_5_vl's is the protocol's own
LMMS_EVAL_MODEL_MEDIA = {
    "qwen2_vl": LMMS_EVAL_QWEN2_VL_MEDIA,
    "qwen3_vl": LMMS_EVAL_QWEN3_VL_MEDIA,
}


@dataclass(frozen=True)
class Protocol:
    """A named protocol: how media are sized and which published tables its numbers compare
    with; prompts and decoding come per task from its builders. `model_media` holds the media
    budget for the model families whose lmms-eval class (`Family.lmms_eval_model`) sizes media
    its own way (`qwen2_vl`, `qwen3_vl`); other families get `media`."""

    name: ProtocolName
    summary: str
    media: MediaBudget
    comparable_with: str
    model_media: dict[str, MediaBudget] = field(default_factory=dict)

    def media_for(self, family: str | None) -> MediaBudget:
        """The media budget for a model of `family` (None: a served model of unknown family)."""
        return self.model_media.get(lmms_eval_model(family), self.media)

    def describe(self, family: str | None = None) -> dict[str, Any]:
        """The settings the protocol implies for a model of `family`, as results.json records
        them: the media budget is the one that model's media were sized by."""
        return {
            "name": self.name,
            "summary": self.summary,
            "model_family": family,
            "media": asdict(self.media_for(family)),
            "comparable_with": self.comparable_with,
        }


PROTOCOLS: dict[str, Protocol] = {
    "r1": Protocol(
        "r1",
        "LLaVA-Critic-R1: think/boxed instruction, greedy, up to 2,048 new tokens; critic "
        "suites with the training template",
        MediaBudget(EVAL_IMAGES),
        "LLaVA-Critic-R1's tables (arXiv 2509.00676) and runs of mmcritic's r1 protocol",
    ),
    "lmms-eval": Protocol(
        "lmms-eval",
        f"{lmms_eval.VERSION} prompts, media placement, pixel budget and decoding for "
        "--model qwen2_5_vl (media sized as by qwen2_vl and qwen3_vl for those families); critic "
        "suites with lmms-eval's judge prompts",
        LMMS_EVAL_MEDIA,
        "tables made with lmms-eval (e.g. the lmms-eval Qwen2.5-VL results) for the same task "
        "variants",
        LMMS_EVAL_MODEL_MEDIA,
    ),
    "official": Protocol(
        "official",
        "each benchmark's released prompt where it has one (lmms-eval's otherwise); lmms-eval's "
        "Qwen2.5-VL budget and decoding unless the benchmark fixes its own",
        LMMS_EVAL_MEDIA,
        "the benchmark papers' own tables where they release their prompt",
        LMMS_EVAL_MODEL_MEDIA,
    ),
}


def protocol(name: str) -> Protocol:
    """The protocol called `name`; an unknown name lists the known ones."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose one of {sorted(PROTOCOLS)}")
    return PROTOCOLS[name]


def lmms_eval_model(family: str | None) -> str:
    """The lmms-eval model class a model of `family` is run with (Qwen2.5-VL's when unknown)."""
    return family_named(family or DEFAULT_FAMILY).lmms_eval_model


def task_prompt(task: str, kind: str, protocol_name: str, family: str | None = None) -> TaskPrompt:
    """How `task` (a `policy` or `critic` task) asks under the protocol a model of `family`
    (None: unknown, asked as Qwen2.5-VL): its own builder, lmms-eval's for the family's model
    class, the `official` protocol falling back to lmms-eval's where a benchmark releases no
    prompt, and a critic suite with no released judge prompt using the training template."""
    protocol(protocol_name)
    if protocol_name == "r1":
        return r1.CRITIC if kind == "critic" else r1.POLICY
    prompts = _benchmark_prompts(task)
    found = prompts.get("official") if protocol_name == "official" else None
    if kind == "critic":
        return found or prompts.get("lmms-eval", r1.CRITIC)
    model_prompt = prompts.get(lmms_eval.model_key(lmms_eval_model(family)))
    found = found or model_prompt or prompts.get("lmms-eval")
    if found is None:
        raise ValueError(f"task {task} has no {protocol_name} prompt; use --protocol r1")
    return found


def policy_prompt(
    task: str,
    protocol_name: str,
    row: Row,
    problem: Problem,
    think_suffix: bool = True,
    max_new_tokens: int | None = None,
    family: str | None = None,
) -> Prompt:
    """The prompt `task` asks for `row` under the protocol, of a model of `family`;
    `max_new_tokens` overrides the protocol's limit (r1's 2,048, lmms-eval's per-task ones)."""
    spec = task_prompt(task, "policy", protocol_name, family)
    built = spec(row, problem, think_suffix) if spec is r1.POLICY else spec(row, problem)
    return _with_limit(built, max_new_tokens)


def critic_prompt(
    task: str, protocol_name: str, pair: Pair, swapped: bool, max_new_tokens: int | None = None
) -> Prompt:
    """The judge prompt for `pair` (shown swapped when asked) under the protocol."""
    return _with_limit(task_prompt(task, "critic", protocol_name)(pair, swapped), max_new_tokens)


def _benchmark_prompts(task: str) -> Mapping[str, TaskPrompt]:
    """The built-in benchmark's prompts by protocol, from its folder; a task of your own has
    none, so it asks under r1 only (a critic task with the training template everywhere)."""
    folder = benchmark(task)
    return folder.PROMPTS if folder is not None else {}


def _with_limit(prompt: Prompt, max_new_tokens: int | None) -> Prompt:
    if max_new_tokens is None:
        return prompt
    return replace(prompt, decoding=replace(prompt.decoding, max_new_tokens=max_new_tokens))
