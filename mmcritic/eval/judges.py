"""LLM judges for the benchmarks whose reference harness scores with GPT.

MathVista, MathVerse, MMVU and HallusionBench are scored by rule in their task folders; their
published numbers come from lmms-eval (github.com/EvolvingLMMs-Lab/lmms-eval), which asks GPT to
read the answers. `LLMJudge` asks any engine the same prompts, copied verbatim into each task's
folder (`mmcritic/eval/tasks/<name>/judge*.txt`), and reads the replies as lmms-eval does:

- MathVista (`lmms_eval/tasks/mathvista/mathvista_evals.py`): an answer that is an option's
  text, or an integer/float for such a question, is taken as it is; otherwise the judge extracts
  it with MathVista's few-shot prompt, and the task's own normalisation and exact match score
  the extraction.
- MathVerse (`lmms_eval/tasks/mathverse/mathverse_evals.py` at 49949277, the last version with
  MathVerse's own prompts): the last 30 words of the response (the group's `trunk_response`)
  go to the extraction prompt, then the extraction to the 0/1 scoring prompt.
- MMVU (`lmms_eval/tasks/mmvu/utils.py`): multiple choice is scored by the task's rules only;
  an open-ended answer they reject goes to the binary GPT judge (rules first, as upstream).
- HallusionBench (`lmms_eval/tasks/hallusion_bench/utils.py`): the judge says whether the
  prediction is correct, incorrect or unclear against the reference answer; unclear is right
  only for a question asked without its figure, as the task's own `score` has it.

lmms-eval strips `<think>` blocks from responses before scoring (its `--reasoning_tags`
default), so the judges see the answer part only. A reply a judge's reader cannot read scores 0
with the verdict "unreadable" (lmms-eval retries such replies; a greedy judge would repeat it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Protocol, cast

from mmcritic.eval.tasks import Problem
from mmcritic.eval.tasks.hallusionbench import TASK as HALLUSIONBENCH
from mmcritic.eval.tasks.mathverse_testmini import TASK as MATHVERSE_TESTMINI
from mmcritic.eval.tasks.mathvista_testmini import TASK as MATHVISTA_TESTMINI
from mmcritic.eval.tasks.mmvu import TASK as MMVU
from mmcritic.inference.engines import Request, Sampling
from mmcritic.reading.final import final_answer
from mmcritic.reading.markup import answer_region

logger = logging.getLogger(__name__)

UNREADABLE = "unreadable"
# lmms-eval's MathVerse group config (`mathverse.yaml`: trunk_response) keeps the response's
# last 30 words: the answer is at the end, and the extractor's examples are tails too
MATHVERSE_TAIL_WORDS = 30


@dataclass(frozen=True)
class JudgeItem:
    """One answer to judge: the task's name, the problem it answers and the full response."""

    task: str
    problem: Problem
    response: str


@dataclass(frozen=True)
class JudgeVerdict:
    """A judged answer: its score in [0, 1], what the judge extracted or decided, and the judge
    model's replies (joined with a `---` line where a task asks twice) for the sample log."""

    score: float
    verdict: str
    raw: str


class TextEngine(Protocol):
    """What a judge needs of an engine: completions for text requests."""

    def generate(self, requests: Sequence[Request], sampling: Sampling) -> list[list[str]]: ...


@dataclass(frozen=True)
class _Ask:
    """A question for the judge model and how its reply settles the item (or asks again)."""

    prompt: str
    then: Callable[[str], _Outcome]


_Outcome = JudgeVerdict | _Ask


def _decided(score: float, verdict: str) -> JudgeVerdict:
    return JudgeVerdict(score, verdict, raw="")


def _unreadable(task: str, reply: str) -> JudgeVerdict:
    logger.warning("%s judge reply unreadable: %r", task, reply[:200])
    return _decided(0.0, UNREADABLE)


@cache
def judge_prompt(task: str, name: str) -> str:
    """The upstream prompt `name` from the task's folder (stripped, as the harnesses strip their
    demo prompts)."""
    path = resources.files(f"mmcritic.eval.tasks.{task}") / f"{name}.txt"
    return path.read_text(encoding="utf-8").strip()


def _reply(text: str) -> str:
    """The judge's answer without a think block, for judge models that reason first."""
    return answer_region(text).strip()


def _label_dropped(text: str, label: str) -> str:
    """A reply less the label the prompt ended with, which a judge sometimes repeats."""
    return re.sub(rf"^\s*{label}\s*:", "", text, flags=re.IGNORECASE).strip()


