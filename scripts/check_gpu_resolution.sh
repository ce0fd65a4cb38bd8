#!/usr/bin/env bash
# Checks that pip can resolve the GPU stack, mmcritic[all,vllm] (vLLM with the torch it pins,
# transformers, TRL, deepspeed), without installing it: a dry run in a throwaway virtual
# environment. Fails when the pins in pyproject.toml no longer resolve together, and prints what
# `bash scripts/install.sh --gpu` would install.
#
#   bash scripts/check_gpu_resolution.sh
#
# pip reads every candidate's metadata: from the index where it serves that apart from the wheel
# (PEP 658), else from the wheel itself. On an index that did not, it took 80-90 s and 1.7 GB of
# wheels (vLLM 315 MB, triton 286 MB), torch coming from a local wheel. pip is upgraded first:
# the pip Python 3.11's venv ships (23.2) gave up on mmcritic[vllm] (ResolutionImpossible).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install --quiet --upgrade pip
echo "[mmcritic] resolving mmcritic[all,vllm] (dry run)"
"${pip[@]}" install --dry-run --quiet --report "$work/report.json" "$here[all,vllm]"
"$work/venv/bin/python" - "$work/report.json" <<'PY'
import json
import sys

with open(sys.argv[1]) as report:
    resolved = {
        item["metadata"]["name"].lower(): item["metadata"]["version"]
        for item in json.load(report)["install"]
    }
names = ("torch", "torchvision", "vllm", "transformers", "trl", "deepspeed")
print("[mmcritic] GPU stack resolves:", " | ".join(f"{n} {resolved[n]}" for n in names))
PY
