"""BLINK (val): multi-image multiple choice, one config per sub-task."""

from __future__ import annotations

import re

from mmcritic.eval import metrics
from mmcritic.eval.choices import option_letters
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.tasks.common import MC_INSTRUCTION, as_list, mc_score

HEADLINE = "accuracy"
BLINK_SUBTASKS = (
    "Art_Style", "Counting", "Forensic_Detection", "Functional_Correspondence", "IQ_Test",
    "Jigsaw", "Multi-view_Reasoning", "Object_Localization", "Relative_Depth",
    "Relative_Reflectance", "Semantic_Correspondence", "Spatial_Relation",
    "Visual_Correspondence", "Visual_Similarity",
)  # fmt: skip


def build_problem(row: Row) -> Problem:
    options = [str(choice) for choice in as_list(row["choices"])]
    images = [row.get(f"image_{n}") for n in range(1, 5)]
    meta = {
        "options": options,
        "sub_task": row.get("sub_task", ""),
        "aliases": _option_aliases(str(row["prompt"]), options),
    }
    return Problem(
        f"{row['prompt']}\n{MC_INSTRUCTION}",
        str(row["answer"]).strip("()"),
        images=[image for image in images if image is not None],
        meta=meta,
    )


def _option_aliases(prompt: str, options: list[str]) -> dict[str, str]:
    """Words the prompt gives an option as another name: "moving clockwise (left) or
    counter-clockwise (right)" makes "clockwise" option left (BLINK's multi-view prompt)."""
    aliases = {}
    for letter, option in zip(option_letters(len(options)), options, strict=True):
        pattern = rf"(?<![\w-])([\w-]+)\s+\(\s*{re.escape(option)}\s*\)"
        for alias in re.findall(pattern, prompt, re.IGNORECASE):
            if alias.lower() not in {o.lower() for o in options}:
                aliases[alias.lower()] = letter
    return aliases


def score(answer: str, problem: Problem) -> Scored:
    """The option letter (`common.mc_score`); an answer that names no option but the prompt's
    other name for one ("The camera is moving clockwise" where the prompt says "clockwise
    (left)") picks it."""
    scored = mc_score(answer, problem)
    if scored.parsed is not None:
        return scored
    said = answer.lower()
    named = {
        letter
        for alias, letter in problem.meta.get("aliases", {}).items()
        if re.search(rf"(?<![\w-]){re.escape(alias)}(?![\w-])", said)
    }
    if len(named) != 1:
        return scored
    letter = named.pop()
    return Scored(letter, float(letter == str(problem.target).strip().upper()))


TASK = PolicyTask(
    name="blink",
    dataset=DatasetRef(("BLINK-Benchmark/BLINK",), "val", configs=BLINK_SUBTASKS),
    fields={
        "prompt": "prompt",
        "choices": "choices",
        "answer": "answer",
        "sub_task": "sub_task",
        **{f"image_{n}": f"image_{n}" for n in range(1, 5)},
    },
    problem=build_problem,
    score=score,
    aggregate=metrics.accuracy_by("sub_task"),
    scoring="rule-based: option letter",
)
