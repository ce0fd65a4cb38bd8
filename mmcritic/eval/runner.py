"""Running tasks: rows to responses to scores, written as they finish, resumable.

Output folder:

    DIR/settings.json          the run's settings; a resumed run must match them
    DIR/samples_<task>.jsonl   one line per finished sample: prompt, response, parsed answer,
                               target, score (and the critic's verdicts, self-critique details)
    DIR/results.json           per task: metrics, sample count, scoring method, settings

Each sample line is appended and flushed as soon as its batch is scored, so a crash loses at
most one batch; `resume` reads the lines back, drops a torn last line, and skips those samples.
Metrics are always computed from the sample lines, so a resumed run and a fresh one agree.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mmcritic.data.folder_lock import folder_lock
from mmcritic.data.schema import RecordError
from mmcritic.eval import metrics
from mmcritic.eval.backends import (
    Backend,
    CriticOutput,
    CriticTexts,
    Generation,
    ModelBackend,
    PolicyOutput,
    ReplayBackend,
    Sample,
    critic_output,
)
from mmcritic.eval.judges import JudgeItem, JudgeLike, JudgeVerdict
from mmcritic.eval.protocols import (
    PROTOCOLS,
    critic_prompt,
    policy_prompt,
    protocol,
    task_prompt,
    verdict_reader,
)
from mmcritic.eval.protocols.r1 import DEFAULT_MAX_NEW_TOKENS
from mmcritic.eval.registry import get_task
from mmcritic.eval.rows import TaskRows
from mmcritic.eval.tasks import PolicyTask, Row, Task
from mmcritic.inference.engines import EngineOptions, RequestFailed, open_engine
from mmcritic.inference.self_critique import STRATEGIES, Strategy
from mmcritic.reading.final import final_answer
from mmcritic.text import json_text

logger = logging.getLogger(__name__)

REPLAY_PREFIX = "replay:"
# A judge for benchmarks whose reference harness scores with an LLM (`mmcritic.eval.judges`):
# its score replaces the rule-based one, which is kept next to it in each sample line with the
# judge's verdict and raw reply.
Judge = JudgeLike
# Settings a resumed run must share with the run it continues; limit and batch size may change.
_RESUMABLE = ("model", "protocol", "think_suffix", "bon_n", "bon_strategy", "temperature")
_RESUMABLE += ("both_orders", "critic_votes", "refine_rounds", "refine_each")
_RESUMABLE += ("seed", "max_new_tokens", "task_data", "media_root")
# Sample lines that are not in the metrics, by the key that marks them, with the results.json
# fields that count and list them: the engine gave no response (redone by --resume), the row
# cannot be asked (rejected, kept in REJECTED_ROWS), the response could not be scored.
UNSCORED = {
    "failed": ("n_failed", "failed_doc_ids"),
    "rejected": ("n_rejected", "rejected_doc_ids"),
    "score_error": ("n_score_errors", "score_error_doc_ids"),
}
REJECTED_ROWS = "rejected_rows.jsonl"


@dataclass(frozen=True)
class EvalOptions:
    """Everything an eval run needs; the `mmcritic eval` flags map onto these one to one.

    `model` is a checkpoint path or hub id, or `replay:FILE` to re-score saved responses.
    `protocol` names whose prompts, media budget and decoding are used (`mmcritic.eval.protocols`);
    `max_new_tokens` overrides the protocol's limit, which makes the numbers its own.
    `task_data` points a task at a local copy (anything `datasets` loads) and `media_root` at the
    folder its relative media paths resolve against. `bon_n` > 1 samples that many answers at
    `temperature` and picks one with `bon_strategy`; `both_orders` judges every critic pair in
    both orders (critic tasks and self-critique alike); `critic_votes` > 1 samples that many
    critiques of each critic pair at `temperature` and takes their majority verdict (Voting@k).
    `refine_rounds` k > 0 lets the model critique its policy answers and revise them, up to k
    rounds (`mmcritic.inference.refine`); with `bon_n` > 1 the chosen answer is refined, or
    with `refine_each` every candidate before the pick.
    `engine` serves the model another way than transformers in this process (`--engine`);
    with `openai`, `model` is the served model name.
    """

    model: str
    tasks: tuple[str, ...]
    output: Path
    limit: int | None = None
    batch_size: int = 8
    task_data: Mapping[str, str] = field(default_factory=dict)
    media_root: Mapping[str, str] = field(default_factory=dict)
    bon_n: int = 1
    bon_strategy: Strategy = "knockout"
    temperature: float = 1.0
    both_orders: bool = False
    critic_votes: int = 1
    refine_rounds: int = 0
    refine_each: bool = False
    protocol: str = "r1"
    think_suffix: bool = True
    max_new_tokens: int | None = None
    seed: int = 0
    resume: bool = False
    device: str = "auto"
    dtype: str = "auto"
    show_progress: bool = True
    engine: EngineOptions | None = None
    # the model family (`mmcritic.models.families`), read from the engine when the run opens it:
    # lmms-eval asks and sizes media per model class
    family: str | None = None

    def __post_init__(self) -> None:
        self._check_tasks()
        self._check_sampling()
        self._check_refinement()
        protocol(self.protocol)
        if not self.think_suffix and self.protocol != "r1":
            raise ValueError(
                f"--no-think-suffix applies to the r1 protocol; {self.protocol} prompts never "
                "carry the think/boxed instruction"
            )
        if self.max_new_tokens is not None and self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {self.max_new_tokens}")

    def _check_tasks(self) -> None:
        if not self.tasks:
            raise ValueError("no tasks given; pass --tasks a,b (see `mmcritic eval --list`)")
        for name in self.tasks:
            get_task(name)
        for flag, mapping in (("--task-data", self.task_data), ("--media-root", self.media_root)):
            stray = sorted(set(mapping) - set(self.tasks))
            if stray:
                raise ValueError(f"{flag} names tasks not being run: {stray}; run {self.tasks}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}; omit it for all rows")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")

    def _check_sampling(self) -> None:
        """Best-of-N and Voting@k: counts of at least 1, and a temperature to sample at."""
        if self.bon_n < 1:
            raise ValueError(f"bon_n must be at least 1, got {self.bon_n}")
        if self.bon_strategy not in STRATEGIES:
            raise ValueError(
                f"unknown bon strategy {self.bon_strategy!r}; one of {sorted(STRATEGIES)}"
            )
        if self.bon_n > 1 and self.temperature <= 0:
            raise ValueError("bon_n > 1 samples answers: set temperature > 0 (e.g. 1.0)")
        if self.critic_votes < 1:
            raise ValueError(f"critic_votes must be at least 1, got {self.critic_votes}")
        if self.critic_votes > 1 and self.temperature <= 0:
            raise ValueError("critic_votes > 1 samples critiques: set temperature > 0")
        if self.critic_votes > 1 and self.model.startswith(REPLAY_PREFIX):
            raise ValueError("--critic-votes samples new critiques; a replay file holds one each")

    def _check_refinement(self) -> None:
        """Refinement: rounds of 0 or more, `refine_each` only over Best-of-N candidates."""
        if self.refine_rounds < 0:
            raise ValueError(f"refine_rounds must be 0 or more, got {self.refine_rounds}")
        if self.refine_each and (self.refine_rounds == 0 or self.bon_n == 1):
            raise ValueError(
                "refine_each refines every Best-of-N candidate: it needs "
                "refine_rounds > 0 and bon_n > 1"
            )
        if self.refine_rounds and self.model.startswith(REPLAY_PREFIX):
            raise ValueError(
                "--refine-rounds asks the model for critiques and revisions; a "
                "replay file holds one response each"
            )

    @property
    def generation(self) -> Generation:
        return Generation(
            max_new_tokens=self.max_new_tokens or DEFAULT_MAX_NEW_TOKENS,
            batch_size=self.batch_size,
            think_suffix=self.think_suffix,
            bon_n=self.bon_n,
            bon_strategy=self.bon_strategy,
            temperature=self.temperature,
            both_orders=self.both_orders,
            critic_votes=self.critic_votes,
            seed=self.seed,
            refine_rounds=self.refine_rounds,
            refine_each=self.refine_each,
        )

    @property
    def engine_options(self) -> EngineOptions:
        """The engine the run uses: `engine`, or transformers on `model` in this process."""
        if self.engine is not None:
            return self.engine
        return EngineOptions("hf", self.model, self.device, self.dtype, self.batch_size)

    def settings(self) -> dict[str, Any]:
        """The JSON-able settings recorded with the results."""
        keys = ("model", "limit", "batch_size", "task_data", "media_root", *_RESUMABLE[1:])
        settings = {key: _jsonable(getattr(self, key)) for key in dict.fromkeys(keys)}
        return settings | {"engine": self.engine_options.engine}


def _jsonable(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def run_eval(
    options: EvalOptions, backend: Backend | None = None, judge: Judge | None = None
) -> dict[str, Any]:
    """Runs every task in `options`, writes the output folder and returns `results.json`'s
    content. `backend` replaces the model (tests, custom engines); `judge` scores the tasks
    whose reference harness uses an LLM judge. The output folder is locked for the run: a
    second run on it stops at once (`mmcritic.data.folder_lock`)."""
    with folder_lock(options.output):
        return _run_eval(options, backend, judge)


def _run_eval(options: EvalOptions, backend: Backend | None, judge: Judge | None) -> dict:
    _check_settings(options)
    backend = backend or _backend(options)
    options = replace(options, family=options.family or _family(getattr(backend, "engine", None)))
    results: dict[str, Any] = {"model": options.model, "tasks": {}}
    earlier_engine = _earlier_results(options.output).get("engine")
    started, answered = time.perf_counter(), 0
    for name in options.tasks:
        results["tasks"][name], answered_now = run_task(get_task(name), options, backend, judge)
        answered += answered_now
        seconds = time.perf_counter() - started
        results["engine"] = _describe(backend) | {
            "samples_this_run": answered,
            "samples_per_s": answered / seconds if seconds > 0 else None,
        }
        if not answered and earlier_engine:  # a finished run resumed: its speed stays on record
            results["engine"] = earlier_engine
        _write_json(options.output / "results.json", results)
    _write_rejected_rows(options)
    return results


def _earlier_results(output: Path) -> dict[str, Any]:
    """The results.json an earlier run left in the folder, or {} (none, or unreadable)."""
    try:
        earlier = json.loads((output / "results.json").read_text())
    except (OSError, ValueError):
        return {}
    return earlier if isinstance(earlier, dict) else {}


def _write_rejected_rows(options: EvalOptions) -> None:
    """Every rejected row of the run's tasks, with its task, in one file beside the results."""
    lines = []
    for name in options.tasks:
        path = samples_path(options.output, name)
        records = SampleLog.read(path) if path.exists() else []
        lines += [{"task": name, **r} for r in records if "rejected" in r]
    target = options.output / REJECTED_ROWS
    if lines or target.exists():
        temporary = target.with_suffix(".jsonl.tmp")
        temporary.write_text("".join(_line(line) for line in lines), encoding="utf-8")
        os.replace(temporary, target)


