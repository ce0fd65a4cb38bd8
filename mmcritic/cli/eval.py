"""The `mmcritic eval` command's flags and handler, shared with the suite scripts in
`benchmarks/`; `mmcritic.cli` registers them with the other sub-commands."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mmcritic.inference.engines.base import LostRequests
from mmcritic.models.devices import add_device_arguments


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `mmcritic eval`; each maps onto one `EvalOptions` field."""
    from mmcritic.eval.protocols import PROTOCOL_NAMES
    from mmcritic.inference.engines.options import add_engine_arguments
    from mmcritic.inference.self_critique import STRATEGIES

    parser.add_argument(
        "--model",
        help="model folder or hub id, replay:FILE (saved responses), or with --engine openai "
        "the served model name",
    )
    parser.add_argument("--tasks", help="comma-separated task names (see --list)")
    parser.add_argument("--output", type=Path, help="folder for results.json and sample logs")
    parser.add_argument("--list", action="store_true", help="print the tasks and exit")
    parser.add_argument("--limit", type=int, help="first N rows of each task")
    parser.add_argument("--batch-size", type=int, default=8, help="samples per model call")
    for flag, meta, text in (
        ("--task-data", "TASK=PATH", "a local copy of a task (json, jsonl, parquet, saved)"),
        ("--media-root", "TASK=DIR", "folder the task's relative image/video paths are in"),
    ):
        parser.add_argument(flag, action="append", default=[], metavar=meta, help=text)
    parser.add_argument("--bon-n", type=int, default=1, help="answers sampled for self-critique")
    parser.add_argument(
        "--bon-strategy",
        choices=sorted(STRATEGIES),
        default="knockout",
        help="how the critic picks among the --bon-n answers",
    )
    parser.add_argument(
        "--temperature", type=float, default=1.0, help="sampling with --bon-n and --critic-votes"
    )
    parser.add_argument("--both-orders", action="store_true", help="judge pairs both ways")
    parser.add_argument(
        "--critic-votes",
        type=int,
        default=1,
        help="critic tasks: sample this many critiques per pair (and order) and score their "
        "majority verdict (Voting@k); 1: one greedy critique",
    )
    parser.add_argument(
        "--refine-rounds",
        type=int,
        default=0,
        help="policy tasks: the model critiques its answer and revises it, up to this many "
        "rounds, stopping when it accepts; results add accuracy per round and how many "
        "revisions went right to wrong and wrong to right",
    )
    parser.add_argument(
        "--refine-each",
        action="store_true",
        help="with --bon-n and --refine-rounds: refine every candidate, then pick (default: "
        "refine the one picked)",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOL_NAMES,
        default="r1",
        help="whose prompts, media budget and decoding: r1 (LLaVA-Critic-R1's think/boxed "
        "convention), lmms-eval (what lmms-eval 0.7.3 gives Qwen2.5-VL) or official (each "
        "benchmark's released prompt); docs/scoring.md has the table",
    )
    parser.add_argument(
        "--no-think-suffix",
        action="store_true",
        help="r1 only: ask policy questions without the think/boxed instruction",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        help="override the protocol's limit (r1: 2048; lmms-eval: per task); recorded as an "
        "override, since the numbers are then the run's own",
    )
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    add_device_arguments(parser)
    add_engine_arguments(parser)
    parser.add_argument(
        "--resume", action="store_true", help="continue an interrupted run, redoing failed samples"
    )
    parser.add_argument(
        "--judge",
        metavar="MODULE:FUNCTION",
        help="fn(prompt, target, response) -> score, for benchmarks judged by an LLM upstream",
    )
    parser.add_argument(
        "--judge-engine",
        choices=("hf", "openai"),
        help="score MathVista, MathVerse, MMVU and HallusionBench with their harness's judge "
        "prompts, asked of --judge-model in this process (hf) or at --judge-url (openai)",
    )
    parser.add_argument(
        "--judge-url", action="append", default=[], help="judge server; repeat for several"
    )
    parser.add_argument("--judge-model", help="judge model name (openai) or folder (hf)")


