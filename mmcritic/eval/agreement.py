"""How often mmcritic's scorers agree with a careful grader's labels.

A labelled corpus is JSON Lines; each line holds a model output and the label a careful human
grader gives it:

- a policy task (`<task>.jsonl`): `{"row": {...}, "response": "...", "label": 0 | 1}`, the row
  in the benchmark's own columns without its media (`label` is the ANLS value for DocVQA);
- critic verdicts (`critic_verdicts.jsonl`): `{"response", "truth", "verdict", "source"}`, the
  verdict ("1", "2" or null) and how it is stated ("box", "phrase" or null);
- the training reward (`reward.jsonl`): `{"completion", "answer", "format", "preference"}`.

`tests/test_scoring_corpus.py` asserts the agreement; `benchmarks/scorer_agreement.py` prints it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmcritic.eval.answers import final_answer
from mmcritic.eval.tasks import PolicyTask, Row, get_task

CRITIC_CORPUS = "critic_verdicts"
REWARD_CORPUS = "reward"
# Media never reach a scorer: a placeholder stands in for each media column a task maps.
MEDIA_ROLES = ("image", "images", "video", "videos")
PLACEHOLDER_MEDIA = "corpus-placeholder.png"
# ANLS labels are real numbers; a scorer agrees when it lands this close.
SCORE_TOLERANCE = 0.02


@dataclass
class Agreement:
    """Agreement of one scorer with a labelled corpus; `misses` lists the lines it misjudges."""

    name: str
    total: int = 0
    agreed: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.agreed / self.total if self.total else 0.0

    def add(self, agrees: bool, line_number: int, detail: dict[str, Any]) -> None:
        self.total += 1
        self.agreed += agrees
        if not agrees:
            self.misses.append({"line": line_number, **detail})


def read_corpus(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text]


def policy_score(task_name: str, row: dict[str, Any], response: str, doc_id: int = 0) -> float:
    """The score the task's own scorer gives `response` for `row`, as the eval runner does."""
    task = get_task(task_name)
    if not isinstance(task, PolicyTask):
        raise ValueError(f"{task_name} is not a policy task")
    data = {**_placeholder_media(task), **row}
    problem = task.problem(Row(task_name, doc_id, data, task.fields))
    return task.score(final_answer(response), problem).score


def _placeholder_media(task: PolicyTask) -> dict[str, Any]:
    columns: dict[str, Any] = {}
    for role, names in task.fields.items():
        if role in MEDIA_ROLES or role.startswith("image_"):
            for name in (names,) if isinstance(names, str) else names:
                columns[name] = PLACEHOLDER_MEDIA
    return columns


def corpus_agreement(name: str, lines: list[dict[str, Any]]) -> Agreement:
    """Agreement of the scorer `name` (a policy task, `critic_verdicts` or `reward`)."""
    if name == CRITIC_CORPUS:
        return _critic_agreement(lines)
    if name == REWARD_CORPUS:
        return _reward_agreement(lines)
    result = Agreement(name)
    for number, line in enumerate(lines, start=1):
        score = policy_score(name, line["row"], line["response"], number)
        agrees = abs(score - float(line["label"])) <= SCORE_TOLERANCE
        result.add(
            agrees,
            number,
            {"response": line["response"][:120], "label": line["label"], "score": score},
        )
    return result


def _critic_agreement(lines: list[dict[str, Any]]) -> Agreement:
    from mmcritic.rewards.parsing import parse_judgement

    result = Agreement(CRITIC_CORPUS)
    for number, line in enumerate(lines, start=1):
        read = parse_judgement(line["response"])
        got = (read.choice, read.source) if read.choice in ("1", "2") else (None, None)
        agrees = got == (line["verdict"], line["source"])
        result.add(
            agrees,
            number,
            {
                "response": line["response"][:120],
                "label": [line["verdict"], line["source"]],
                "score": got,
            },
        )
    return result


def _reward_agreement(lines: list[dict[str, Any]]) -> Agreement:
    from mmcritic.rewards import format_reward, preference_reward

    result = Agreement(REWARD_CORPUS)
    for number, line in enumerate(lines, start=1):
        completion, answer = [line["completion"]], [line["answer"]]
        got = (format_reward(completion)[0], preference_reward(completion, answer=answer)[0])
        agrees = got == (float(line["format"]), float(line["preference"]))
        result.add(
            agrees,
            number,
            {
                "response": line["completion"][:120],
                "label": [line["format"], line["preference"]],
                "score": got,
            },
        )
    return result


def lmms_eval_agreement(name: str, lines: list[dict[str, Any]]) -> Agreement | None:
    """The same corpus scored by lmms-eval's own task function, where lmms-eval is importable
    and the task has an adapter here; None otherwise. lmms-eval is not a dependency: this is
    only for comparing against the reference peers use."""
    adapter = _LMMS_EVAL_ADAPTERS.get(name)
    if adapter is None:
        return None
    try:
        scorer = adapter()
    except ImportError:
        return None
    result = Agreement(f"{name} (lmms-eval)")
    for number, line in enumerate(lines, start=1):
        score = float(scorer(line["row"], line["response"]))
        result.add(abs(score - float(line["label"])) <= SCORE_TOLERANCE, number, {"score": score})
    return result


def _lmms_mmstar():
    from lmms_eval.tasks.mmstar.utils import mmstar_process_results

    return lambda row, response: mmstar_process_results(row, [response])["average"]["score"]


def _lmms_ocrbench():
    from lmms_eval.tasks.ocrbench.utils import ocrbench_process_results

    def score(row: dict[str, Any], response: str) -> float:
        answer = row["answer"]
        if isinstance(answer, str) and answer.strip().startswith("["):
            answer = json.loads(answer.replace("'", '"'))
        doc = {**row, "answer": answer}
        return ocrbench_process_results(doc, [response])["ocrbench_accuracy"]["score"]

    return score


def _lmms_chartqa():
    from lmms_eval.tasks.chartqa.utils import chartqa_process_results

    def score(row: dict[str, Any], response: str) -> float:
        doc = {"type": "human_test", **row}
        return chartqa_process_results(doc, [response])["relaxed_overall"]

    return score


def _lmms_docvqa():
    from lmms_eval.api.metrics import anls

    def score(row: dict[str, Any], response: str) -> float:
        answers = row["answers"]
        if isinstance(answers, str):
            answers = json.loads(answers.replace("'", '"'))
        return anls(answers, [response])["anls"]

    return score


def _lmms_realworldqa():
    from lmms_eval.tasks.realworldqa.utils import realworldqa_process_results

    return lambda row, response: realworldqa_process_results(row, [response])["exact_match"]


def _lmms_mmmu():
    from lmms_eval.tasks.mmmu.utils import eval_multi_choice, eval_open, mmmu_process_results

    def score(row: dict[str, Any], response: str) -> float:
        parsed = mmmu_process_results(row, [response])["mmmu_acc"]["parsed_pred"][0]
        judge = eval_multi_choice if row["question_type"] == "multiple-choice" else eval_open
        return float(judge(row["answer"], parsed))

    return score


_LMMS_EVAL_ADAPTERS = {
    "chartqa": _lmms_chartqa,
    "docvqa_val": _lmms_docvqa,
    "mmmu_val": _lmms_mmmu,
    "mmstar": _lmms_mmstar,
    "ocrbench": _lmms_ocrbench,
    "realworldqa": _lmms_realworldqa,
}
