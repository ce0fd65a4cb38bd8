#!/usr/bin/env bash
# Installs mmcritic and everything it needs into a virtual environment (default: ./.venv).
#
#   bash scripts/install.sh            # torch + mmcritic[all]
#   bash scripts/install.sh --gpu      # the GPU stack: vLLM, the torch it pins, mmcritic[all,vllm]
#   VENV=/path/to/env bash scripts/install.sh
#
# torch and torchvision come first, and only when the environment lacks a working pair: a GPU
# user's own CUDA build is left untouched. On a machine without an NVIDIA driver they come from
# PyTorch's CPU index (MMCRITIC_TORCH_CPU_INDEX), a matching pair without CUDA libraries, when it
# can be reached; otherwise from the registry's standard builds, which run on the CPU too (a CPU
# torch from a registry without its torchvision cannot serve: transformers' Qwen2-VL video
# processor and qwen-vl-utils need torchvision).
# deepspeed builds from source and imports torch in its setup, so it is installed after torch,
# without build isolation and without pre-compiled ops (they are JIT-built when first used).
#
# --gpu: vLLM pins torch exactly, so the install runs in the order that leaves a matching
# torch / torchvision / vLLM: mmcritic with its vllm extra first, in one resolve (vLLM's torch
# pin wins and replaces any other torch), then the torchvision built for that torch, then
# deepspeed, then mmcritic[all,vllm]; it ends by checking that the three import and agree. The
# vLLM builds it picks need an NVIDIA driver recent enough for their CUDA (see
# docs/gpu_install.md).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
python="${PYTHON:-python3}"
case "${1:-}" in
  "") gpu=0 ;;
  --gpu) gpu=1 ;;
  *) echo "usage: bash scripts/install.sh [--gpu]" >&2; exit 2 ;;
esac

# an install is skipped when this environment was made by the same install script and project
# file and still imports (re-running the quickstart does not spend a minute in pip)
stamp="$venv/.mmcritic-install"
wanted="$(cat "$here/pyproject.toml" "$here/scripts/install.sh" | sha256sum | cut -d' ' -f1) gpu=$gpu"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] \
    && "$venv/bin/python" -c "import mmcritic, torch, torchvision, transformers, trl" >/dev/null 2>&1; then
  echo "[mmcritic] $venv is up to date (delete $stamp to reinstall)"
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "[mmcritic] creating virtual environment $venv"
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
cpu_index="${MMCRITIC_TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}"

install_deepspeed() {
  if ! "$venv/bin/python" -c "import deepspeed" >/dev/null 2>&1; then
    echo "[mmcritic] installing deepspeed (no pre-built ops)"
    "${pip[@]}" install --quiet ninja
    DS_BUILD_OPS=0 "${pip[@]}" install --quiet --no-build-isolation "deepspeed>=0.19.8,<0.20"
  fi
}

if [ "$gpu" -eq 1 ]; then
  # the pip Python 3.11's venv ships (23.2) gives up on this resolve (ResolutionImpossible);
  # a current pip finds it
  "${pip[@]}" install --quiet --upgrade pip
  echo "[mmcritic] installing vLLM and the torch it pins (mmcritic[vllm])"
  "${pip[@]}" install --quiet -e "$here[vllm]"
  torch_version="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))')"
  echo "[mmcritic] installing the torchvision built for torch $torch_version"
  "${pip[@]}" install --quiet torchvision "torch==$torch_version"
  install_deepspeed
  echo "[mmcritic] installing mmcritic[all,vllm]"
  "${pip[@]}" install --quiet -e "$here[all,vllm]"
  "$venv/bin/python" - <<'PY'
import importlib.metadata as metadata
import shutil
import sys

import torch
import torchvision
import vllm
from packaging.requirements import Requirement

installed = {name: metadata.version(name) for name in ("torch", "torchvision", "vllm")}
print("[mmcritic] torch", torch.__version__, "(CUDA", torch.version.cuda, end=") ")
print("| torchvision", torchvision.__version__, "| vllm", vllm.__version__)
for package in ("torchvision", "vllm"):
    for requirement in map(Requirement, metadata.requires(package) or []):
        version = installed.get(requirement.name)
        if version and not requirement.marker and version not in requirement.specifier:
            sys.exit(f"[mmcritic] {package} {installed[package]} needs {requirement}, "
                     f"but {requirement.name} {version} is installed")
if shutil.which("nvidia-smi") is None:
    print("[mmcritic] no NVIDIA driver on this machine: installed, not run; vLLM needs a GPU "
          f"and a driver for CUDA {torch.version.cuda} (see docs/gpu_install.md)")
elif not torch.cuda.is_available():
    sys.exit(f"[mmcritic] torch {torch.__version__} is built for CUDA {torch.version.cuda} and "
             "sees no GPU: the NVIDIA driver is likely too old (see docs/gpu_install.md)")
else:
    print("[mmcritic] ready on", torch.cuda.get_device_name(0))
PY
  echo "$wanted" > "$stamp"
  exit 0
fi

if "$venv/bin/python" -c "import torch, torchvision, torchvision.ops; torchvision.ops.nms" \
    >/dev/null 2>&1; then
  echo "[mmcritic] keeping the installed torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')"
elif ! command -v nvidia-smi >/dev/null && "$venv/bin/python" -c \
    "import urllib.request; urllib.request.urlopen('$cpu_index/torch/', timeout=5)" >/dev/null 2>&1; then
  # no NVIDIA driver: PyTorch's CPU builds (about 1 GB) instead of the CUDA ones (about 5.5 GB)
  echo "[mmcritic] no NVIDIA driver: installing the CPU builds of torch and torchvision"
  "${pip[@]}" install --quiet --index-url "$cpu_index" torch torchvision
else
  # a GPU machine, or PyTorch's CPU index out of reach (a registry mirror): the standard builds,
  # which carry CUDA libraries (about 5.5 GB) and run on the CPU as well
  echo "[mmcritic] installing torch and torchvision"
  "${pip[@]}" install --quiet torch torchvision
fi

install_deepspeed

echo "[mmcritic] installing mmcritic[all]"
"${pip[@]}" install --quiet -e "$here[all]"
"$venv/bin/python" -c "import mmcritic, torch, torchvision, transformers, trl; print('[mmcritic] ready: torch', torch.__version__, '| transformers', transformers.__version__, '| trl', trl.__version__)"
echo "$wanted" > "$stamp"
