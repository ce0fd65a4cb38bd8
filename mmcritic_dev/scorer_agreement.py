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
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmcritic.eval.registry import get_task
from mmcritic.eval.tasks import PolicyTask, Row
from mmcritic.reading.final import final_answer

CRITIC_CORPUS = "critic_verdicts"
REWARD_CORPUS = "reward"
# Media never reach a scorer: a placeholder stands in for each media column a task maps.
MEDIA_ROLES = ("image", "images", "video", "videos")
PLACEHOLDER_MEDIA = "corpus-placeholder.png"
# `simple_evaluate`'s default `random_seed` in lmms-eval 0.7.3
LMMS_EVAL_RANDOM_SEED = 0
# ANLS labels are real numbers; a scorer agrees when it lands this close.
SCORE_TOLERANCE = 0.02


@dataclass
class Agreement:
    """Agreement of one scorer with a labelled corpus; `misses` lists the lines it misjudges."""

    name: str
    total: int = 0
    agreed: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)
    agrees: list[bool] = field(default_factory=list)  # line by line, to see what a change moved

    @property
    def rate(self) -> float:
        return self.agreed / self.total if self.total else 0.0

    def add(self, agrees: bool, line_number: int, detail: dict[str, Any]) -> None:
        self.total += 1
        self.agreed += agrees
        self.agrees.append(agrees)
        if not agrees:
            self.misses.append({"line": line_number, **detail})


def moved_lines(
    before: dict[str, list[bool]], after: dict[str, list[bool]]
) -> list[tuple[str, int, bool]]:
    """(scorer, line, agrees now) for each line whose agreement a change moved, so a refactor of
    the readers can be held to every corpus line, not only to each scorer's rate; lines added
    since `before` did not move."""
    return [
        (name, number, now)
        for name, agrees in after.items()
        for number, (was, now) in enumerate(zip(before.get(name, []), agrees, strict=False), 1)
        if was != now
    ]


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
    result, key = Agreement(name), output_key(name)
    for number, line in enumerate(lines, start=1):
        label, got = _label(name, line), reading(name, number, line, line[key])
        agrees = _close(got, label) if isinstance(label, float) else got == label
        result.add(agrees, number, {"response": line[key][:120], "label": label, "score": got})
    return result


def output_key(name: str) -> str:
    """The field of a corpus line that holds the model's output."""
    return "completion" if name == REWARD_CORPUS else "response"


def reading(name: str, number: int, line: dict[str, Any], text: str) -> Any:
    """What the scorer `name` reads from the output `text` for corpus line `line`: the score of a
    policy task, a critic's (verdict, source) or the reward's (format, preference)."""
    if name == CRITIC_CORPUS:
        from mmcritic.rewards.parsing import parse_judgement

        read = parse_judgement(text)
        return (read.choice, read.source) if read.choice in ("1", "2") else (None, None)
    if name == REWARD_CORPUS:
        from mmcritic.rewards import format_reward, preference_reward

        return (format_reward([text])[0], preference_reward([text], answer=[line["answer"]])[0])
    return policy_score(name, line["row"], text, number)


def _close(score: float, label: float) -> bool:
    return abs(score - label) <= SCORE_TOLERANCE


def _label(name: str, line: dict[str, Any]) -> Any:
    """The careful grader's label of a line: a critic's (verdict, source), the reward's (format,
    preference), else a policy task's score."""
    if name == CRITIC_CORPUS:
        return (line["verdict"], line["source"])
    if name == REWARD_CORPUS:
        return (float(line["format"]), float(line["preference"]))
    return float(line["label"])


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
    # MMMU's parser picks a random letter when it finds none; lmms-eval's evaluator seeds
    # `random` with 0 first, and so does this, so the column is the same on every run
    random.seed(LMMS_EVAL_RANDOM_SEED)
    for number, line in enumerate(lines, start=1):
        score = float(scorer(line["row"], line["response"]))
        result.add(_close(score, float(line["label"])), number, {"score": score})
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


def _lmms_ai2d():
    """ai2d.yaml's `flexible-extract` filter, then `exact_match` ignoring case and punctuation
    against the option letter; lmms-eval strips the response first."""
    from lmms_eval.api.metrics import exact_match_hf_evaluate
    from lmms_eval.tasks.ai2d.utils import MultiChoiceRegexFilter

    extract = MultiChoiceRegexFilter(
        regex_pattern=r"([A-Z])\.", group_select=0, ignore_case=True, ignore_punctuation=True
    )

    def score(row: dict[str, Any], response: str) -> float:
        target = chr(ord("A") + int(row["answer"]))
        (picked,) = extract.apply([[response.strip()]], [row])
        match = exact_match_hf_evaluate(
            [picked], [target], ignore_case=True, ignore_punctuation=True
        )
        return float(match["exact_match"])

    return score


def _lmms_blink():
    from lmms_eval.tasks.blink.utils import blink_process_results

    def score(row: dict[str, Any], response: str) -> float:
        return float(blink_process_results(row, [response.strip()])["blink_acc"]["is_correct"])

    return score


def _lmms_videomme():
    from lmms_eval.tasks.videomme.utils import videomme_process_results

    def score(row: dict[str, Any], response: str) -> float:
        doc = {"domain": "", "sub_category": "", "task_type": "", "duration": "", **row}
        doc.setdefault("question_id", "0")
        doc.setdefault("videoID", "0")
        return videomme_process_results(doc, [response])["videomme_perception_score"]["score"]

    return score


def _lmms_mmvu():
    """lmms-eval's `evaluate_with_rule_based` (its GPT judge is asked only when the rules
    reject an open answer)."""
    from lmms_eval.tasks.mmvu.utils import evaluate_with_rule_based

    return lambda row, response: float(evaluate_with_rule_based(row, response))


_LMMS_EVAL_ADAPTERS = {
    "ai2d": _lmms_ai2d,
    "blink": _lmms_blink,
    "chartqa": _lmms_chartqa,
    "docvqa_val": _lmms_docvqa,
    "mmmu_val": _lmms_mmmu,
    "mmstar": _lmms_mmstar,
    "mmvu": _lmms_mmvu,
    "ocrbench": _lmms_ocrbench,
    "realworldqa": _lmms_realworldqa,
    "videomme": _lmms_videomme,
}
