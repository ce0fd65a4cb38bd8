#!/usr/bin/env bash
# The main job on a fresh machine: install mmcritic (torch included) into .venv, build the tiny
# local Qwen2.5-VL instruct base, make the synthetic colour critic task, run a short format warm
# start and then critic GRPO, all on the CPU. Prints held-out preference accuracy (right in both
# orders, against chance) before and after GRPO and writes runs/quickstart/learning_curve.png.
# Extra arguments are GRPO recipe overrides.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
bash "$here/scripts/install.sh"
cd "$here"
"$venv/bin/python" benchmarks/quickstart_learning.py --work runs/quickstart "$@"