# MathVista: rule or GPT extraction, then the task's normalisation and exact match.


def _mathvista(problem: Problem, response: str) -> _Outcome:
    answer = _reply(response)
    quick = _mathvista_quick(answer, problem)
    if quick is not None:
        return _mathvista_scored(quick, problem)
    demo = judge_prompt(MATHVISTA_TESTMINI.name, "judge_extract")
    prompt = f"{demo}\n\n{problem.text}\n\n{answer}\n\nExtracted answer: "
    return _Ask(prompt, lambda reply: _mathvista_read(reply, problem))


def _mathvista_quick(answer: str, problem: Problem) -> str | None:
    """MathVista's `extract_answer` before it asks GPT: an empty answer, an option's text, or
    a bare integer or float where the question wants one is the extraction."""
    meta = problem.meta
    if not answer or (meta["question_type"] == "multi_choice" and answer in meta["options"]):
        return answer
    number = {"integer": int, "float": float}.get(meta["answer_type"])
    if number is None:
        return None
    try:
        return str(number(answer))
    except ValueError:
        return None


def _mathvista_read(reply: str, problem: Problem) -> JudgeVerdict:
    lines = _label_dropped(_reply(reply), "Extracted answer").splitlines()
    extraction = lines[0].strip() if lines else ""
    if not extraction:
        return _unreadable(MATHVISTA_TESTMINI.name, reply)
    return _mathvista_scored(extraction, problem)


def _mathvista_scored(extraction: str, problem: Problem) -> JudgeVerdict:
    return _decided(MATHVISTA_TESTMINI.score(extraction, problem).score, extraction)


# MathVerse: GPT extraction, then GPT's 0/1 judgement against the standard answer.


def _mathverse(problem: Problem, response: str) -> _Outcome:
    tail = " ".join(_reply(response).split(" ")[-MATHVERSE_TAIL_WORDS:])
    if not tail.strip():
        return _decided(0.0, "")
    demo = judge_prompt(MATHVERSE_TESTMINI.name, "judge_extract")
    prompt = f"{demo}\n\nModel response: '{tail}'\nExtracted Answer: "
    return _Ask(prompt, lambda reply: _mathverse_extracted(reply, problem))


def _mathverse_extracted(reply: str, problem: Problem) -> _Outcome:
    extraction = _label_dropped(_reply(reply), "Extracted answer")
    if not extraction:
        return _unreadable(MATHVERSE_TESTMINI.name, reply)
    prompt = judge_prompt(MATHVERSE_TESTMINI.name, "judge_score").format(
        question=problem.question, gt=problem.target, extraction=extraction
    )
    return _Ask(prompt, lambda reply: _mathverse_judged(reply, extraction))


def _mathverse_judged(reply: str, extraction: str) -> JudgeVerdict:
    """MathVerse accepts a reply that is 0 or 1 once "Judgement:" is dropped; the prompt's own
    spelling "Judement" and a closing full stop are dropped too."""
    judgement = re.sub(r"^\s*Judg?ement\s*:", "", _reply(reply), flags=re.IGNORECASE)
    judgement = judgement.strip().rstrip(".").strip()
    if judgement not in ("0", "1"):
        return _unreadable(MATHVERSE_TESTMINI.name, reply)
    return _decided(float(judgement), extraction)


# MMVU: rules for multiple choice; rules, then the binary GPT judge, for open-ended answers.


def _mmvu(problem: Problem, response: str) -> _Outcome:
    scored = MMVU.score(final_answer(response), problem)
    if problem.meta["question_type"] == "multiple-choice":
        return _decided(scored.score, str(scored.parsed or ""))
    if scored.score == 1.0:
        return _decided(1.0, "correct")
    # lmms-eval's `construct_question_prompt` already says "Question: " and the prompt says it
    # again; kept, since the judge saw it so
    prompt = judge_prompt(MMVU.name, "judge_open_ended").format(
        question=f"Question: {problem.question}",
        ground_truth=problem.target,
        prediction=_reply(response),
    )
    return _Ask(prompt, _mmvu_read)


_POSITIVE = ("yes", "true", "1")
_NEGATIVE = re.compile(r"\b(?:0|no|false)\b")


