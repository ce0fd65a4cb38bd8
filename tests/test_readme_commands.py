"""Every command in the README's `bash` blocks either runs here as written, in the order the
README gives it, or is named below with why it cannot (the hub, a GPU, a server, a long job).

The commands run in a fresh folder holding the repository's recipes and scripts, after what the
README says comes first: the quickstart's outputs (its tiny models and held-out pictures, built
small here). Training commands are cut to a few steps (`SHORTENED`); nothing else is changed.
A new README command that is neither run nor listed fails the walk.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent

# (a command's start, why it is not run here)
NOT_RUN_HERE = (
    ("bash scripts/quickstart.sh", "the main job: 15 minutes (benchmarks/quickstart_learning.py)"),
    ("bash scripts/quickstart_video.sh", "installs and trains for minutes; same steps as below"),
    ("bash scripts/test.sh", "the test suite itself"),
    ("bash scripts/install.sh --gpu", "a GPU machine"),
    ("mmcritic train recipes/llava_critic_r1", "the 7B model and data (exit 2 lists them)"),
    ("accelerate launch", "GPUs"),
    ("for gpu in", "GPUs and vLLM"),
    ("urls=", "the vLLM servers above"),
    ("transformers serve", "a server in the background"),
    ("mmcritic demo", "a web server (tests/test_demo*.py drive it)"),
    ("python benchmarks/gpu_check.py", "a GPU (its CPU form runs in tests/test_gpu_check.py)"),
    ("python benchmarks/run_", "the benchmarks' files from the hub"),
    ("python benchmarks/self_critique_scaling.py", "a benchmark's files from the hub"),
    ("python benchmarks/video_decode.py", "a timing benchmark: minutes"),
    (".venv/bin/python benchmarks/preprocess_throughput.py", "a timing benchmark: minutes"),
    (".venv/bin/pytest", "the test suite itself"),
    ("python preprocessing/", "a hub dataset"),
)
# what marks a command as needing the hub, servers or a placeholder it explains
NEEDS = (
    (re.compile(r"Qwen/|lmms-lab/|openbmb/"), "the hub"),
    (re.compile(r"--engine openai"), "servers"),
    (re.compile(r"--model (?:M|replay:preds\.jsonl) "), "a model or file the README names M"),
)
# (a command's start, what is added to it): training cut to one step, and answers to 16 tokens,
# since the stand-in models, untrained, write until the token limit (minutes at the defaults);
# the quickstart's critic stops after its verdict
SHORTENED = (
    ("mmcritic train recipes/quickstart_cpu.yaml", "max_steps=1 save_steps=1 logging_steps=1"),
    ("mmcritic tiny-model runs/base --instruct", "--instruct-steps 2"),
    ("mmcritic critique --model", "--max-new-tokens 16"),
    ("mmcritic best-of-n --model", "--max-new-tokens 16"),
    ("mmcritic eval --model", "--max-new-tokens 16"),
    ("mmcritic critique-data", "--samples 1 --max-new-tokens 8"),
    ("mmcritic train recipes/critique_", "max_steps=1 save_steps=1 logging_steps=1"),
)


def readme_commands() -> list[str]:
    """The commands of the README's bash blocks, in order: continued lines joined, comments cut."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), re.DOTALL)
    commands = []
    for block in blocks:
        text = re.sub(r"\\\n\s*", " ", block)
        for line in text.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and not command.startswith("#") and command not in ("done",):
                commands.append(command)
    return commands


def why_not_run(command: str) -> str | None:
    for start, reason in NOT_RUN_HERE:
        if command.startswith(start):
            return reason
    for pattern, reason in NEEDS:
        if pattern.search(command):
            return reason
    return None


def runnable() -> list[str]:
    return [command for command in readme_commands() if why_not_run(command) is None]


def test_every_readme_command_is_run_here_or_says_why_not() -> None:
    commands = readme_commands()
    assert len(commands) > 20
    run = runnable()
    assert any(c.startswith("mmcritic eval --model runs/quickstart/grpo/final") for c in run)
    assert any(c.startswith("mmcritic critique") for c in run)


def _first_steps(folder: Path) -> None:
    """What the README says comes first: the quickstart's outputs, small."""
    for name in ("recipes", "scripts", "benchmarks", "preprocessing"):
        (folder / name).symlink_to(ROOT / name)
    quickstart = folder / "runs" / "quickstart"
    mmcritic = [str(BIN / "mmcritic"), "--quiet"]
    for model in ("instruct_base", "sft/final", "grpo/final"):
        subprocess.run([*mmcritic, "tiny-model", str(quickstart / model)], check=True)
    for name, seed in (("train", 0), ("heldout", 1)):
        out = str(quickstart / "data" / name)
        synth = ["synth", "--task", "color", "--n", "8", "--out", out, "--seed", str(seed)]
        subprocess.run([*mmcritic, *synth], check=True)


@pytest.mark.slow  # about 2.5 minutes: each command starts its own interpreter; CI runs it
def test_the_readme_commands_that_need_no_hub_gpu_or_server_run_as_written(tmp_path) -> None:
    _first_steps(tmp_path)
    lines = ["set -euo pipefail"]
    for command in runnable():
        extra = next((more for start, more in SHORTENED if command.startswith(start)), "")
        lines += [f"echo '>>> {command}' >&2", f"{command} {extra} >/dev/null"]
    environment = os.environ | {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", "\n".join(lines)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    ran = re.findall(r">>> (.*)", done.stderr)
    assert done.returncode == 0, f"failed at: {ran[-1] if ran else '?'}\n{done.stderr[-3000:]}"
    assert len(ran) == len(runnable())
    assert (tmp_path / "runs" / "eval_color" / "results.json").is_file()