def run_eval_command(args: argparse.Namespace, show_progress: bool = True) -> dict[str, Any]:
    """Runs `mmcritic eval` from parsed flags; returns what it prints."""
    from mmcritic.eval.runner import EvalOptions, failed_samples, run_eval
    from mmcritic.eval.suites import summary
    from mmcritic.inference.engines.options import engine_options

    if args.list:
        listing = list_tasks()
        if show_progress:
            print(task_table(listing), file=sys.stderr)
        return listing
    missing = [flag for flag in ("model", "tasks", "output") if not getattr(args, flag)]
    if missing:
        raise ValueError(f"mmcritic eval needs --{', --'.join(missing)} (or --list)")
    options = EvalOptions(
        model=args.model,
        tasks=tuple(name.strip() for name in args.tasks.split(",") if name.strip()),
        output=args.output,
        limit=args.limit,
        batch_size=args.batch_size,
        task_data=pairs(args.task_data, "--task-data"),
        media_root=pairs(args.media_root, "--media-root"),
        bon_n=args.bon_n,
        bon_strategy=args.bon_strategy,
        temperature=args.temperature,
        both_orders=args.both_orders,
        critic_votes=args.critic_votes,
        refine_rounds=args.refine_rounds,
        refine_each=args.refine_each,
        protocol=args.protocol,
        think_suffix=not args.no_think_suffix,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
        resume=args.resume,
        device=args.device,
        dtype=args.dtype,
        show_progress=show_progress,
        engine=None if args.engine == "hf" else engine_options(args, args.model, args.batch_size),
    )
    results = run_eval(options, judge=judge_from_flags(args))
    if show_progress:
        print(summary(results), file=sys.stderr)
    if failed_samples(results):
        raise IncompleteRun(
            f"{failed_samples(results)} samples got no response (listed as failed_doc_ids in "
            f"{args.output / 'results.json'}); rerun with --resume to redo them"
        )
    return results


class IncompleteRun(LostRequests):
    """An eval that wrote its results but lost samples to a failing engine."""


def pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    """`TASK=VALUE` flags as a dict; a malformed or repeated one is an error."""
    result: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or not rest:
            raise ValueError(f"{flag} takes TASK=VALUE, got {value!r}")
        if key in result:
            raise ValueError(f"{flag} names {key} twice")
        result[key] = rest
    return result


def judge_from_flags(args: argparse.Namespace) -> Any:
    """The judge `--judge` or `--judge-engine` names; None for rule-based scores only."""
    from mmcritic.eval.judges import FunctionJudge, LLMJudge

    if args.judge and args.judge_engine:
        raise ValueError("give --judge (a function of your own) or --judge-engine, not both")
    if args.judge:
        return FunctionJudge(load_judge(args.judge))
    if not args.judge_engine:
        if args.judge_url or args.judge_model:
            raise ValueError("--judge-url and --judge-model need --judge-engine")
        return None
    return LLMJudge(_judge_engine(args.judge_engine, args.judge_model, tuple(args.judge_url)))


def _judge_engine(engine: str, model: str | None, urls: tuple[str, ...]) -> Any:
    from mmcritic.inference.engines import EngineOptions, open_engine
    from mmcritic.inference.engines.served import ServedEngine, ServerOptions

    if engine == "hf":
        if not model or urls:
            raise ValueError("--judge-engine hf takes --judge-model (a folder), no --judge-url")
        return open_engine(EngineOptions("hf", model))
    if not urls:
        raise ValueError("--judge-engine openai needs --judge-url")
    # a text judge (GPT or any served model): nothing to suppress, its own sampling defaults
    return ServedEngine(ServerOptions(urls, model))


def load_judge(spec: str) -> Any:
    """The callable named by `module:function`."""
    module_name, sep, attribute = spec.partition(":")
    if not sep:
        raise ValueError(f"--judge takes MODULE:FUNCTION, got {spec!r}")
    judge = getattr(importlib.import_module(module_name), attribute, None)
    if not callable(judge):
        raise ValueError(f"--judge {spec}: {module_name} has no callable {attribute!r}")
    return judge


def task_table(listing: dict[str, Any]) -> str:
    """`--list` for a person: one line per task with its kind, dataset and split."""
    width = max(len(name) for name in listing)
    lines = [f"{'task':{width}}  kind    dataset (split)"]
    for name, task in listing.items():
        dataset = task["dataset"]
        where = ", ".join(dataset) if isinstance(dataset, list) else "local only"
        lines.append(f"{name:{width}}  {task['kind']:6}  {where} ({task['split']})")
    return "\n".join(lines)


def list_tasks() -> dict[str, Any]:
    """Every task with its dataset, split, kind and scoring method."""
    from mmcritic.eval.registry import get_task, task_names

    listing = {}
    for name in task_names():
        task = get_task(name)
        listing[name] = {
            "kind": task.kind,
            "dataset": list(task.dataset.hub_ids) or task.dataset.local_hint,
            "split": task.dataset.split,
            "scoring": task.scoring,
        }
    return listing
