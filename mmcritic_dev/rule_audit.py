"""Which corpus lines each reading rule decides: every rule has to earn its place.

A rule is a regular expression the reading layer compiles at module level (`audit`), or a
function it defines there whose result says whether it found something (`audit_functions`): a
check (`bool`), a finder of something optional (`X | None`), a collector (`list`) or a rewrite
of its text (`str` from a first `str` argument). The audit scores the whole labelled scoring
corpus (`scorer_agreement`) once with every rule watched, to learn on which lines each rule
finds something, then switches the rules off one at a time (a pattern matches nothing, a
function finds nothing or leaves its text as it is) and scores again the lines it found
something on. A line a rule *decides* is one the scorers agree on with the rule and not without
it; a rule that decides no line is dead weight (it never matches, or what it does another rule
does as well) and goes. Lines that agree only without a rule are listed as its harm.
"""

from __future__ import annotations

import ast
import gc
import importlib
import inspect
import pkgutil
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from mmcritic_dev.scorer_agreement import corpus_agreement, read_corpus

# the shared reading stages; every benchmark's own modules (`mmcritic.eval.tasks`) join them
READING_MODULES = (
    "mmcritic.reading.markup",
    "mmcritic.reading.structure",
    "mmcritic.reading.statements",
    "mmcritic.reading.final",
    "mmcritic.rewards.parsing",
    "mmcritic.rewards.answers",
    "mmcritic.eval.answers",
    "mmcritic.eval.choices",
    "mmcritic.eval.text_answers",
    "mmcritic.eval.yes_no",
    "mmcritic.eval.scorers",
)
TASK_PACKAGE = "mmcritic.eval.tasks"
# the modules of a benchmark's folder that read answers its own way
TASK_READERS = ("scoring", "verdicts")
# the most lines the reading layer (`layer_lines`) may hold: lowered as the layer shrinks, so it
# grows only by a decision made here; the layer is meant to reach 1,700
LAYER_LINE_BUDGET = 4_583
LineKey = tuple[str, int]  # (corpus, line number from 1)


@dataclass(frozen=True)
class Rule:
    module: str
    name: str

    def __str__(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass
class RuleReport:
    rule: Rule
    matched: set[LineKey] = field(default_factory=set)
    decides: list[LineKey] = field(default_factory=list)
    harms: list[LineKey] = field(default_factory=list)
    # the same regex compiled under other names: one fact stated twice
    aliases: list[Rule] = field(default_factory=list)
    # held inside a tuple, a dict or a default argument, where no audit can switch it by name
    unswitchable: bool = False


def audited_modules() -> list[ModuleType]:
    """The shared reading modules and every module of the benchmark task package."""
    names = list(READING_MODULES)
    package = importlib.import_module(TASK_PACKAGE)
    if hasattr(package, "__path__"):
        found = pkgutil.walk_packages(package.__path__, f"{TASK_PACKAGE}.")
        names += [TASK_PACKAGE, *sorted(info.name for info in found)]
    return [importlib.import_module(name) for name in names]


def layer_lines() -> dict[str, int]:
    """The lines of each file of the reading layer: the shared reading modules, the language
    loader and each benchmark's own readers (`TASK_READERS`)."""
    names = [*READING_MODULES, "mmcritic.reading.language"]
    names += [m.__name__ for m in audited_modules() if m.__name__.split(".")[-1] in TASK_READERS]
    root = Path(inspect.getfile(importlib.import_module("mmcritic"))).parents[1]
    files = [Path(inspect.getfile(importlib.import_module(name))) for name in names]
    return {
        str(file.relative_to(root)): len(file.read_text(encoding="utf-8").splitlines())
        for file in files
    }


def reading_rules(modules: list[ModuleType]) -> list[Rule]:
    """Each compiled pattern a module assigns at its top level (not the ones it imports)."""
    rules = []
    for module in modules:
        for name in _assigned_names(module):
            if isinstance(getattr(module, name, None), re.Pattern):
                rules.append(Rule(module.__name__, name))
    return rules


def _assigned_names(module: ModuleType) -> list[str]:
    tree = ast.parse(inspect.getsource(module))
    nodes = [node for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)]
    return [name for node in nodes for name in _defined_names(node)]


