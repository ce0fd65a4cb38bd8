"""Public preference datasets by name: where each lives and how its columns map, so a thin
script in `preprocessing/` names a dataset and this module runs the same conversion as
`mmcritic preprocess`."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmcritic.data.convert import BuildOptions, PreprocessOptions, preprocess
from mmcritic.data.sources import Source


@dataclass(frozen=True)
class PublicDataset:
    """A dataset on the hub: its id, config and split (and the data file, for a repository that
    holds several), the source format its rows are in, which column plays which role
    (`--columns`), and the source name its records carry."""

    name: str
    hub_id: str
    format: str
    split: str = "train"
    config: str | None = None
    data_files: str | None = None
    columns: Mapping[str, str] = field(default_factory=dict)
    schema: str = ""


def preprocess_public(
    dataset: PublicDataset,
    output: Path,
    source: str | None = None,
    limit: int | None = None,
    media_root: str | None = None,
    mode: str = "new",
    build: BuildOptions | None = None,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Converts `dataset` (or a local copy in its schema, `source`) into a verifiable dataset
    folder; the returned stats are `mmcritic preprocess`'s."""
    options = PreprocessOptions(
        format=dataset.format,
        build=build or BuildOptions(),
        columns=dict(dataset.columns),
        source_name=dataset.name,
        limit=limit,
        media_root=media_root,
    )
    if source is None:
        rows = Source(dataset.hub_id, dataset.config, dataset.split, dataset.data_files)
    else:
        rows = Source(source, split=dataset.split)
    return preprocess(rows, output, options, mode, show_progress=show_progress)


def script_main(dataset: PublicDataset, argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The command line every `preprocessing/` script shares; its conversion stats
    (`mmcritic.cli.run_script` prints them and reports errors as `mmcritic preprocess` does)."""
    parser = argparse.ArgumentParser(description=f"Preprocess {dataset.name} ({dataset.hub_id}).")
    parser.add_argument("--output", type=Path, required=True, help="dataset folder to write")
    parser.add_argument(
        "--input", help=f"a local copy in the same schema (default: {dataset.hub_id})"
    )
    parser.add_argument("--limit", type=int, help="convert at most this many rows")
    parser.add_argument(
        "--media-root",
        help="folder that relative media paths resolve against (default: the input's folder)",
    )
    parser.add_argument("--tokenizer", help="count prompt tokens exactly with this tokenizer")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true", help="continue an interrupted run")
    mode.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    args = parser.parse_args(argv)
    chosen = "resume" if args.resume else "overwrite" if args.overwrite else "new"
    stats = preprocess_public(
        dataset,
        args.output,
        source=args.input,
        limit=args.limit,
        media_root=args.media_root,
        mode=chosen,
        build=BuildOptions(tokenizer=args.tokenizer),
    )
    return stats
