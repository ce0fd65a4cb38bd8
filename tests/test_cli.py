"""The command line: version and choices checked before anything runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mmcritic.cli import main


def test_cli_reports_its_version_and_refuses_unknown_dtypes(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("mmcritic 0.")
    with pytest.raises(SystemExit) as refused:
        main(["eval", "--model", "m", "--dtype", "bf16"])
    assert refused.value.code == 2
    assert "invalid choice: 'bf16'" in capsys.readouterr().err


def test_every_command_teaches_itself_through_help(capsys):
    import argparse

    from mmcritic.cli import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, command in commands.choices.items():
        assert command.description, f"{name} has no description"
        silent = [a.dest for a in command._actions if not a.help and a.dest != "help"]
        assert not silent, f"{name}: options without help {silent}"
    with pytest.raises(SystemExit):
        parser.parse_args(["tiny-model", "--help"])
    shown = capsys.readouterr().out
    assert "(default: 64)" in shown and "language model width" in shown


def test_a_finished_command_destroys_the_process_group_and_a_failed_one_leaves_it(tmp_path):
    # under `accelerate launch` the group is left to shutdown otherwise, where Gloo can abort a
    # finished rank; a failed rank leaves it alone, as destroying waits on peers under NCCL
    import torch.distributed as dist

    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        assert main(["train", str(tmp_path / "missing.yaml"), "--dry-run"]) == 2
        assert dist.is_initialized()
        synth = ["synth", "--task", "color", "--n", "2", "--out", str(tmp_path / "pairs")]
        assert main(synth) == 0
        assert not dist.is_initialized()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def test_a_launched_rank_leaves_with_its_command_s_status_and_output(tmp_path):
    # a rank of `accelerate launch` skips the interpreter's teardown: what it printed must
    # still reach the launcher, and its status must be the command's
    done = subprocess.run(
        [sys.executable, "-m", "mmcritic.cli", "train", str(tmp_path / "missing.yaml")],
        env={**os.environ, "WORLD_SIZE": "2"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "missing.yaml" in done.stdout + done.stderr
