#!/usr/bin/env bash
# Installs mmcritic with its test tools and runs the fast test suite (pytest -m "not slow").
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m slow` for the slow tests.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
bash "$here/scripts/install.sh"
cd "$here"
"$venv/bin/ruff" check .
"$venv/bin/ruff" format --check .
if [ "$#" -eq 0 ]; then
  set -- -m "not slow"
fi
exec "$venv/bin/python" -m pytest "$@"
