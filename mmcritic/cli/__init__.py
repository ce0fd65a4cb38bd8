"""The `mmcritic` command: one entry point, one sub-command per pipeline stage.

Each sub-command parses its flags into the library's option objects and calls the library;
nothing here decides behaviour. Results go to stdout as JSON, progress and logs to stderr.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any, NoReturn

from mmcritic.models.devices import add_device_arguments

Handler = Callable[[argparse.Namespace], Any]


def _command(commands: argparse._SubParsersAction, name: str, summary: str):
    """A sub-command whose `--help` opens with what it does and shows every default."""
    return commands.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        formatter_class=_DefaultsShown,
    )


class _DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a flag's default where it has one worth showing (not None, not a bare switch)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        # compared by identity: a default of 0 equals False, and is worth showing
        unshown = action.default is None or action.default is False
        unshown = unshown or action.default == [] or action.default is argparse.SUPPRESS
        if unshown or action.nargs == 0:
            return action.help or ""
        return super()._get_help_string(action)


def _add_tiny_model(commands: argparse._SubParsersAction) -> None:
    from mmcritic.models.families import FAMILIES
    from mmcritic.models.tiny import TinyModelSpec
    from mmcritic.train.instruct_base import InstructSpec

    parser = _command(
        commands, "tiny-model", "build a local tiny random-weight Qwen-VL model (no download)"
    )
    parser.add_argument("out", type=Path, help="folder to save the model and processor in")
    parser.add_argument(
        "--family",
        choices=sorted(FAMILIES),
        default=TinyModelSpec.family,
        help="model family: its classes, processor, pixel grid and chat template",
    )
    parser.add_argument(
        "--instruct",
        action="store_true",
        help="then train it on synthetic visual instructions (colour, count, shape, yes/no, "
        "describe) into an instruct base, and report its held-out accuracy (a few minutes; a "
        "folder built with the same settings is reused)",
    )
    parser.add_argument(
        "--instruct-steps",
        type=int,
        default=InstructSpec.steps,
        help="supervised steps of the instruct base",
    )
    for flag, (field_name, meaning) in TINY_MODEL_FLAGS.items():
        parser.add_argument(
            f"--{flag}",
            dest=field_name,
            type=int,
            default=getattr(TinyModelSpec, field_name),
            help=meaning,
        )
    parser.set_defaults(handler=_run_tiny_model)


# flag: (TinyModelSpec field, what it sets)
TINY_MODEL_FLAGS = {
    "hidden": ("hidden_size", "language model width (128: about 1 M parameters)"),
    "layers": ("num_layers", "language model layers"),
    "heads": ("num_heads", "attention heads per layer"),
    "kv-heads": ("num_kv_heads", "key/value heads per layer (grouped-query attention)"),
    "vision-hidden": ("vision_hidden_size", "vision encoder width"),
    "vision-depth": ("vision_depth", "vision encoder blocks"),
    "vision-heads": ("vision_heads", "vision encoder attention heads"),
    "vocab-size": ("vocab_size", "vocabulary size of the generated tokenizer"),
    "seed": ("seed", "seed of the random initial weights"),
}


def _run_tiny_model(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.models.tiny import TinyModelSpec, build_tiny_model

    sizes = {name: getattr(args, name) for name, _ in TINY_MODEL_FLAGS.values()}
    spec = TinyModelSpec(family=args.family, **sizes)
    if args.instruct:
        from mmcritic.train.instruct_base import InstructSpec, build_instruct_base

        instruct = InstructSpec(model=spec, steps=args.instruct_steps, seed=spec.seed)
        return {"model": str(args.out), **build_instruct_base(args.out, instruct)}
    out = build_tiny_model(args.out, spec)
    return {"model": str(out), "spec": spec.__dict__}


def _add_synth(commands: argparse._SubParsersAction) -> None:
    from mmcritic.data.synth import COLORS, RESPONSE_STYLES, TASKS

    parser = _command(
        commands,
        "synth",
        "write a synthetic verifiable critic dataset (truth known by construction)",
    )
    parser.add_argument("--task", required=True, choices=sorted(TASKS), help="what is asked")
    parser.add_argument("--n", type=int, required=True, help="number of items")
    parser.add_argument("--out", type=Path, required=True, help="dataset folder to write")
    parser.add_argument("--seed", type=int, default=0, help="drawing seed")
    parser.add_argument("--ties", type=float, default=0.0, help="fraction of tied items")
    parser.add_argument(
        "--colors", type=int, default=len(COLORS), help="palette size: fewer is an easier task"
    )
    parser.add_argument("--template", help="built-in template name (e.g. pairwise_compact) or file")
    parser.add_argument(
        "--no-think-suffix", action="store_true", help="do not append the think/boxed instruction"
    )
    parser.add_argument(
        "--questions",
        action="store_true",
        help="policy questions with their true answer (verifiable records) instead of critic pairs",
    )
    parser.add_argument(
        "--responses",
        choices=RESPONSE_STYLES,
        default=RESPONSE_STYLES[0],
        help="pair responses: one short sentence, or a policy's reasoned answer to --questions "
        "as a critic is shown it",
    )
    parser.add_argument(
        "--benchmark",
        action="store_true",
        help="write a local critic benchmark (VL-RewardBench rows, OUT/test.jsonl) for `mmcritic "
        "eval --tasks vl_rewardbench --task-data vl_rewardbench=OUT/test.jsonl` instead",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    parser.set_defaults(handler=_run_synth)


def _run_synth(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.data.convert import BuildOptions
    from mmcritic.data.synth import synthesize, write_critic_benchmark

    if args.benchmark:
        return write_critic_benchmark(
            args.task, args.n, args.out, args.seed, args.colors, args.overwrite
        )

    build = BuildOptions(
        template=args.template, think_suffix=not args.no_think_suffix, max_prompt_tokens=None
    )
    kind = "verifiable" if args.questions else "pairwise"
    return synthesize(
        args.task,
        args.n,
        args.out,
        args.seed,
        args.ties,
        args.overwrite,
        build,
        args.colors,
        kind,
        args.responses,
    )


def _add_preprocess(commands: argparse._SubParsersAction) -> None:
    from mmcritic.data.convert import BuildOptions
    from mmcritic.data.formats import FORMATS
    from mmcritic.data.media import DEFAULT_MAX_IMAGE_PIXELS
    from mmcritic.models.families import DEFAULT_FAMILY, FAMILIES

    parser = _command(
        commands, "preprocess", "convert raw preference data into a verifiable dataset"
    )
    parser.add_argument(
        "--format", required=True, choices=sorted(FORMATS), help="the source's record format"
    )
    parser.add_argument("--input", required=True, help="local json/jsonl/parquet, folder or hub id")
    parser.add_argument("--output", type=Path, required=True, help="dataset folder to write")
    parser.add_argument("--config", help="hub dataset config, e.g. pairwise")
    parser.add_argument("--split", default="train", help="hub dataset split")
    parser.add_argument("--template", help="built-in template name or a template file")
    parser.add_argument(
        "--no-think-suffix", action="store_true", help="do not append the think/boxed instruction"
    )
    parser.add_argument("--swap-augment", action="store_true", help="emit both response orders")
    parser.add_argument(
        "--keep-order", action="store_true", help="keep the source's response order"
    )
    parser.add_argument(
        "--ties", choices=("drop", "keep"), default="drop", help="items preferring neither"
    )
    parser.add_argument("--seed", type=int, default=0, help="shuffling and order seed")
    parser.add_argument(
        "--min-pixels", type=int, default=BuildOptions.min_pixels, help="image budget, low end"
    )
    parser.add_argument(
        "--max-pixels", type=int, default=BuildOptions.max_pixels, help="image budget, high end"
    )
    parser.add_argument(
        "--max-prompt-tokens",
        type=int,
        default=BuildOptions.max_prompt_tokens,
        help="drop longer prompts; 0 turns the length filter off",
    )
    parser.add_argument(
        "--max-response-chars", type=int, default=20_000, help="reject longer responses"
    )
    parser.add_argument("--tokenizer", help="count prompt tokens exactly with this tokenizer")
    parser.add_argument(
        "--family",
        choices=sorted(FAMILIES),
        default=DEFAULT_FAMILY,
        help="model family the data is for: visual tokens are counted on its pixel grid",
    )
    parser.add_argument(
        "--columns",
        action="append",
        default=[],
        metavar="ROLE=NAME",
        help="column for a role (question, chosen, rejected, image, video, answer, id, source)",
    )
    parser.add_argument("--source-name", help="source name for rows that carry none")
    parser.add_argument("--media-root", help="folder relative media paths resolve against")
    parser.add_argument(
        "--check-media",
        choices=("verify", "decode"),
        default="verify",
        help="verify: read headers; decode: decode every image and video fully",
    )
    parser.add_argument(
        "--max-image-pixels",
        type=int,
        default=DEFAULT_MAX_IMAGE_PIXELS,
        help="reject images larger than this, read from their header before any decode",
    )
    parser.add_argument(
        "--confine-media",
        action="store_true",
        help="for untrusted data: media only under the media root (no absolute paths, no "
        "'..', no symlinks leading out)",
    )
    parser.add_argument("--limit", type=int, help="convert at most this many rows")
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="processes converting rows (0: one per usable core for 5,000 rows or more); the "
        "output is the same for any number",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true", help="continue an interrupted run")
    mode.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    parser.set_defaults(handler=_run_preprocess)


def _run_preprocess(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.data.convert import BuildOptions, PreprocessOptions, preprocess
    from mmcritic.data.sources import Source
    from mmcritic.models.families import family_named

    build = BuildOptions(
        template=args.template,
        think_suffix=not args.no_think_suffix,
        swap_augment=args.swap_augment,
        shuffle=not args.keep_order,
        ties=args.ties,
        seed=args.seed,
        min_pixels=args.min_pixels,
        max_pixels=args.max_pixels,
        max_prompt_tokens=args.max_prompt_tokens or None,
        max_response_chars=args.max_response_chars,
        tokenizer=args.tokenizer,
        patch_size=family_named(args.family).patch_size,
    )
    options = PreprocessOptions(
        format=args.format,
        build=build,
        columns=_key_values(args.columns, "--columns"),
        source_name=args.source_name,
        media_root=args.media_root,
        check_media=args.check_media,
        limit=args.limit,
        max_image_pixels=args.max_image_pixels,
        confine_media=args.confine_media,
        workers=args.workers,
    )
    source = Source(args.input, args.config, args.split)
    mode = "resume" if args.resume else "overwrite" if args.overwrite else "new"
    return preprocess(source, args.output, options, mode, show_progress=not args.quiet)


def _key_values(pairs: Sequence[str], flag: str) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise SystemExit(f"{flag} takes ROLE=NAME, got {pair!r}")
        result[key] = value
    return result


def _add_train(commands: argparse._SubParsersAction) -> None:
    parser = _command(
        commands,
        "train",
        "train per a recipe (also under `accelerate launch` for many GPUs or nodes)",
    )
    parser.add_argument("recipe", type=Path, help="recipe YAML, e.g. recipes/quickstart_cpu.yaml")
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="dotted overrides, e.g. max_steps=20"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the resolved TRL config as JSON and check paths, without training; exit "
        "status 2 when a path problem is listed",
    )
    parser.set_defaults(handler=_run_train)


def _run_train(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.train.config import load_recipe
    from mmcritic.train.run import dry_run, train

    recipe = load_recipe(args.recipe, args.overrides)
    return dry_run(recipe) if args.dry_run else train(recipe)


def _add_critique(commands: argparse._SubParsersAction) -> None:
    parser = _command(
        commands, "critique", "judge two responses (or score one) for an image or video, print JSON"
    )
    _add_model_and_media_flags(parser)
    parser.add_argument("--response-a", help="first response (pairwise)")
    parser.add_argument("--response-b", help="second response (pairwise)")
    parser.add_argument("--response", help="the one response to score (pointwise)")
    parser.add_argument("--both-orders", action="store_true", help="also judge (B, A)")
    parser.add_argument("--allow-ties", action="store_true", help="let the critic answer tie")
    parser.add_argument(
        "--votes",
        type=_positive_int,
        default=1,
        help="sample this many critiques (per order) and report their majority verdict and "
        "margin (Voting@k); 1: one greedy critique",
    )
    parser.add_argument(
        "--vote-temperature", type=float, default=1.0, help="sampling temperature of --votes"
    )
    parser.set_defaults(handler=_run_critique)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _run_critique(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.inference.run import critique

    return critique(
        _model_options(args),
        _media(args),
        args.question,
        args.response_a,
        args.response_b,
        args.response,
        args.both_orders,
        args.allow_ties,
        args.votes,
        args.vote_temperature,
    )


def _add_best_of_n(commands: argparse._SubParsersAction) -> None:
    from mmcritic.inference.self_critique import STRATEGIES

    parser = _command(
        commands, "best-of-n", "sample N answers and select one by self-critique, print JSON"
    )
    _add_model_and_media_flags(parser)
    parser.add_argument("--n", type=int, required=True, help="number of answers to sample")
    parser.add_argument(
        "--strategy",
        choices=sorted(STRATEGIES),
        default="knockout",
        help="how the critic picks among the answers",
    )
    parser.add_argument("--both-orders", action="store_true", help="judge each pair both ways")
    parser.add_argument("--temperature", type=float, default=1.0, help="for sampling answers")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    parser.add_argument("--raw", action="store_true", help="include every critic output text")
    parser.set_defaults(handler=_run_best_of_n)


def _run_best_of_n(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.inference.run import sample_and_select

    return sample_and_select(
        _model_options(args),
        _media(args),
        args.question,
        args.n,
        args.strategy,
        args.both_orders,
        args.temperature,
        args.seed,
        args.raw,
    )


def _add_refine(commands: argparse._SubParsersAction) -> None:
    from mmcritic.inference.engines.options import add_engine_arguments
    from mmcritic.inference.self_critique import STRATEGIES

    parser = _command(
        commands,
        "refine",
        "answer, critique the answer, revise it given the critique (up to --rounds), print JSON",
    )
    _add_model_and_media_flags(parser)
    parser.add_argument("--rounds", type=_positive_int, default=2, help="critique-revise rounds")
    parser.add_argument("--answer", help="refine this answer instead of the model's own")
    parser.add_argument("--n", type=_positive_int, default=1, help="answers to sample first")
    parser.add_argument(
        "--strategy",
        choices=sorted(STRATEGIES),
        default="knockout",
        help="with --n > 1: how the critic picks among the answers",
    )
    parser.add_argument(
        "--refine-each", action="store_true", help="with --n > 1: refine every answer, then pick"
    )
    parser.add_argument("--both-orders", action="store_true", help="judge each pair both ways")
    parser.add_argument("--temperature", type=float, default=1.0, help="for sampling --n answers")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    parser.add_argument(
        "--critic-model",
        help="another model as the critic (folder or hub id; with --critic-engine openai, the "
        "served name); default: the model critiques itself",
    )
    add_engine_arguments(parser, "critic-")
    parser.set_defaults(handler=_run_refine)


def _run_refine(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.inference.engines.options import engine_options
    from mmcritic.inference.run import RefineOptions, refine_answer

    critic = None
    if args.critic_model or args.critic_base_url:
        critic = engine_options(args, args.critic_model, args.batch_size, prefix="critic-")
    options = RefineOptions(
        rounds=args.rounds,
        n=args.n,
        strategy=args.strategy,
        refine_each=args.refine_each,
        both_orders=args.both_orders,
        temperature=args.temperature,
        seed=args.seed,
        critic=critic,
    )
    return refine_answer(_model_options(args), _media(args), args.question, options, args.answer)


def _add_critique_data(commands: argparse._SubParsersAction) -> None:
    from mmcritic.inference.engines.options import add_engine_arguments

    parser = _command(
        commands,
        "critique-data",
        "answers of a policy to verifiable questions, as records for critique training",
    )
    parser.add_argument("--model", required=True, help="the policy: model folder or hub id")
    parser.add_argument("--data", type=Path, required=True, help="verifiable dataset folder")
    parser.add_argument("--out", type=Path, required=True, help="critique dataset folder")
    parser.add_argument("--samples", type=_positive_int, default=4, help="answers a question")
    parser.add_argument("--temperature", type=float, default=1.0, help="0: one greedy answer")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    parser.add_argument("--max-new-tokens", type=int, default=512, help="per answer")
    parser.add_argument("--batch-size", type=int, default=8, help="prompts per generate call")
    parser.add_argument("--min-pixels", type=int, help="lower pixel bound per image")
    parser.add_argument("--max-pixels", type=int, help="upper pixel bound per image")
    add_device_arguments(parser)
    add_engine_arguments(parser)
    parser.set_defaults(handler=_run_critique_data)


def _run_critique_data(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.data.media import MediaBudget, PixelBudget
    from mmcritic.inference import Policy
    from mmcritic.inference.questions import critique_data

    if args.temperature == 0 and args.samples > 1:
        raise ValueError("--samples > 1 at --temperature 0 would repeat the greedy answer")
    bounds = {"min_pixels": args.min_pixels, "max_pixels": args.max_pixels}
    image = PixelBudget(**{key: value for key, value in bounds.items() if value is not None})
    engine = _model_options(args).open()
    policy = Policy.on(engine, max_new_tokens=args.max_new_tokens)
    budget = MediaBudget(image=image)
    return critique_data(
        policy, args.data, args.out, args.samples, args.temperature, args.seed, budget
    )


def _add_model_and_media_flags(parser: argparse.ArgumentParser) -> None:
    from mmcritic.inference.engines.options import add_engine_arguments

    parser.add_argument(
        "--model", help="model folder or hub id; with --engine openai, the served model name"
    )
    media = parser.add_mutually_exclusive_group(required=True)
    media.add_argument("--image", help="image file")
    media.add_argument("--video", help="video file")
    parser.add_argument("--question", required=True, help="the question about the media")
    parser.add_argument("--fps", type=float, help="video frames sampled a second (default 2)")
    parser.add_argument("--max-frames", type=int, help="cap on sampled video frames")
    parser.add_argument("--min-pixels", type=int, help="lower pixel bound per image or frame")
    parser.add_argument("--max-pixels", type=int, help="upper pixel bound per image or frame")
    parser.add_argument("--max-new-tokens", type=int, default=512, help="per answer")
    parser.add_argument("--batch-size", type=int, default=8, help="prompts per generate call")
    add_device_arguments(parser)
    add_engine_arguments(parser)


def _model_options(args: argparse.Namespace) -> Any:
    from mmcritic.inference.engines.options import engine_options
    from mmcritic.inference.run import ModelOptions

    engine = engine_options(args, args.model, args.batch_size)
    return ModelOptions(engine, max_new_tokens=args.max_new_tokens)


def _media(args: argparse.Namespace) -> Any:
    from mmcritic.inference.run import media_from_flags

    return media_from_flags(
        args.image, args.video, args.fps, args.max_frames, args.min_pixels, args.max_pixels
    )


def _add_demo(commands: argparse._SubParsersAction) -> None:
    parser = _command(commands, "demo", "start the Gradio critique demo in a browser")
    parser.add_argument(
        "--model", required=True, help="model folder or hub id; with --engine openai, its name"
    )
    parser.add_argument("--port", type=int, help="default: 7860 or the next free port")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--share", action="store_true", help="also create a public Gradio link")
    add_device_arguments(parser, dtype=False)
    parser.add_argument("--max-new-tokens", type=int, default=512, help="per answer")
    from mmcritic.inference.engines.options import add_engine_arguments

    add_engine_arguments(parser)
    parser.set_defaults(handler=_run_demo)


def _run_demo(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.demo import create_demo, launch
    from mmcritic.inference.engines.options import engine_options

    engine = engine_options(args, args.model, 1)
    demo = create_demo(args.model, args.device, args.max_new_tokens, engine=engine)
    return {"url": launch(demo, args.port, args.host, args.share)}


def _add_eval(commands: argparse._SubParsersAction) -> None:
    from mmcritic.cli.eval import add_eval_arguments

    parser = _command(commands, "eval", "run benchmark tasks, write results and per-sample logs")
    add_eval_arguments(parser)
    parser.set_defaults(handler=_run_eval)


def _run_eval(args: argparse.Namespace) -> dict[str, Any]:
    from mmcritic.cli.eval import run_eval_command

    return run_eval_command(args, show_progress=not args.quiet)


@contextmanager
def _output_to_stderr() -> Iterator[None]:
    """While a command runs, whatever writes to standard output (DeepSpeed's and the Trainer's
    prints, a library's C code on file descriptor 1) goes to standard error, so the result JSON
    printed afterwards is all that standard output holds (`mmcritic train ... | jq` works)."""
    sys.stdout.flush()
    saved = _duplicate_stdout()
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _duplicate_stdout() -> int | None:
    """File descriptor 1, kept, with 2 put in its place; None where standard output is not
    that descriptor (a test's capture, an embedding program)."""
    try:
        if sys.stdout.fileno() != 1:
            return None
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    saved = os.dup(1)
    os.dup2(2, 1)
    return saved


def _lost_requests(err: Exception) -> bool:
    """Whether the engine lost work (exit status 3). Looked up where it is defined only once
    loaded: commands that generate nothing never import the engines (nor torch)."""
    engines = sys.modules.get("mmcritic.inference.engines.base")
    return engines is not None and isinstance(err, engines.LostRequests)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mmcritic")
    except PackageNotFoundError:
        return "unknown (not installed)"


SUBCOMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "tiny-model": _add_tiny_model,
    "synth": _add_synth,
    "preprocess": _add_preprocess,
    "train": _add_train,
    "critique": _add_critique,
    "best-of-n": _add_best_of_n,
    "refine": _add_refine,
    "critique-data": _add_critique_data,
    "eval": _add_eval,
    "demo": _add_demo,
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; with `only`, just that sub-command's flags, so a run does not import
    what the other sub-commands need (model code, torch) just to list their choices."""
    parser = argparse.ArgumentParser(
        prog="mmcritic", description="Train and use multimodal critics with verifiable rewards."
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars, warnings only")
    parser.add_argument("--version", action="version", version=f"mmcritic {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, add in SUBCOMMANDS.items():
        if only in (None, name):
            add(commands)
    return parser


def _named_subcommand(argv: Sequence[str]) -> str | None:
    """The sub-command `argv` runs, when its first positional word names one."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_named_subcommand(argv))
    args, extra = parser.parse_known_args(argv)
    if extra and getattr(args, "overrides", None) is not None and all("=" in e for e in extra):
        args.overrides += extra  # overrides given after --dry-run
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    status = run_reported(lambda: args.handler(args), args.quiet, lambda: _how_to_resume(args))
    if status == 0:
        leave_process_group()
    return status


def leave_process_group() -> None:
    """Destroys the process group `accelerate launch` made, while the interpreter is whole.

    Left to interpreter shutdown, Gloo's worker threads can still hold tensors whose release
    needs the GIL, and the process aborts ("terminate called without an active exception")
    after a run that finished: the launcher then kills the other ranks and reports a failure.
    Only a command that finished calls it: under NCCL, destroying waits on the other ranks,
    and a rank leaving on an error while they wait in a collective would hang there instead
    of exiting (the launcher then reports its error and stops the others).
    """
    distributed = sys.modules.get("torch.distributed")
    if distributed is not None and distributed.is_available() and distributed.is_initialized():
        distributed.destroy_process_group()


def run_reported(
    run: Callable[[], Any], quiet: bool = False, after_interrupt: Callable[[], str] | None = None
) -> int:
    """Runs a command the way every `mmcritic` command and `preprocessing/` script runs: logs on
    stderr, the result alone on stdout as JSON, and an exit status: 0 done; 2 a bad input,
    named in one line (also a result that lists `problems`); 3 an engine lost requests; 130
    interrupted, with one line saying what to run next (`after_interrupt`)."""
    logging.basicConfig(
        level=logging.WARNING if quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    log = logging.getLogger("mmcritic")
    try:
        with _output_to_stderr(), _progress_bars_hidden(quiet):
            result = run()
    except (ValueError, FileExistsError, FileNotFoundError, ConnectionError) as err:
        log.error("%s", err)
        return 2
    except KeyboardInterrupt:
        _close_progress_bars()
        log.error("interrupted; %s", after_interrupt() if after_interrupt else "nothing was kept")
        return 130
    except Exception as err:
        if not _lost_requests(err):
            raise
        log.error("%s", err)
        return 3
    json.dump(result, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
    if isinstance(result, dict) and result.get("problems"):
        log.error("%d problem(s) listed", len(result["problems"]))
        return 2
    return 0


def run_script(dataset: Any) -> NoReturn:
    """A `preprocessing/` script's command line (`mmcritic.data.public.script_main`), run and
    reported as `mmcritic preprocess` is."""
    from mmcritic.data.public import script_main

    sys.exit(
        run_reported(
            lambda: script_main(dataset),
            after_interrupt=lambda: PREPROCESS_RESUME,
        )
    )


# what an interrupted conversion (`mmcritic preprocess`, a `preprocessing/` script) says
PREPROCESS_RESUME = "run the same command with --resume to go on from the rows already converted"


@contextmanager
def _progress_bars_hidden(hidden: bool) -> Iterator[None]:
    """`--quiet`: no bar from tqdm, the hub or datasets while the command runs, in this process
    and in those it starts (DeepSpeed ranks, servers); the environment is restored after."""
    names = ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
    before = {name: os.environ.get(name) for name in names}
    if hidden:
        os.environ.update(dict.fromkeys(names, "1"))
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _close_progress_bars() -> None:
    """Closes the bars an interrupted command left open, so none is drawn again after the last
    line (tqdm redraws an open bar when it is collected at exit)."""
    tqdm = sys.modules.get("tqdm")
    for bar in list(getattr(getattr(tqdm, "tqdm", None), "_instances", [])):
        bar.close()


def _how_to_resume(args: argparse.Namespace) -> str:
    """What to run after Ctrl-C: for a training run, the checkpoint it will continue from."""
    if args.command == "eval":
        return "run the same command with --resume to go on from the samples already written"
    if args.command == "preprocess":
        return PREPROCESS_RESUME
    if args.command != "train" or getattr(args, "dry_run", False):
        return "nothing was kept"
    from mmcritic.train.config import load_recipe
    from mmcritic.train.run import newest_checkpoint

    output_dir = Path(load_recipe(args.recipe, args.overrides).output_dir)
    try:
        checkpoint = newest_checkpoint(output_dir)
    except ValueError:
        checkpoint = None
    if checkpoint is None:
        return f"no checkpoint was written in {output_dir}; the same command starts afresh"
    return f"run the same command to resume from {checkpoint}"
