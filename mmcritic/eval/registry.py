"""The task registry: every built-in task by name, and tasks of your own added with `register`."""

from __future__ import annotations

import difflib
from functools import cache

from mmcritic.eval.critic_tasks import CRITIC_TASKS
from mmcritic.eval.policy_tasks import POLICY_TASKS
from mmcritic.eval.tasks import Task

_EXTRA: dict[str, Task] = {}


@cache
def _builtin() -> dict[str, Task]:
    tasks: dict[str, Task] = {}
    for task in (*POLICY_TASKS, *CRITIC_TASKS):
        _add(tasks, task)
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
