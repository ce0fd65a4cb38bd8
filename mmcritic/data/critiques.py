"""Critique records: a policy's answers to verifiable questions, each to be critiqued.

Refinement-aware critic training (Critique-RL, RefCritic) needs answers to critique whose truth
is known: the policy answers each verifiable question (`kind: verifiable`, with a reference)
`samples` times at a temperature, and every answer becomes a `critique` record whose prompt is
the critique template (`templates/critique.txt`) and whose `answer` is "correct" or "incorrect"
by the reference. `meta` keeps the question, the answer as the critic is shown it, the answer as
written (the policy revises from it) and the reference, which the helpfulness reward scores a
revision against. Questions without a reference cannot say whether an answer is right and are
rejected with that reason, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mmcritic.data.dataset import DatasetWriter
from mmcritic.data.prompts import load_template, media_word, render, user_message
from mmcritic.data.schema import Record, RecordError
from mmcritic.rewards.answers import as_judged
from mmcritic.rewards.critic import answer_matches

CORRECT, INCORRECT = "correct", "incorrect"


def write_critique_data(
    folder: Path,
    questions: Sequence[Record],
    answers: Sequence[Sequence[str]],
    settings: dict[str, Any],
    template: str | None = None,
) -> dict[str, Any]:
    """Writes a dataset folder of critique records, one per (question, answer): `answers[i]`
    are the policy's answer texts to `questions[i]`. A question that cannot give critiques is
    kept in `rejected.jsonl` with its reason. Returns the folder's stats."""
    text_template = load_template(template, "critique")
    writer = DatasetWriter(folder, settings, "overwrite")
    for index, (question, texts) in enumerate(zip(questions, answers, strict=True)):
        problem = _unusable(question)
        if problem is not None:
            writer.add_row([], problem, question.to_dict(), index)
            continue
        records = [_record(question, n, text, text_template) for n, text in enumerate(texts)]
        writer.add_row(records, row_index=index)
    return writer.close()


def _unusable(question: Record) -> RecordError | None:
    if question.kind != "verifiable":
        return RecordError(
            "wrong_kind", f"kind {question.kind!r}: critiques are of answers to questions"
        )
    if not question.answer.strip():
        return RecordError("no_reference", "no reference answer: an answer's truth is unknown")
    if not question.meta.get("question"):
        return RecordError("missing_field", "no question text in meta.question")
    return None


def _record(question: Record, index: int, text: str, template: str) -> Record:
    shown = as_judged(text)
    media = media_word(len(question.images), len(question.videos))
    prompt = render(template, question=question.meta["question"], response=shown, media=media)
    right = answer_matches(text, question.answer)
    meta = {
        "question": question.meta["question"],
        "response": shown,
        "answer_text": text,
        "reference": question.answer,
        "critiqued": question.id,
    }
    return Record(
        id=f"{question.id}#answer{index}",
        source=question.source,
        kind="critique",
        prompt=user_message(prompt, len(question.images), len(question.videos)),
        answer=CORRECT if right else INCORRECT,
        images=list(question.images),
        videos=list(question.videos),
        meta=meta,
    )
