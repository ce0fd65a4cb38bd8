"""The rule audit (`mmcritic_dev.rule_audit`) sees which corpus lines a reading rule decides,
and the reading layer states each regex once."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from mmcritic_dev import rule_audit

REWARD_LINES = [
    {
        "completion": "<think>Response 2 counts the apples right.</think>\n\\boxed{two}",
        "answer": "2",
        "format": 1,
        "preference": 1,
    },
    {
        "completion": "<think>Both say seven.</think>\n\\boxed{Tie}",
        "answer": "tie",
        "format": 1,
        "preference": 1,
    },
]


def _corpus(folder: Path) -> Path:
    folder.mkdir()
    lines = "".join(json.dumps(line) + "\n" for line in REWARD_LINES)
    (folder / "reward.jsonl").write_text(lines, encoding="utf-8")
    return folder


def test_a_rule_a_line_needs_decides_it_and_a_rule_it_never_meets_decides_nothing(tmp_path):
    reports = {str(r.rule): r for r in rule_audit.audit(_corpus(tmp_path / "corpus"))}
    assert reports["mmcritic.rewards.parsing._INDEX"].decides == [("reward", 1)]
    assert reports["mmcritic.rewards.parsing._TIE"].decides == [("reward", 2)]
    never_met = reports["mmcritic.eval.answers._GLM_BOX"]
    assert never_met.matched == set() and never_met.decides == []


def test_each_regex_of_the_reading_layer_has_one_name():
    modules = rule_audit.audited_modules()
    named: dict[int, list[str]] = {}
    for rule in rule_audit.reading_rules(modules):
        pattern = getattr(importlib.import_module(rule.module), rule.name)
        named.setdefault(id(pattern), []).append(str(rule))
    assert [names for names in named.values() if len(names) > 1] == []