class _Watched:
    """A pattern that reports each call that found something; otherwise the pattern itself."""

    def __init__(self, pattern: re.Pattern[str], on_hit: Callable[[], None]):
        self._pattern = pattern
        self._on_hit = on_hit

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)

    def _seen(self, result: Any, found: bool) -> Any:
        if found:
            self._on_hit()
        return result

    def search(self, *args: Any) -> Any:
        result = self._pattern.search(*args)
        return self._seen(result, result is not None)

    def match(self, *args: Any) -> Any:
        result = self._pattern.match(*args)
        return self._seen(result, result is not None)

    def fullmatch(self, *args: Any) -> Any:
        result = self._pattern.fullmatch(*args)
        return self._seen(result, result is not None)

    def findall(self, *args: Any) -> Any:
        result = self._pattern.findall(*args)
        return self._seen(result, bool(result))

    def finditer(self, *args: Any) -> Iterator[re.Match[str]]:
        for match in self._pattern.finditer(*args):
            self._on_hit()
            yield match

    def sub(self, *args: Any, **kwargs: Any) -> Any:
        return self.subn(*args, **kwargs)[0]

    def subn(self, *args: Any, **kwargs: Any) -> Any:
        result = self._pattern.subn(*args, **kwargs)
        return self._seen(result, result[1] > 0)

    def split(self, *args: Any, **kwargs: Any) -> Any:
        result = self._pattern.split(*args, **kwargs)
        return self._seen(result, len(result) > 1)


class _Off:
    """A pattern switched off: it matches nothing anywhere."""

    def __init__(self, pattern: re.Pattern[str]):
        self._pattern = pattern

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)

    def search(self, *args: Any) -> None:
        return None

    match = fullmatch = search

    def findall(self, *args: Any) -> list[Any]:
        return []

    def finditer(self, *args: Any) -> Iterator[re.Match[str]]:
        return iter(())

    def sub(self, repl: Any, string: str, *args: Any, **kwargs: Any) -> str:
        return string

    def subn(self, repl: Any, string: str, *args: Any, **kwargs: Any) -> tuple[str, int]:
        return string, 0

    def split(self, string: str, *args: Any, **kwargs: Any) -> list[str]:
        return [string]


@contextmanager
def _replaced(modules: list[ModuleType], held: Any, stand_in: Any) -> Iterator[None]:
    """`held` (a pattern, a function) replaced by `stand_in` wherever a module holds it by
    name."""
    holders = [
        (module, name)
        for module in modules
        for name, value in vars(module).items()
        if value is held
    ]
    for module, name in holders:
        setattr(module, name, stand_in)
    try:
        yield
    finally:
        for module, name in holders:
            setattr(module, name, held)


def _pattern(rule: Rule) -> re.Pattern[str]:
    return getattr(importlib.import_module(rule.module), rule.name)


def _held_elsewhere(patterns: tuple[re.Pattern[str], ...], modules: list[ModuleType]) -> set[int]:
    """The ids of the patterns something but a module's own names holds (a tuple of patterns, a
    function's default argument, a dict): there the audit could not switch them off. One walk
    of the collector's objects for all of them (a walk takes a good part of a second)."""
    # module namespaces hold rules by name; `re` keeps its compiled patterns in a cache
    by_name = {id(vars(module)) for module in modules}
    by_name |= {id(value) for name, value in vars(re).items() if name.startswith("_cache")}
    wanted = {id(pattern) for pattern in patterns}
    held = set()
    for holder in gc.get_referrers(*patterns):
        if not isinstance(holder, tuple | list | set | dict) or id(holder) in by_name:
            continue
        if isinstance(holder, tuple) and holder == patterns:
            continue  # the patterns as asked for here
        values = [*holder, *holder.values()] if isinstance(holder, dict) else holder
        held |= {id(value) for value in values if id(value) in wanted}
    return held


