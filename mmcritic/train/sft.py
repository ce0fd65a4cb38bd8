"""SFT warm start, the LLaVA-Critic way: imitate a rationale and the boxed verdict.

Same dataset folders as GRPO; the target is `<think>{rationale}</think>\n\\boxed{answer}`. Records
without a rationale (converted preference data, whose GPT rationales are dropped because they
name responses in the source order) still teach the output format with an empty think block.
"""

from __future__ import annotations

import re
from typing import Any

from trl import SFTTrainer
from trl.trainer.sft_trainer import DataCollatorForVisionLanguageModeling

from mmcritic.data.prompts import reasoned_answer
from mmcritic.data.video import LoadedVideo, processor_video_kwargs
from mmcritic.rewards.answers import final_boxed
from mmcritic.train.model_card import ModelCardMixin
from mmcritic.train.resume import ExactResumeMixin

FORMAT_VERDICTS = ("1", "2")
# the targets that teach a pairwise record the verdict format, not its label
PAIRWISE_WARM_TARGETS = ("format", "answer_first", "answer_match", "own_verdict")
# a critique's two verdicts (`templates/critique.txt`), each taught once per critique prompt
CRITIQUE_VERDICTS = ("correct", "incorrect")


def sft_completions(row: dict[str, Any], target: str) -> list[list[dict[str, Any]]]:
    """The assistant turns SFTTrainer's prompt-completion format reads for one record.

    `target="format"` gives a pairwise record one turn per verdict, each with an empty think
    block: the warm start learns the shape of an answer and an even split between the verdicts
    on every prompt. A single random verdict per record would be memorised instead, and GRPO
    would start from confident, arbitrary verdicts whose groups all score the same. Other
    records (policy questions) have no verdict set to split evenly, so they keep their rationale
    and answer: one warm start can teach a critic's format and a policy's answers together.
    `target="answer_first"` thinks the model's own answer to the question (`own_answer`) before
    the verdicts: judging then compares each response with an answer already written down.
    `answer_match` adds which response states that answer, read from the texts; `own_verdict`
    then boxes that response alone (both verdicts where no single response states it): the
    model judges by its own answer, and the label is never read.
    A critique record under `format` gets both verdicts, "correct" and "incorrect", after a
    think block that restates the critiqued answer: the format, and no label.
    """
    if target in PAIRWISE_WARM_TARGETS and row["kind"] == "pairwise":
        thought = own_answer_thought(row["own_answer"]) if target != "format" else ""
        verdicts = FORMAT_VERDICTS
        if target in ("answer_match", "own_verdict"):
            saying = saying_responses(row["own_answer"], row["responses"])
            thought = f"{thought} {matching_sentence(row['own_answer'], saying)}"
            if target == "own_verdict" and len(saying) == 1:
                verdicts = (saying[0],)
        texts = [reasoned_answer(thought.strip(), verdict) for verdict in verdicts]
    elif target == "format" and row["kind"] == "critique":
        thought = critiqued_answer_thought(row["answer_text"])
        texts = [reasoned_answer(thought, verdict) for verdict in CRITIQUE_VERDICTS]
    else:
        texts = [reasoned_answer(row["rationale"], row["answer"])]
    return [[{"role": "assistant", "content": [{"type": "text", "text": text}]}] for text in texts]


def critiqued_answer_thought(answer_text: str) -> str:
    """A critique warm start's think block: the answer under review, restated."""
    answer = final_boxed(answer_text)
    return f"The answer given is {answer}." if answer else "The answer gives no final answer."


def saying_responses(answer: str, responses: list[str]) -> list[str]:
    """The indices ("1", "2") of the responses whose text states the model's own answer: found
    in the texts alone, no label."""
    if not answer:
        return []
    word = re.compile(rf"\b{re.escape(answer.lower())}\b")
    return [str(i) for i, text in enumerate(responses, 1) if word.search(text.lower())]


def matching_sentence(answer: str, saying: list[str]) -> str:
    """An `answer_match` warm start's second sentence: "Response 2 says red." when exactly one
    response states the model's answer."""
    if not answer:
        return ""
    if len(saying) != 1:
        return f"{'No' if not saying else 'Each'} response says {answer}."
    return f"Response {saying[0]} says {answer}."


def own_answer_thought(answer: str) -> str:
    """The think block of an `answer_first` warm start: the model's own answer, or nothing
    when it gave none."""
    return f"My answer: {answer}." if answer else ""


class MediaCollator(DataCollatorForVisionLanguageModeling):
    """TRL's vision collator, which passes images only, with each example's videos added.

    TRL calls the processor twice, for the prompts (with `images=`) and for the completions; the
    videos belong to the prompt call, so the processor is wrapped for the span of one batch.
    """

    def _collate_prompt_completion(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        videos = [video for example in examples for video in example.pop("videos", None) or []]
        if not videos:
            return super()._collate_prompt_completion(examples)
        processor = self.processor
        self.processor = _PromptVideos(processor, videos)
        try:
            return super()._collate_prompt_completion(examples)
        finally:
            self.processor = processor


class _PromptVideos:
    """A processor whose prompt call (the one given `images=`) also gets the batch's videos."""

    def __init__(self, processor: Any, videos: list[LoadedVideo]):
        self._processor = processor
        self._videos = videos

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "images" in kwargs:
            kwargs.update(processor_video_kwargs(self._videos))
        return self._processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


class CriticSFTTrainer(ExactResumeMixin, ModelCardMixin, SFTTrainer):
    """TRL's SFTTrainer with exact resume (`mmcritic.train.resume`), including its running
    token count, which TRL logs as `num_tokens` but keeps outside the Trainer's state."""

    def extra_state(self) -> dict[str, Any]:
        return {"total_train_tokens": self._total_train_tokens}

    def restore_extra_state(self, state: dict[str, Any]) -> None:
        self._total_train_tokens = int(state["total_train_tokens"])


def make_sft_trainer(
    model: Any,
    processor: Any,
    dataset: Any,
    config: Any,
    peft_config: Any,
    callbacks: list[Any] | None = None,
):
    collator = MediaCollator(
        processor=processor,
        max_length=config.max_length,
        completion_only_loss=config.completion_only_loss is not False,
    )
    return CriticSFTTrainer(
        model=model,
        args=config,
        train_dataset=dataset,
        processing_class=processor,
        peft_config=peft_config,
        data_collator=collator,
        callbacks=callbacks,
    )
