"""One folder per benchmark: the registry, the folders under `mmcritic/eval/tasks/` and the files
`docs/architecture.md` names for adding a benchmark agree, so the page cannot drift from the
code and a folder cannot be left out of the registry."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from mmcritic.eval.protocols import PROTOCOL_NAMES, lmms_eval
from mmcritic.eval.registry import BUILTIN, CRITIC_BENCHMARKS, POLICY_BENCHMARKS
from mmcritic.eval.tasks import CriticTask, PolicyTask, Row
from mmcritic.models.families import FAMILIES

ROOT = Path(__file__).parents[1]
FOLDERS = ROOT / "mmcritic" / "eval" / "tasks"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
ROWS = json.loads(
    (ROOT / "tests" / "fixtures" / "protocols" / "rows.json").read_text(encoding="utf-8")
)
PROMPT_KEYS = {"lmms-eval", "official"} | {
    lmms_eval.model_key(family.lmms_eval_model) for family in FAMILIES.values()
}


def _documented_files() -> list[str]:
    """The files the architecture page's 'A benchmark task' paragraph lists as `- `file`:`."""
    page = ARCHITECTURE.read_text(encoding="utf-8")
    section = page.split("**A benchmark task**", 1)[1].split("\n**", 1)[0]
    return re.findall(r"^- `([^`]+)`:", section, re.MULTILINE)


def _folder(name: str) -> ModuleType:
    return importlib.import_module(f"mmcritic.eval.tasks.{name}")


def test_every_folder_is_a_registered_benchmark_and_every_benchmark_has_a_folder():
    folders = sorted(
        path.name for path in FOLDERS.iterdir() if path.is_dir() and path.name != "__pycache__"
    )
    assert folders == sorted(BUILTIN)
    assert len(set(BUILTIN)) == len(BUILTIN)


def test_the_architecture_page_lists_the_files_of_a_benchmark_folder():
    assert "__init__.py" in _documented_files()


@pytest.mark.parametrize("name", BUILTIN)
def test_a_benchmark_folder_holds_the_files_the_architecture_page_lists(name):
    missing = [file for file in _documented_files() if not (FOLDERS / name / file).is_file()]
    assert missing == []


@pytest.mark.parametrize("name", BUILTIN)
def test_a_benchmark_folder_states_its_official_scoring_rule(name):
    assert re.search(r"^Official scoring: \S", _folder(name).__doc__ or "", re.MULTILINE)


@pytest.mark.parametrize("name", BUILTIN)
def test_a_benchmark_folder_holds_the_task_of_its_name_and_kind(name):
    kind = PolicyTask if name in POLICY_BENCHMARKS else CriticTask
    task = _folder(name).TASK
    assert isinstance(task, kind) and task.name == name


@pytest.mark.parametrize("name", BUILTIN)
def test_a_benchmark_folder_keys_its_prompts_by_protocol(name):
    assert set(_folder(name).PROMPTS) <= PROMPT_KEYS


@pytest.mark.parametrize("name", CRITIC_BENCHMARKS)
def test_a_critic_folder_keys_its_verdict_readers_by_protocol(name):
    assert set(_folder(name).READERS) <= set(PROTOCOL_NAMES)


@pytest.mark.parametrize("name", BUILTIN)
def test_the_headline_is_a_metric_the_aggregation_reports(name):
    folder = _folder(name)
    task = folder.TASK
    row = Row(name, 0, ROWS[name][0], task.fields)
    meta = task.problem(row).meta if isinstance(task, PolicyTask) else task.pair(row).meta
    reported = task.aggregate([{"score": 1.0, "correct": True, "meta": meta}])
    assert folder.HEADLINE in reported


@pytest.mark.parametrize("name", BUILTIN)
def test_a_benchmark_judged_upstream_keeps_its_judge_prompts_in_its_folder(name):
    task = _folder(name).TASK
    judged = isinstance(task, PolicyTask) and task.judged_upstream
    assert bool(list((FOLDERS / name).glob("judge*.txt"))) == judged
