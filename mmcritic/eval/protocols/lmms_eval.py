"""The `lmms-eval` protocol: what lmms-eval 0.7.3 gives `--model qwen2_5_vl` on each task, and
`--model qwen3_vl` to a Qwen3-VL model.

Each benchmark's builder (its folder's `prompts.py`, under `"lmms-eval"`) repeats the task's
`doc_to_text` / `doc_to_messages` under the resolved default `lmms_eval_specific_kwargs`, and the
YAML's `generation_kwargs` merged over the chat model's defaults (128 new tokens, greedy; a
temperature above 0 samples whatever `do_sample` says). The prompt code is the same at commit
75571cfe; `docs/reference/lmms_eval_qwen2_5_vl.md` holds the source of every fact, and
`tests/fixtures/protocols/lmms_eval_snapshots.json`, rendered by lmms-eval's own functions, pins
the strings (`lmms_eval_qwen3_vl_snapshots.json` those of `--model qwen3_vl`: its YAML entries
change the prompts of mmmu_val, mmstar and videomme, under `model_key("qwen3_vl")`; the others
resolve to the same `default`). This module holds what the builders share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mmcritic.eval.choices import option_letters
from mmcritic.eval.protocols.prompt import Decoding, Prompt, TaskPrompt, media_first
from mmcritic.eval.tasks import Pair

VERSION = "lmms-eval 0.7.3"
GREEDY_128 = Decoding(128)  # the chat model's defaults, for YAMLs without generation_kwargs
DIRECT_LETTER = "Answer with the option's letter from the given choices directly."
SHORT_ANSWER = "Answer the question using a single word or phrase."

# `--model qwen3_vl`: the YAMLs' `qwen3_vl` entries, lmms-eval's adaptation of the Qwen3-VL
# report's prompts (`*_doc_to_text_qwen3vl`; MMMU then shows every image before the text).
QWEN3_VL_LETTER = "Answer with the option letter only."
QWEN3_VL_OPEN_ENDED = "Please select the correct answer from the options above."


def model_key(model: str) -> str:
    """The key of a benchmark's prompt for lmms-eval's `--model MODEL` where that model class
    has a prompt of its own; every class without one follows the chat path's (`"lmms-eval"`)."""
    return f"lmms-eval/{model}"


def lettered(options: list[Any], separator: str = ". ") -> str:
    """Options as `A. first` lines, as lmms-eval's task code writes them."""
    return "\n".join(f"{letter}{separator}{option}" for letter, option in _zip_letters(options))


def _zip_letters(options: list[Any]) -> list[tuple[str, Any]]:
    return list(zip(option_letters(len(options)), options, strict=True))


def from_task_file(build: Callable[..., Prompt], decoding: Decoding, path: str) -> TaskPrompt:
    """A builder with the YAML's decoding, citing the lmms-eval task file it repeats."""
    return TaskPrompt(build, decoding, f"{VERSION} lmms_eval/tasks/{path}")


def judge(template: str) -> Callable[[Pair, bool], Prompt]:
    """A critic builder filling a judge template with the pair, in the order shown."""

    def build(pair: Pair, swapped: bool) -> Prompt:
        first, second = (pair.response_1, pair.response_2)
        if swapped:
            first, second = second, first
        text = template.format(question=pair.question, answer_1=first, answer_2=second)
        return media_first(text, pair.images, pair.videos)

    return build
