"""What a benchmark task is, and the built-in benchmarks, one folder each.

A task is a declarative spec in the manner of lmms-eval's task YAMLs: where its rows live (hub
id, the known mirrors, config, split), which column plays which role, and a few hooks that build
the problem, score an answer and aggregate. Policy tasks ask the model a question; critic tasks
ask it which of two responses is better.

Each built-in benchmark is a folder here named after its task, as lmms-eval keeps
`lmms_eval/tasks/<task>/`: `task.py` (the spec, its scorer and aggregation, the headline
metric), `prompts.py` (its prompt under each protocol that has one), `verdicts.py` for a critic
benchmark whose release reads verdicts its own way, the LLM judge's prompts (`judge*.txt`) for a
benchmark whose reference harness scores with one, and `__init__.py` stating the benchmark's
official scoring rule. `common.py` holds what several benchmarks share; `registry` lists the
folders and `register` adds a task of your own.

Facts (ids, splits, columns, prompts, scoring rules) follow lmms-eval's task definitions
(github.com/EvolvingLMMs-Lab/lmms-eval, lmms_eval/tasks/<task>/) and each benchmark's official
scorer where lmms-eval cites one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mmcritic.eval.metrics import Aggregator

Columns = str | tuple[str, ...]
MediaValue = Any


@dataclass(frozen=True)
class DatasetRef:
    """Where a task's rows live: hub ids tried in order (the canonical one, then mirrors such as
    `lmms-lab-encoder/X` for `lmms-lab/X`), the configs read one after another (BLINK has one
    per sub-task) and the split. `local_hint` says how to get a local copy when there is no hub
    id, or when the media are distributed apart from the rows."""

    hub_ids: tuple[str, ...]
    split: str
    configs: tuple[str | None, ...] = (None,)
    local_hint: str = ""


class Row:
    """One dataset row seen through the task's field mapping: `row["question"]` reads whichever
    column the task maps the role `question` to, so hooks name roles, not columns."""

    def __init__(self, task: str, doc_id: int, data: Mapping[str, Any], fields: Mapping):
        self.task, self.doc_id, self.data, self.fields = task, doc_id, data, fields

    def __getitem__(self, role: str) -> Any:
        """The role's value; a row without it, or with null there, cannot be asked (a null
        gold answer would otherwise be read as the text "None")."""
        columns = self._columns(role)
        for column in columns:
            if self.data.get(column) is not None:
                return self.data[column]
        if any(column in self.data for column in columns):
            raise ValueError(f"{self.task} row {self.doc_id} holds null for {role!r}")
        raise KeyError(
            f"{self.task} row {self.doc_id} has no column for {role!r} (looked for "
            f"{list(self._columns(role))}; the row has {sorted(self.data)}); point --task-data "
            f"at a copy with the benchmark's own column names"
        )

    def get(self, role: str, default: Any = None) -> Any:
        """The role's value, or `default` when the row lacks its column or holds None there."""
        for column in self._columns(role):
            if self.data.get(column) is not None:
                return self.data[column]
        return default

    def _columns(self, role: str) -> tuple[str, ...]:
        if role not in self.fields:
            raise KeyError(f"task {self.task} maps no column to the role {role!r}")
        columns = self.fields[role]
        return (columns,) if isinstance(columns, str) else tuple(columns)


@dataclass(frozen=True)
class Problem:
    """A policy question built from a row: the prompt without the think/boxed instruction, the
    media in prompt order, the target, and the fields aggregation groups by (`meta`)."""

    text: str
    target: Any
    images: list[MediaValue] = field(default_factory=list)
    videos: list[MediaValue] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # the question alone, without instructions: scorers that read free text look for the
    # sentence that restates it ("... rising to 16.2 million in 2020" answers "... in 2020?")
    question: str = ""


@dataclass(frozen=True)
class Scored:
    """A scored answer: what was read from it and its score in [0, 1]."""

    parsed: Any
    score: float


@dataclass(frozen=True)
class Pair:
    """A critic item: two responses in the order the benchmark's published numbers use and the
    index ("1" or "2") of the better one in that order."""

    question: str
    response_1: str
    response_2: str
    truth: str
    images: list[MediaValue] = field(default_factory=list)
    videos: list[MediaValue] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PolicyTask:
    """A benchmark the model answers as a policy.

    `score` reads the final answer (see `mmcritic.reading.final.final_answer`). `scoring`
    states how answers are scored; `judged_upstream` marks benchmarks whose reference harness
    uses an LLM judge, where a judge passed to the runner replaces the rule-based score.
    `max_frames` bounds video frames (the paper samples 32 for MMVU).
    """

    name: str
    dataset: DatasetRef
    fields: Mapping[str, Columns]
    problem: Callable[[Row], Problem]
    score: Callable[[str, Problem], Scored]
    aggregate: Aggregator
    scoring: str
    judged_upstream: bool = False
    max_frames: int | None = None
    kind: Literal["policy"] = "policy"


@dataclass(frozen=True)
class CriticTask:
    """A benchmark the model answers as a critic; a verdict is right when it names the better
    response. `scoring` states how verdicts are read and aggregated.

    `pair` supplies the question, the two responses in the order the benchmark's published
    numbers use, and the truth; the run's protocol (`mmcritic.eval.protocols`) decides the judge
    prompt (the training template under r1, the benchmark's own under lmms-eval and official)
    and how verdicts are read. A tie or an unreadable verdict is simply wrong, and counted.
    Scoring both orders (`--both-orders`) adds the order-robust figures described in
    `metrics.critic_metrics`."""

    name: str
    dataset: DatasetRef
    fields: Mapping[str, Columns]
    pair: Callable[[Row], Pair]
    aggregate: Aggregator
    scoring: str
    max_frames: int | None = None
    kind: Literal["critic"] = "critic"


Task = PolicyTask | CriticTask