def _backend(options: EvalOptions) -> Backend:
    if options.model.startswith(REPLAY_PREFIX):
        return ReplayBackend(options.model.removeprefix(REPLAY_PREFIX))
    engine = open_engine(options.engine_options)
    media = PROTOCOLS[options.protocol].media_for(options.family or _family(engine))
    return ModelBackend(engine, options.generation, media)


def _family(engine: Any) -> str | None:
    """The family of the model behind an engine, None when it cannot tell (no engine: a replay;
    a server whose model's config is not here)."""
    family = getattr(engine, "family", None)
    return family.name if family is not None else None


def _describe(backend: Backend) -> dict[str, Any]:
    describe = getattr(backend, "describe", None)
    return describe() if callable(describe) else {"engine": type(backend).__name__}


def failed_samples(results: Mapping[str, Any]) -> int:
    """How many samples of a run got no response (a server lost them); `--resume` redoes them."""
    return sum(task.get("n_failed", 0) for task in results["tasks"].values())


def _check_settings(options: EvalOptions) -> None:
    path = options.output / "settings.json"
    current = options.settings()
    logs = [samples_path(options.output, name) for name in options.tasks]
    if not options.resume:
        # an empty log is the leftover of a run that failed before its first sample
        existing = [str(log) for log in logs if log.exists() and log.stat().st_size > 0]
        if existing:
            raise FileExistsError(
                f"{existing} exist; pass --resume to continue that run or choose another --output"
            )
    elif path.exists():
        saved = json.loads(path.read_text(encoding="utf-8"))
        changed = {k: (saved.get(k), current[k]) for k in _RESUMABLE if saved.get(k) != current[k]}
        if changed:
            raise ValueError(
                f"cannot resume {options.output}: settings differ (saved, now): {changed}"
            )
    _write_json(path, current)


