"""A model's answers to synthetic policy questions, and how many are right.

The instruct base reports its accuracy this way (`mmcritic.train.instruct_base`), the toy
studies judge the same answers with the model as its own critic (`benchmarks/critic_to_policy.py`),
and `critique_data` turns a policy's answers into critique records (`mmcritic critique-data`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mmcritic.data.media import MediaBudget
from mmcritic.data.schema import Record
from mmcritic.rewards.answers import normalize_answer


@dataclass
class Answered:
    """A model's answers to policy questions: one greedy and `samples` sampled at temperature 1
    per question, with the loaded model, so a study can go on to judge the samples."""

    model: Any
    processor: Any
    questions: list[Record]
    items: list[tuple[Any, str]]
    greedy: list[Any]
    sampled: list[list[Any]]

    def greedy_right(self) -> list[bool]:
        """Whether each question's greedy answer is its reference answer."""
        return [
            same_answer(answer.final_answer, question.answer)
            for answer, question in zip(self.greedy, self.questions, strict=True)
        ]

    def sampled_right(self) -> list[list[bool]]:
        """Whether each sampled answer is its question's reference answer, per question."""
        return [
            [same_answer(answer.final_answer, question.answer) for answer in answers]
            for answers, question in zip(self.sampled, self.questions, strict=True)
        ]


def answer_questions(
    model_dir: Path, questions: list[Record], samples: int, budget: MediaBudget, seed: int
) -> Answered:
    """Greedy and sampled answers of the model in `model_dir` to the questions, on the CPU."""
    model, processor, policy = _policy(model_dir)
    items = _items(questions, budget)
    greedy = [answers[0] for answers in policy.answer_many(items)]
    sampled = policy.answer_many(items, n=samples, temperature=1.0, seed=seed)
    return Answered(model, processor, questions, items, greedy, sampled)


def with_own_answers(model_dir: Path, records: list[Record], budget: MediaBudget) -> list[Record]:
    """The records with `meta.own_answer`: the greedy boxed answer of the model in `model_dir`
    to each record's question (`meta.question`) about its image, None where it boxed nothing.
    An `answer_first` warm start (`sft.target`) thinks this answer before judging."""
    _, _, policy = _policy(model_dir)
    answers = [samples[0].final_answer for samples in policy.answer_many(_items(records, budget))]
    return [
        replace(record, meta={**record.meta, "own_answer": answer})
        for record, answer in zip(records, answers, strict=True)
    ]


def answer_texts(
    policy: Any,
    questions: list[Record],
    budget: MediaBudget,
    samples: int,
    temperature: float,
    seed: int,
) -> list[list[str]]:
    """`samples` answer texts of `policy` (a `Policy`) to each record's question about its
    images and videos, sampled at `temperature` (greedy, one each, at 0)."""
    items = [(record_media(record, budget), record.meta["question"]) for record in questions]
    answers = policy.answer_many(items, n=samples, temperature=temperature, seed=seed)
    return [[answer.text for answer in per_question] for per_question in answers]


def record_media(record: Record, budget: MediaBudget) -> list[Any]:
    """A record's images and videos as the policy is shown them, within `budget`."""
    from mmcritic.inference.media import Media

    image = budget.image
    shown = [Media.image(path, image.min_pixels, image.max_pixels) for path in record.images]
    return shown + [Media.video_in(path, budget.video) for path in record.videos]


def _policy(model_dir: Path) -> tuple[Any, Any, Any]:
    from mmcritic.inference import Policy
    from mmcritic.inference.engines import load_model_for_inference

    model, processor = load_model_for_inference(str(model_dir), "cpu", "float32")
    return model, processor, Policy(model, processor, max_new_tokens=48, batch_size=32)


def _items(records: list[Record], budget: MediaBudget) -> list[tuple[Any, str]]:
    """Each record's image and question, as the policy takes them."""
    from mmcritic.inference.media import Media

    image = budget.image
    return [
        (Media.image(r.images[0], image.min_pixels, image.max_pixels), r.meta["question"])
        for r in records
    ]


def same_answer(answer: str | None, reference: str) -> bool:
    """Whether a final answer is the reference answer, both normalized."""
    return answer is not None and normalize_answer(answer) == normalize_answer(reference)


def critique_data(
    policy: Any,
    data_dir: Path,
    out_dir: Path,
    samples: int,
    temperature: float,
    seed: int,
    budget: MediaBudget,
) -> dict[str, Any]:
    """Critique records in `out_dir` from `samples` answers of `policy` (a `Policy`) to each
    verifiable question in `data_dir` (`mmcritic.data.critiques`); returns the folder's stats
    with the share of answers that are right (a critic needs both kinds to learn from)."""
    from mmcritic.data.critiques import write_critique_data
    from mmcritic.data.dataset import read_records

    questions = read_records(data_dir)
    answerable = [q for q in questions if q.kind == "verifiable" and q.meta.get("question")]
    texts = dict(
        zip(
            (q.id for q in answerable),
            answer_texts(policy, answerable, budget, samples, temperature, seed),
            strict=True,
        )
    )
    settings = {"data": str(data_dir), "samples": samples, "temperature": temperature, "seed": seed}
    stats = write_critique_data(
        out_dir, questions, [texts.get(q.id, []) for q in questions], settings
    )
    written = read_records(out_dir)
    right = sum(record.answer == "correct" for record in written)
    return stats | {"right_share": right / len(written) if written else 0.0}
