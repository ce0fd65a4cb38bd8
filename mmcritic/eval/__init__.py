"""Benchmarks: the task registry, rule-based scorers and the runner behind `mmcritic eval`.

Policy tasks ask the model questions (optionally sampling several answers and picking one by
self-critique); critic tasks ask it which of two responses is better. `run_eval` writes per-sample
lines as it goes and `results.json` at the end of each task.
"""

from mmcritic.eval.registry import get_task, register, task_names
from mmcritic.eval.runner import EvalOptions, Judge, run_eval
from mmcritic.eval.suites import CRITIC_SUITE, POLICY_SUITE, headline
from mmcritic.eval.tasks import CriticTask, DatasetRef, Pair, PolicyTask, Problem, Row, Scored

__all__ = [
    "CRITIC_SUITE",
    "POLICY_SUITE",
    "CriticTask",
    "DatasetRef",
    "EvalOptions",
    "Judge",
    "Pair",
    "PolicyTask",
    "Problem",
    "Row",
    "Scored",
    "get_task",
    "headline",
    "register",
    "run_eval",
    "task_names",
]
