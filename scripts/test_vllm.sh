#!/usr/bin/env bash
# Runs the tests that need vLLM's own multimodal processors (tests/test_vllm_inputs.py) in a
# separate environment, ./.venv-vllm by default: vLLM pins its own torch, which must not replace
# the one in the main environment.
#
#   bash scripts/test_vllm.sh                      # install when needed, then run the tests
#   VLLM_VENV=/path/to/env bash scripts/test_vllm.sh -k video
#
# vLLM 0.30 pins torch 2.13.0, and the only torchvision for it (0.28.0) is built against the
# registry's standard (CUDA) torch: beside a CPU-only torch 2.13.0 it fails to import. So the
# standard builds of both are installed first, by exact version string (`===`, which a local
# build such as 2.13.0+cpu does not match); they run on the CPU. vLLM's engine needs a GPU, but
# its processors, which the tests apply, run on the CPU.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VLLM_VENV:-$here/.venv-vllm}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  echo "[mmcritic] creating virtual environment $venv"
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)

if ! "$venv/bin/python" -c "import vllm, mmcritic, torchvision.ops; torchvision.ops.nms" \
    >/dev/null 2>&1; then
  echo "[mmcritic] installing torch 2.13.0, torchvision 0.28.0 and mmcritic[vllm,video,dev]"
  "${pip[@]}" install --quiet "torch===2.13.0" "torchvision===0.28.0"
  "${pip[@]}" install --quiet -e "$here[vllm,video,dev]"
fi
"$venv/bin/python" -c "import torch, transformers, vllm; print('[mmcritic] vllm', vllm.__version__, '| torch', torch.__version__, '| transformers', transformers.__version__)"
cd "$here"
# torch 2.13 warns about its own `torch.jit.script_method` when vLLM (imported by TRL) loads it
exec "$venv/bin/python" -m pytest tests/test_vllm_inputs.py \
  -W "ignore:\`torch.jit.script_method\` is deprecated:DeprecationWarning" "$@"