def samples_path(output: Path, task: str) -> Path:
    """Where a task's per-sample lines go."""
    return output / f"samples_{task}.jsonl"


def run_task(
    task: Task, options: EvalOptions, backend: Backend, judge: Judge | None = None
) -> tuple[dict[str, Any], int]:
    """Runs one task to completion (skipping finished samples); returns its results and the
    number of samples this run answered and scored, which a resumed run's speed is measured
    on."""
    log = SampleLog(samples_path(options.output, task.name), options.resume)
    rows = TaskRows(task, options.task_data.get(task.name))
    root = options.media_root.get(task.name)
    base_dir = Path(root).expanduser() if root else rows.base_dir()
    bar = tqdm(
        total=options.limit,
        initial=len(log.done) if options.limit is None else min(len(log.done), options.limit),
        desc=task.name,
        unit="sample",
        disable=not options.show_progress,
    )
    answered = 0
    with bar:
        for batch in _batches(_pending(task, rows, log, base_dir, options), options.batch_size):
            for record in _score_batch(task, batch, backend, options, judge):
                log.append(record)
                answered += not any(key in record for key in UNSCORED)
            bar.update(len(batch))
    kept = [r for r in log.records if options.limit is None or r["doc_id"] < options.limit]
    _report_unscored(task.name, kept)
    scored = [r for r in kept if not any(key in r for key in UNSCORED)]
    result = _task_result(task, options, scored, rows.location)
    return result | _unscored_counts(kept), answered