@cache
def corpora(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {path.stem: read_corpus(path) for path in sorted(folder.glob("*.jsonl"))}


def _agrees(corpus: str, line: dict[str, Any]) -> bool:
    """Whether the scorer agrees with the line's label; a reader that stops without a rule
    (one it counts on to match) does not agree."""
    try:
        return corpus_agreement(corpus, [line]).agreed == 1
    except (AttributeError, IndexError, KeyError, TypeError, ValueError, re.error):
        return False


def audit(
    folder: Path, progress: Callable[[str], None] = lambda _: None, until_decided: bool = False
) -> list[RuleReport]:
    """Each regex rule's report over the corpora in `folder`; with `until_decided`, each rule's
    lines are scored again only until it decides one (whether it earns its place, not how
    much)."""
    modules = audited_modules()
    # `re` hands out one compiled object for one regex: names holding the same object are one
    # rule, whose other names are its aliases
    named: dict[int, list[Rule]] = {}
    for rule in reading_rules(modules):
        named.setdefault(id(_pattern(rule)), []).append(rule)
    firsts = [first for first, *_ in named.values()]
    unswitchable = _held_elsewhere(tuple(_pattern(first) for first in firsts), modules)
    reports = {
        first: RuleReport(first, aliases=others, unswitchable=id(_pattern(first)) in unswitchable)
        for first, *others in named.values()
    }
    held = {rule: _pattern(rule) for rule in reports}
    _audit(
        modules,
        held,
        _Watched,
        lambda pattern: _Off(pattern),
        reports,
        folder,
        progress,
        until_decided,
    )
    return list(reports.values())


def audit_functions(
    folder: Path, progress: Callable[[str], None] = lambda _: None
) -> list[RuleReport]:
    """Each function rule's report over the corpora in `folder` (see the module docstring)."""
    modules = audited_modules()
    rules = function_rules(modules)
    reports = {rule: RuleReport(rule) for rule in rules}
    held = {rule: getattr(importlib.import_module(rule.module), rule.name) for rule in rules}

    def watched(function: Callable, on_hit: Callable[[], None]) -> Callable:
        return _watched_function(function, rules[_rule_of(function)], on_hit)

    def switched_off(function: Callable) -> Callable:
        nothing = rules[_rule_of(function)]
        return lambda *args, **kwargs: nothing(args)

    # a function is called from wherever the package imports it: the rewards and the scoring
    # harness too, not only the reading modules
    importlib.import_module("mmcritic.rewards")  # the reward corpus is read through it
    holders = [module for name, module in sys.modules.items() if _in_package(name, module)]
    _audit(holders, held, watched, switched_off, reports, folder, progress)
    return list(reports.values())


def _in_package(name: str, module: ModuleType | None) -> bool:
    return module is not None and name.split(".")[0] in ("mmcritic", "mmcritic_dev")


def function_rules(modules: list[ModuleType]) -> dict[Rule, Callable[[tuple], Any]]:
    """Each function a module defines at its top level whose result says whether it found
    something, with what it returns when it finds nothing, given its arguments."""
    rules = {}
    for module in modules:
        for node in ast.parse(inspect.getsource(module)).body:
            if isinstance(node, ast.FunctionDef) and node.returns is not None:
                nothing = _nothing_found(ast.unparse(node.returns), node.args.args)
                if nothing is not None:
                    rules[Rule(module.__name__, node.name)] = nothing
    return rules


def _nothing_found(returns: str, parameters: list[ast.arg]) -> Callable[[tuple], Any] | None:
    first = ast.unparse(parameters[0].annotation) if parameters and parameters[0].annotation else ""
    if returns == "bool":
        return lambda args: False
    if returns.endswith("| None"):
        return lambda args: None
    if returns.startswith("list["):
        return lambda args: []
    if returns == "str" and first == "str":
        return lambda args: args[0]  # a rewrite that leaves its text as it is
    return None


def _rule_of(function: Callable) -> Rule:
    return Rule(function.__module__, function.__name__)


def _watched_function(
    function: Callable, nothing: Callable[[tuple], Any], on_hit: Callable[[], None]
) -> Callable:
    """The function, reporting each call that found something."""

    def watched(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        if result != nothing(args):
            on_hit()
        return result

    return watched


def _audit(
    modules: list[ModuleType],
    held: dict[Rule, Any],
    watched: Callable[[Any, Callable[[], None]], Any],
    switched_off: Callable[[Any], Any],
    reports: dict[Rule, RuleReport],
    folder: Path,
    progress: Callable[[str], None],
    until_decided: bool = False,
) -> None:
    """Fills each rule's report: every line scored once with every rule watched, then each
    rule switched off in turn and the lines it found something on scored again (with
    `until_decided`, until the first it decides)."""
    lines = corpora(folder)
    current: list[LineKey] = [("", 0)]
    agreed = {}
    with ExitStack() as stack:
        for rule, rule_held in held.items():
            stand_in = watched(rule_held, lambda rule=rule: reports[rule].matched.add(current[0]))
            stack.enter_context(_replaced(modules, rule_held, stand_in))
        for corpus, corpus_lines in lines.items():
            progress(f"watching {corpus}: {len(corpus_lines)} lines")
            for number, line in enumerate(corpus_lines, start=1):
                current[0] = (corpus, number)
                agreed[current[0]] = _agrees(corpus, line)
    for index, (rule, rule_held) in enumerate(held.items(), start=1):
        report = reports[rule]
        progress(f"rule {index}/{len(held)} {rule}: {len(report.matched)} lines matched")
        with _replaced(modules, rule_held, switched_off(rule_held)):
            for key in sorted(report.matched):
                if until_decided and report.decides:
                    break
                corpus, number = key
                now = _agrees(corpus, lines[corpus][number - 1])
                if agreed[key] and not now:
                    report.decides.append(key)
                elif now and not agreed[key]:
                    report.harms.append(key)


@dataclass(frozen=True)
class PruningCost:
    """What removing every rule that decides at most `most` corpus lines would save and cost."""

    most: int
    rules: int
    definition_lines: int  # their own lines and the comments above them, not their call sites
    corpus_lines: int  # the lines they decide: an agreement lost if they all went
    by_corpus: dict[str, int]  # those lines a corpus: which scorers would agree less


def pruning_costs(rows: list[dict[str, Any]], limits: tuple[int, ...]) -> list[PruningCost]:
    """For each limit, the rules of the reading layer's files (rows as `rule_audit.py` writes
    them) that decide at most that many lines: how many layer lines they take and how many
    corpus lines they decide, so a line target can be weighed against the agreement it costs."""
    files = set(layer_lines())
    root = Path(inspect.getfile(importlib.import_module("mmcritic"))).parents[1]
    kept = []
    for row in rows:
        module, name = row["rule"].rsplit(".", 1)
        file = Path(inspect.getfile(importlib.import_module(module)))
        if not row.get("unswitchable") and str(file.relative_to(root)) in files:
            decides = {tuple(key) for key in row["decides"]}
            kept.append((decides, definition_lines(file, name)))
    costs = []
    for most in limits:
        chosen = [(decides, lines) for decides, lines in kept if len(decides) <= most]
        decided = set().union(*(decides for decides, _ in chosen))
        by_corpus = dict(sorted(Counter(corpus for corpus, _ in decided).items()))
        lines = sum(n for _, n in chosen)
        costs.append(PruningCost(most, len(chosen), lines, len(decided), by_corpus))
    return costs


def definition_lines(file: Path, name: str) -> int:
    """The lines of a module-level assignment or function named `name`, with the comment lines
    right above it and, for a function, the two blank lines that set it apart."""
    source = file.read_text(encoding="utf-8").splitlines()
    for node in ast.parse("\n".join(source)).body:
        if name in _defined_names(node):
            start = node.lineno - 1 - len(getattr(node, "decorator_list", []))
            while start > 0 and source[start - 1].lstrip().startswith("#"):
                start -= 1
            return node.end_lineno - start + (2 if isinstance(node, ast.FunctionDef) else 0)
    return 0


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else []
    if isinstance(node, ast.AnnAssign):
        targets = [node.target]
    return [target.id for target in targets if isinstance(target, ast.Name)]
