"""The rule audit (`mmcritic_dev.rule_audit`) sees which corpus lines a reading rule decides,
and the reading layer states each regex once."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from mmcritic_dev import phrase_audit, rule_audit
from mmcritic_dev.scorer_agreement import read_corpus

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
    never_met = reports["mmcritic.reading.markup._FAMILY_BOX"]
    assert never_met.matched == set() and never_met.decides == []


def test_a_function_rule_a_line_needs_decides_it_and_one_never_called_decides_nothing(tmp_path):
    # two MathVerse answers whose value is the equation the question names, not the last one:
    # `_names_side` decides them, and a document rule never runs on them
    folder = tmp_path / "corpus"
    folder.mkdir()
    lines = read_corpus(CORPUS / "mathverse_testmini.jsonl")
    named = [line for line in lines if line["response"] in NAMED_EQUATIONS]
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in named)
    (folder / "mathverse_testmini.jsonl").write_text(text, encoding="utf-8")
    reports = {str(r.rule): r for r in rule_audit.audit_functions(folder)}
    assert reports["mmcritic.eval.answers._names_side"].decides == [
        ("mathverse_testmini", 1),
        ("mathverse_testmini", 2),
    ]
    never_called = reports["mmcritic.eval.text_answers._in_range"]
    assert never_called.matched == set() and never_called.decides == []


NAMED_EQUATIONS = (
    "BC = 5, so AD = AB·AC/BC = 3 × 4 / 5 = 2.4, and BD = 9/5 = 1.8.",
    "∠2 = 55°, ∠3 = 125°",
)


def test_each_regex_of_the_reading_layer_has_one_name():
    modules = rule_audit.audited_modules()
    named: dict[int, list[str]] = {}
    for rule in rule_audit.reading_rules(modules):
        pattern = getattr(importlib.import_module(rule.module), rule.name)
        named.setdefault(id(pattern), []).append(str(rule))
    assert [names for names in named.values() if len(names) > 1] == []


def test_a_phrase_of_the_language_data_decides_the_lines_that_need_it(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    chinese = [
        line for line in read_corpus(CORPUS / "mmstar.jsonl") if "\n答案：" in line["response"]
    ]
    lines = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in chinese[:2])
    (folder / "mmstar.jsonl").write_text(lines, encoding="utf-8")
    reports = {str(r.phrase): r for r in phrase_audit.audit(folder, kinds=("answer_phrases",))}
    assert reports["zh.answer_phrases[0]"].decides == [("mmstar", 1), ("mmstar", 2)]
    never_met = reports["de.answer_phrases[0]"]
    assert never_met.matched == [] and never_met.decides == []


# Rules no line of the scoring corpus decides, and why they stay
EXEMPT = {
    "mmcritic.rewards.parsing.VERDICT_MARKER": "a data guard: text shown to a critic must not "
    "carry a verdict marker (tests/test_guards_unicode.py)",
    "mmcritic.rewards.answers._SCORE": "pointwise scores, which no corpus holds",
    "mmcritic.rewards.answers._BOX": "the answer a critic is shown (as_judged), not a score",
    "mmcritic.reading.markup._SPACE_RUN": "bounds reading time on long whitespace "
    "(tests/test_bounded_reading.py)",
    "mmcritic.reading.markup._FIRST_SPACE": "bounds reading time on long answers",
    "mmcritic.eval.scorers._UNVERIFIABLE": "keeps numbers math-verify cannot read in bounded "
    "time from it (tests/test_bounded_reading.py)",
    "mmcritic.eval.tasks.mmmu_val.task.IMAGE_TOKEN": "builds MMMU's prompt and image list",
    "mmcritic.rewards.parsing._SLOT": "builds the verdict pattern from the language data when "
    "the reader is imported",
    "mmcritic.eval.tasks.vl_rewardbench.verdicts._JUDGMENT_OPENER": "VL-RewardBench's official "
    "verdict rule as published (tests/test_protocols.py)",
    "mmcritic.eval.tasks.vl_rewardbench.verdicts._ANSWER_BETTER": "VL-RewardBench's official "
    "verdict rule as published (tests/test_protocols.py)",
    "mmcritic.eval.choices._NUMERIC": "an option of digits and signs as written: its corpus line "
    "closes on a letter too, the answer without one is in tests/test_context_around_the_answer.py",
    "mmcritic.eval.tasks.ocrbench.scoring._CLAUSE_EDGE": "keeps a reading committed to beside a "
    "doubt ('COFFEE, though I am not sure'), which no corpus line holds and "
    "tests/test_context_around_the_answer.py does; the refusals it blanks are blanked whole",
    "mmcritic.reading.statements._DOUBT": "a cut-off check that doubts ('Let me double-check "
    "whether it might be') revises the answer before it: the corpus's such lines are decided by "
    "other readers, tests/test_context_around_the_answer.py holds the check's own",
    "mmcritic.reading.statements._SENTENCE_CLOSED": "a whole check that corrects ('The answer is "
    "9. Let me recheck: it's 20.') is a correction, not a check cut off: no corpus line holds "
    "one, tests/test_context_around_the_answer.py does",
    "mmcritic.eval.text_answers._OWN_NO": "a correction's own 'no' read as a text answer ('Apple. "
    "Actually no — ..., so Samsung.'): the corpus's line has the first answer as its gold, "
    "tests/test_context_around_the_answer.py the corrected one",
}
CORPUS = Path(__file__).parent / "fixtures" / "scoring"


@pytest.mark.slow
def test_every_reading_rule_decides_a_line_of_the_scoring_corpus():
    """About three minutes: the whole corpus once watched, then each rule's lines again until
    one is decided."""
    reports = rule_audit.audit(CORPUS, until_decided=True)
    idle = sorted(str(r.rule) for r in reports if not r.decides and str(r.rule) not in EXEMPT)
    assert idle == [], "rules that decide no corpus line: remove them or add the lines they decide"
    assert set(EXEMPT) <= {str(r.rule) for r in reports}, "an exempt rule is gone: drop it here"


def test_every_reading_stage_is_audited_and_on_the_architecture_page():
    # a stage added to mmcritic/reading/ without joining the audit would hold rules no test
    # asks to earn their place, and one the page leaves out could not be found from it
    folder = Path(__file__).parents[1] / "mmcritic" / "reading"
    stages = sorted(path.stem for path in folder.glob("*.py") if path.stem != "__init__")
    audited = {name.rsplit(".", 1)[1] for name in rule_audit.READING_MODULES}
    assert [stage for stage in stages if stage not in audited | {"language"}] == []
    page = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| `mmcritic/reading/`"))
    assert [stage for stage in stages if f"`{stage}.py`" not in row] == []


def test_the_reading_layer_holds_its_line_budget_and_counts_every_benchmarks_own_reader():
    lines = rule_audit.layer_lines()
    assert sum(lines.values()) <= rule_audit.LAYER_LINE_BUDGET, lines
    own_readers = {Path(file).parent.name for file in lines if "tasks" in Path(file).parts}
    assert {"mmmu_val", "ocrbench", "vl_rewardbench"} <= own_readers


def test_pruning_counts_each_rules_own_lines_and_the_union_of_what_they_decide():
    answers = Path(importlib.import_module("mmcritic.eval.answers").__file__)
    source = answers.read_text(encoding="utf-8").splitlines()
    # `holds_digit`: a signature, a one-line docstring and a return, two blank lines after it
    assert rule_audit.definition_lines(answers, "holds_digit") == 3 + 2
    # `_NOT_VALUE`: two comment lines above a four-line assignment
    start = source.index("_NOT_VALUE = re.compile(")
    assert [line[:1] for line in source[start - 3 : start]] == ["", "#", "#"]
    assert source[start + 3] == ")"
    assert rule_audit.definition_lines(answers, "_NOT_VALUE") == 2 + 4
    rows = [
        {"rule": "mmcritic.eval.answers.holds_digit", "decides": [["chartqa", 1]]},
        {"rule": "mmcritic.eval.answers._NOT_VALUE", "decides": [["chartqa", 1], ["ai2d", 2]]},
        # not a file of the reading layer: never counted
        {"rule": "mmcritic.eval.metrics.mean", "decides": []},
    ]
    one, two = rule_audit.pruning_costs(rows, (1, 2))
    assert (one.rules, one.definition_lines, one.corpus_lines) == (1, 5, 1)
    assert (two.rules, two.definition_lines, two.corpus_lines) == (2, 11, 2)
    assert (one.by_corpus, two.by_corpus) == ({"chartqa": 1}, {"ai2d": 1, "chartqa": 1})


def test_a_pattern_held_outside_a_modules_names_is_one_the_audit_cannot_switch_off():
    modules = rule_audit.audited_modules()
    structure = importlib.import_module("mmcritic.reading.structure")
    patterns = (structure.TURN, structure.HEDGE)
    assert rule_audit._held_elsewhere(patterns, modules) == set()
    planted = (structure.TURN, "a tuple the audit cannot reach into")
    assert rule_audit._held_elsewhere(patterns, modules) == {id(structure.TURN)}
    del planted
