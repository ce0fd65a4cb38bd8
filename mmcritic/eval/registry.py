"""The task registry: every built-in benchmark by name, each from its folder under
`mmcritic/eval/tasks/`, and tasks of your own added with `register`.

A built-in benchmark is its folder plus its name here: the two lists give the suites and
their order (`mmcritic.eval.suites`).
"""

from __future__ import annotations

import difflib
import importlib
from functools import cache
from types import ModuleType

from mmcritic.eval.tasks import Task

POLICY_BENCHMARKS = (
    "mmmu_val",
    "mathvista_testmini",
    "mathvision_testmini",
    "mathverse_testmini",
    "mmstar",
    "ai2d",
    "chartqa",
    "docvqa_val",
    "ocrbench",
    "hallusionbench",
    "realworldqa",
    "blink",
    "mmvu",
    "videomme",
)
CRITIC_BENCHMARKS = ("vl_rewardbench", "mm_rlhf_rewardbench", "multimodal_rewardbench")
BUILTIN = (*POLICY_BENCHMARKS, *CRITIC_BENCHMARKS)
_FOLDERS = "mmcritic.eval.tasks"

_EXTRA: dict[str, Task] = {}


def benchmark(name: str) -> ModuleType | None:
    """The folder of the built-in benchmark `name` (`mmcritic/eval/tasks/<name>/`), imported on
    first use so that the protocols its prompts build on can import this module; None for a
    task of your own."""
    return _folder(name) if name in BUILTIN else None


def _folder(name: str) -> ModuleType:
    return importlib.import_module(f"{_FOLDERS}.{name}")


@cache
def _builtin() -> dict[str, Task]:
    tasks: dict[str, Task] = {}
    for name in BUILTIN:
        _add(tasks, _folder(name).TASK)
    return tasks


def _add(tasks: dict[str, Task], task: Task) -> None:
    if task.name in tasks:
        raise ValueError(f"a task named {task.name!r} is already registered")
    tasks[task.name] = task


def register(task: Task) -> Task:
    """Adds a task of your own; a name already taken (built-in or not) is an error."""
    if task.name in _builtin():
        raise ValueError(f"a task named {task.name!r} is already registered")
    _add(_EXTRA, task)
    return task


def task_names() -> list[str]:
    """Every registered task name, sorted."""
    return sorted({**_builtin(), **_EXTRA})


def get_task(name: str) -> Task:
    """The task called `name`; an unknown name lists the known ones and the closest match."""
    tasks = {**_builtin(), **_EXTRA}
    if name in tasks:
        return tasks[name]
    close = difflib.get_close_matches(name, tasks, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"unknown task {name!r}.{hint} Known tasks: {', '.join(sorted(tasks))}")
