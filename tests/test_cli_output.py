"""Standard output holds the command's result JSON alone, whatever the libraries print while it
runs, so `mmcritic train ... | jq` works; their output goes to standard error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.test_first_hour import train_args


def _mmcritic(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mmcritic.cli", "--quiet", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_train_prints_its_result_alone_on_stdout(tiny_model_dir, color_data, tmp_path) -> None:
    args = train_args(tiny_model_dir, color_data, tmp_path / "run", "max_steps=1", "save_steps=1")
    done = _mmcritic(*args)

    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert Path(result["final_model"]).is_dir()
    assert "accelerator" in done.stderr  # what the libraries printed went here


def test_a_write_to_file_descriptor_1_during_a_command_goes_to_stderr() -> None:
    code = (
        "import os, sys\n"
        "from mmcritic import cli\n"
        "def noisy(args):\n"
        "    print('from python')\n"
        "    os.write(1, b'from C\\n')\n"
        "    return {'done': True}\n"
        "def add(commands):\n"
        "    cli._command(commands, 'noisy', 'prints').set_defaults(handler=noisy)\n"
        "cli.SUBCOMMANDS['noisy'] = add\n"
        "sys.exit(cli.main(['--quiet', 'noisy']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"done": True}
    assert "from python" in done.stderr and "from C" in done.stderr