def _mmvu_read(reply: str) -> JudgeVerdict:
    """lmms-eval's `parse_binary_response`: INCORRECT before CORRECT, then "yes", "true" or
    "1" anywhere is correct. A reply with none of those that says 0, no or false is incorrect,
    as lmms-eval has it; one that says nothing of either is unreadable."""
    text = _reply(reply)
    upper, lower = text.upper(), text.lower()
    if "INCORRECT" in upper or "NOT_ATTEMPTED" in upper:
        return _decided(0.0, "incorrect")
    if "CORRECT" in upper or any(signal in lower for signal in _POSITIVE):
        return _decided(1.0, "correct")
    if _NEGATIVE.search(lower):
        return _decided(0.0, "incorrect")
    return _unreadable(MMVU.name, reply)


# HallusionBench: correct / incorrect / unclear against the reference answer.


def _hallusion(problem: Problem, response: str) -> _Outcome:
    # the dataset's `gt_answer_details` where the problem carries it, else its yes/no
    reference = problem.meta.get("gt_answer_details") or f"{str(problem.target).capitalize()}."
    prompt = judge_prompt(HALLUSIONBENCH.name, "judge").format(
        question=problem.question, reference=reference, prediction=_reply(response)
    )
    return _Ask(prompt, lambda reply: _hallusion_read(reply, problem))


def _hallusion_read(reply: str, problem: Problem) -> JudgeVerdict:
    """HallusionBench reads "incorrect" before "correct" anywhere in the reply, then "unclear"
    (where its own reader takes any other reply for unclear); unclear is right for a question
    asked without its figure."""
    lower = _reply(reply).lower()
    if "incorrect" in lower:
        return _decided(0.0, "incorrect")
    if "correct" in lower:
        return _decided(1.0, "correct")
    if "unclear" in lower:
        return _decided(float(problem.meta["visual_input"] == "0"), "unclear")
    return _unreadable(HALLUSIONBENCH.name, reply)


_JUDGES: dict[str, Callable[[Problem, str], _Outcome]] = {
    MATHVISTA_TESTMINI.name: _mathvista,
    MATHVERSE_TESTMINI.name: _mathverse,
    MMVU.name: _mmvu,
    HALLUSIONBENCH.name: _hallusion,
}
JUDGED_TASKS: frozenset[str] = frozenset(_JUDGES)


class LLMJudge:
    """Asks a judge model (any engine with `generate(requests, sampling) -> list[list[str]]`)
    the official judge prompts."""

    def __init__(self, engine: TextEngine, max_new_tokens: int = 1024):
        self.engine = engine
        self.sampling = Sampling(max_new_tokens=max_new_tokens, temperature=0.0)

    def judge_many(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        """One verdict per item, in order. Each round of prompts (extractions first, then
        MathVerse's scoring) goes to the engine in one call, so a served engine runs them
        concurrently."""
        starts = [_judge_for(item.task) for item in items]  # every task checked before any call
        outcomes: list[_Outcome] = [
            start(item.problem, item.response) for start, item in zip(starts, items, strict=True)
        ]
        replies: list[list[str]] = [[] for _ in items]
        while asks := [(i, out) for i, out in enumerate(outcomes) if isinstance(out, _Ask)]:
            texts = self._ask([ask.prompt for _, ask in asks])
            for (i, ask), text in zip(asks, texts, strict=True):
                replies[i].append(text)
                outcomes[i] = ask.then(text)
        return [
            replace(cast(JudgeVerdict, out), raw="\n---\n".join(texts))
            for out, texts in zip(outcomes, replies, strict=True)
        ]

    def _ask(self, prompts: list[str]) -> list[str]:
        completions = self.engine.generate([Request(p, None) for p in prompts], self.sampling)
        return [texts[0] if texts else "" for texts in completions]


class JudgeLike(Protocol):
    """What the eval runner asks of a judge: a verdict per item, in order."""

    def judge_many(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]: ...


class FunctionJudge:
    """A judge from a plain function `fn(prompt, target, response) -> score` (`--judge
    MODULE:FUNCTION`), for a judge of one's own."""

    def __init__(self, function: Callable[[str, object, str], float]):
        self.function = function

    def judge_many(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]:
        scores = [
            float(self.function(item.problem.text, item.problem.target, item.response))
            for item in items
        ]
        return [JudgeVerdict(score, f"{score:g}", "") for score in scores]


def _judge_for(task: str) -> Callable[[Problem, str], _Outcome]:
    if task not in _JUDGES:
        raise ValueError(
            f"no LLM judge for task {task!r}; the judged tasks are {sorted(JUDGED_TASKS)} "
            "(other tasks keep their rule-based score: leave them out of the judge's items)"
        )
    return _JUDGES[task]