def _pending(
    task: Task, rows: TaskRows, log: SampleLog, base_dir: Path, options: EvalOptions
) -> Iterator[Sample]:
    """The samples still to run; a row that cannot become one is logged as rejected, with
    its reason and an excerpt of its fields, and the run goes on."""
    for doc_id, row in islice(rows, options.limit):
        if doc_id in log.done:
            continue
        if isinstance(row, RecordError):
            log.append(_rejected_record(doc_id, f"unreadable row: {row}") | _raw(row))
            continue
        try:
            sample = make_sample(task, doc_id, row, base_dir, options)
        except Exception as err:  # a row's fields can be missing, mistyped or unreadable
            log.append(_rejected_record(doc_id, f"{type(err).__name__}: {err}", row))
            continue
        yield sample


def _rejected_record(doc_id: int, reason: str, row: Mapping[str, Any] | None = None) -> dict:
    """A row that cannot be asked: its reason and, when known, a bounded excerpt of its fields
    (a row whose media fail is kept with the prompt built from it instead)."""
    record: dict[str, Any] = {"doc_id": doc_id, "rejected": reason[:500]}
    if row is not None:
        record["row"] = {str(key): _bounded(value) for key, value in row.items()}
    return record


def _raw(error: RecordError) -> dict[str, Any]:
    """A bounded excerpt of the text of a row that could not be parsed, when there is one."""
    return {} if error.raw is None else {"raw": _bounded(error.raw, limit=500)}


def _shown(sample: Sample) -> dict[str, Any]:
    return {"prompt": sample.prompt.shown()}


