#!/usr/bin/env bash
# Installs mmcritic and everything it needs into a virtual environment (default: ./.venv).
#
#   bash scripts/install.sh            # torch + mmcritic[all]
#   VENV=/path/to/env bash scripts/install.sh
#
# torch and torchvision come first, and only when the environment lacks a working pair: a GPU
# user's own CUDA build is left untouched. On a CPU-only machine the registry's standard builds
# are installed; they run on the CPU, and unlike a CPU-only torch they come with a matching
# torchvision, which transformers' Qwen2-VL video processor and qwen-vl-utils need.
# deepspeed builds from source and imports torch in its setup, so it is installed after torch,
# without build isolation and without pre-compiled ops (they are JIT-built when first used).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  echo "[mmcritic] creating virtual environment $venv"
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)

if "$venv/bin/python" -c "import torch, torchvision, torchvision.ops; torchvision.ops.nms" \
    >/dev/null 2>&1; then
  echo "[mmcritic] keeping the installed torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')"
else
  echo "[mmcritic] installing torch and torchvision"
  "${pip[@]}" install --quiet torch torchvision
fi

if ! "$venv/bin/python" -c "import deepspeed" >/dev/null 2>&1; then
  echo "[mmcritic] installing deepspeed (no pre-built ops)"
  "${pip[@]}" install --quiet ninja
  DS_BUILD_OPS=0 "${pip[@]}" install --quiet --no-build-isolation "deepspeed>=0.19.8,<0.20"
fi

echo "[mmcritic] installing mmcritic[all]"
"${pip[@]}" install --quiet -e "$here[all]"
"$venv/bin/python" -c "import mmcritic, torch, torchvision, transformers, trl; print('[mmcritic] ready: torch', torch.__version__, '| transformers', transformers.__version__, '| trl', trl.__version__)"
