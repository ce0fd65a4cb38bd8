"""Benchmarks: the task registry, rule-based scorers and the runner behind `mmcritic eval`.

Policy tasks ask the model questions (optionally sampling several answers and picking one by
self-critique); critic tasks ask it which of two responses is better. `run_eval` writes per-sample
lines as it goes and `results.json` at the end of each task; `run_scaling` draws accuracy against
the number of sampled answers for each self-critique strategy.
"""

from mmcritic.eval.registry import get_task, register, task_names
from mmcritic.eval.runner import EvalOptions, Judge, run_eval
from mmcritic.eval.scaling import ScalingOptions, run_scaling
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
    "ScalingOptions",
    "Scored",
    "get_task",
    "headline",
    "register",
    "run_eval",
    "run_scaling",
    "task_names",
]