def _bounded(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def _report_unscored(task: str, records: Sequence[dict[str, Any]]) -> None:
    for key, what, hint in (
        ("failed", "got no response", "rerun with --resume"),
        ("rejected", "were rejected", f"see {REJECTED_ROWS}"),
        ("score_error", "could not be scored", "see their score_error"),
    ):
        hit = [r for r in records if key in r]
        if hit:
            logger.error(
                "%s: %d samples %s (first: doc %d, %s); %s",
                task,
                len(hit),
                what,
                hit[0]["doc_id"],
                hit[0][key],
                hint,
            )


def _unscored_counts(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How many samples of a task are not in its metrics, and which, by cause."""
    counts: dict[str, Any] = {}
    for key, (count, listed) in UNSCORED.items():
        ids = [r["doc_id"] for r in records if key in r]
        counts |= {count: len(ids), listed: ids}
    return counts


def make_sample(
    task: Task,
    doc_id: int,
    data: dict[str, Any],
    base_dir: Path,
    options: EvalOptions | None = None,
) -> Sample:
    """What the task builds from one row (a policy `Problem` or a critic `Pair`) and the prompt
    the run's protocol asks with it (r1 when no options are given)."""
    row = Row(task.name, doc_id, data, task.fields)
    name = options.protocol if options else "r1"
    tokens = options.max_new_tokens if options else None
    if isinstance(task, PolicyTask):
        problem = task.problem(row)
        if problem.target is None or (isinstance(problem.target, str) and not problem.target):
            raise ValueError(f"the row has no gold answer ({problem.target!r})")
        suffix = options.think_suffix if options else True
        family = options.family if options else None
        prompt = policy_prompt(task.name, name, row, problem, suffix, tokens, family)
        return Sample(doc_id, problem, base_dir, prompt)
    pair = task.pair(row)
    if pair.truth not in ("1", "2", "tie"):
        raise ValueError(f"the pair has no better response named ({pair.truth!r})")
    swapped = critic_prompt(task.name, name, pair, True, tokens)
    return Sample(
        doc_id, pair, base_dir, critic_prompt(task.name, name, pair, False, tokens), swapped
    )


def _batches(samples: Iterator[Sample], size: int) -> Iterator[list[Sample]]:
    while batch := list(islice(samples, size)):
        yield batch


def _score_batch(
    task: Task,
    batch: list[Sample],
    backend: Backend,
    options: EvalOptions,
    judge: Judge | None,
) -> list[dict[str, Any]]:
    if isinstance(task, PolicyTask):
        outputs = backend.answer(task, batch)
        verdicts = _judged(task, batch, outputs, judge)
        return [
            _policy_outcome(task, sample, output, verdicts.get(sample.doc_id))
            for sample, output in zip(batch, outputs, strict=True)
        ]
    read = verdict_reader(task.name, options.protocol)
    texts: list[CriticTexts] = backend.judge(task, batch, options.both_orders)
    return [_critic_outcome(sample, text, read) for sample, text in zip(batch, texts, strict=True)]


def _policy_outcome(
    task: PolicyTask,
    sample: Sample,
    output: PolicyOutput,
    judged: JudgeVerdict | RequestFailed | None,
) -> dict[str, Any]:
    if output.rejection:
        return _rejected_record(sample.doc_id, output.rejection) | _shown(sample)
    failure = output.failure or (judged if isinstance(judged, RequestFailed) else None)
    if failure:
        return _failed_record(sample, failure)
    verdict = judged if isinstance(judged, JudgeVerdict) else None
    return _guarded(sample, output.response, lambda: _policy_record(task, sample, output, verdict))


def _critic_outcome(sample: Sample, text: CriticTexts, read: Callable[[str], Any]) -> dict:
    if text.rejection:
        return _rejected_record(sample.doc_id, text.rejection) | _shown(sample)
    if text.failure:
        return _failed_record(sample, text.failure)
    return _guarded(sample, text.raw, lambda: _critic_record(sample, critic_output(text, read)))


def _guarded(sample: Sample, response: str, record: Callable[[], dict[str, Any]]) -> dict:
    """The sample's scored line, or, when reading or scoring its response raises, a line with
    the response and the error (`score_error`), out of the metrics: one answer never stops the
    run, and the next run does not stop at it again."""
    try:
        return record()
    except Exception as err:  # a scorer fault on one response is that sample's, not the run's
        logger.exception("doc %d: scoring failed", sample.doc_id)
        return {
            "doc_id": sample.doc_id,
            "prompt": sample.prompt.shown(),
            "response": response,
            "score_error": f"{type(err).__name__}: {str(err)[:300]}",
        }


def _judged(
    task: PolicyTask, batch: list[Sample], outputs: list[PolicyOutput], judge: Judge | None
) -> dict[int, JudgeVerdict | RequestFailed]:
    """The judge's verdicts on a batch's answers, asked together (a served judge runs them
    concurrently); none for a task scored by rule upstream too. A judge that fails leaves the
    batch's samples failed, for `--resume` to judge again."""
    if judge is None or not task.judged_upstream:
        return {}
    answered = [
        (s, o) for s, o in zip(batch, outputs, strict=True) if not (o.failure or o.rejection)
    ]
    items = [JudgeItem(task.name, s.item, o.response) for s, o in answered]
    try:
        verdicts: list[JudgeVerdict | RequestFailed] = list(judge.judge_many(items))
    except Exception as err:  # a judge server down, or a judge of one's own that raises
        verdicts = [RequestFailed(f"judge: {type(err).__name__}: {err}")] * len(items)
    return {sample.doc_id: verdict for (sample, _), verdict in zip(answered, verdicts, strict=True)}


def _failed_record(sample: Sample, failure: RequestFailed) -> dict[str, Any]:
    """A sample the engine gave no response for: kept in the log, never scored, redone by
    `--resume`."""
    return {
        "doc_id": sample.doc_id,
        "prompt": sample.prompt.shown(),
        "failed": failure.reason,
        "url": failure.url,
        "attempts": failure.attempts,
    }


def _policy_record(
    task: PolicyTask,
    sample: Sample,
    output: PolicyOutput,
    judged: JudgeVerdict | None,
) -> dict[str, Any]:
    problem = sample.item
    record: dict[str, Any] = {"doc_id": sample.doc_id, "prompt": sample.prompt.shown()}
    answer = final_answer(output.response)
    scored = task.score(answer, problem)
    record |= {
        "response": output.response,
        "parsed": scored.parsed,
        "target": problem.target,
        "score": scored.score,
        "meta": problem.meta,
    }
    if "refinement" in output.extra:
        steps = output.extra["refinement"]["steps"]
        record["refine_scores"] = [
            task.score(final_answer(step["answer"]), problem).score for step in steps
        ]
    if judged is not None:
        record |= {
            "rule_score": scored.score,
            "score": judged.score,
            "judge_verdict": judged.verdict,
            "judge_raw": judged.raw,
        }
    return record | output.extra


def _critic_record(sample: Sample, output: CriticOutput) -> dict[str, Any]:
    pair = sample.item
    record: dict[str, Any] = {
        "doc_id": sample.doc_id,
        "question": pair.question,
        "prompt": sample.prompt.shown(),
        "response_1": pair.response_1,
        "response_2": pair.response_2,
        "target": pair.truth,
        "meta": pair.meta,
    }
    correct = output.verdict == pair.truth
    record |= {
        "response": output.raw,
        "parsed": output.verdict,
        "reason": output.reason,
        "verdict_source": output.source,
        "correct": correct,
        "score": float(correct),
    }
    if output.both_orders:
        record |= {
            "swapped_response": output.swapped_raw,
            "swapped_parsed": output.swapped_verdict,
            "swapped_verdict_source": output.swapped_source,
            "swapped_correct": output.swapped_verdict == pair.truth,
            "position_consistent": output.verdict in ("1", "2")
            and output.verdict == output.swapped_verdict,
        }
    if output.votes:
        record |= {"votes": list(output.votes), "vote_margin": output.vote_margin}
        if output.both_orders:
            record |= {
                "swapped_votes": list(output.swapped_votes),
                "swapped_vote_margin": output.swapped_vote_margin,
            }
    return record


def _task_result(
    task: Task, options: EvalOptions, records: Sequence[dict[str, Any]], location: str | None
) -> dict[str, Any]:
    judged = any("rule_score" in record for record in records)
    result = {
        "kind": task.kind,
        "metrics": task.aggregate(records) if records else {},
        "n_samples": len(records),
        "scoring": "LLM judge (the benchmark's judge prompts; --judge-engine)"
        if judged
        else task.scoring,
        "protocol": protocol_settings(task, options),
        "settings": options.settings()
        | {
            "dataset": location,
            "split": task.dataset.split,
            "configs": [c for c in task.dataset.configs if c],
        },
    }
    if task.kind == "critic":
        result["verdict_sources"] = verdict_sources(records)
    if any("refine_scores" in record for record in records):
        result["refinement"] = metrics.refinement(records, options.refine_rounds)
    return result


def protocol_settings(task: Task, options: EvalOptions) -> dict[str, Any]:
    """Every setting the run's protocol implies for `task`: the protocol, where the prompt's
    wording comes from, the decoding (with `--max-new-tokens` applied), the media budget and
    which published tables the numbers compare with; `overrides` lists what the run changed."""
    chosen = protocol(options.protocol)
    spec = task_prompt(task.name, task.kind, options.protocol, options.family)
    settings = chosen.describe(options.family) | spec.describe()
    overrides = {}
    if options.max_new_tokens is not None:
        settings["decoding"]["max_new_tokens"] = options.max_new_tokens
        overrides["max_new_tokens"] = options.max_new_tokens
    if task.kind == "policy" and options.protocol == "r1":
        settings["think_suffix"] = options.think_suffix
        if not options.think_suffix:
            overrides["think_suffix"] = False
    if options.bon_n > 1 and task.kind == "policy":
        overrides |= {"bon_n": options.bon_n, "temperature": options.temperature}
    if options.refine_rounds and task.kind == "policy":
        overrides |= {"refine_rounds": options.refine_rounds, "refine_each": options.refine_each}
    return settings | {"overrides": overrides}


def verdict_sources(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How the critic's verdicts were read, over every judged order: `official` (the
    benchmark's own rule), `box`, `phrase` (stated in words, no box) or `unreadable`, so a
    score earned from phrased verdicts is visible."""
    counts = {"official": 0, "box": 0, "phrase": 0, "unreadable": 0}
    for record in records:
        for key in ("verdict_source", "swapped_verdict_source"):
            if key in record:
                counts[record[key] or "unreadable"] += 1
    return counts


class SampleLog:
    """A task's per-sample lines: read back on resume, appended and flushed as they come. A
    failed sample's line stays until a resume redoes the sample."""

    def __init__(self, path: Path, resume: bool):
        self.path = path
        read = self.read(path) if resume and path.exists() else []
        self.records: list[dict[str, Any]] = [record for record in read if "failed" not in record]
        self.done = {record["doc_id"] for record in self.records}
        self._rewrite()

    @staticmethod
    def read(path: Path) -> list[dict[str, Any]]:
        """The complete sample lines, one per row (a row logged twice, e.g. by a run killed
        after writing it and resumed, counts once: its last line); a line torn by a crash (cut
        anywhere, even inside a multi-byte character) is dropped and its sample redone."""
        records: dict[int, dict[str, Any]] = {}
        with path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                record = _complete_record(line)
                if record is None:
                    logger.warning("%s line %d is torn; that sample will be redone", path, number)
                else:
                    records[record["doc_id"]] = record
        return list(records.values())

    def _rewrite(self) -> None:
        """Starts the file from the records kept, so a torn line never precedes new ones."""
        temporary = self.path.with_suffix(".jsonl.tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            for record in self.records:
                handle.write(_line(record))
        os.replace(temporary, self.path)

    def append(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(_line(record))
            handle.flush()
        self.records.append(record)
        if "failed" not in record:
            self.done.add(record["doc_id"])


def _complete_record(line: bytes) -> dict[str, Any] | None:
    if not line.endswith(b"\n"):
        return None
    try:
        record = json.loads(line.decode("utf-8"))
    except ValueError:  # bad UTF-8 or bad JSON
        return None
    return record if isinstance(record, dict) and "doc_id" in record else None


def _line(record: dict[str, Any]) -> str:
    return json_text(record) + "\n"


def _write_json(path: Path, content: Any) -> None:
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(content, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(temporary, path)
