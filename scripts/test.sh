#!/usr/bin/env bash
# Installs mmcritic with its test tools (and, as root with apt, Chromium for the demo's browser
# test) and runs the fast test suite (pytest -m "not slow", over pytest-xdist's workers).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m slow` for the slow tests.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
bash "$here/scripts/install.sh"
# The demo's browser test drives the system's Chromium through chromedriver and is skipped
# without them. As root with apt (as in CI) they are installed when missing; otherwise the rest
# runs as usual.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "[mmcritic] installing chromium and chromium-driver for the demo's browser test"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      chromium chromium-driver >/dev/null
  else
    echo "[mmcritic] no chromium or chromedriver (apt-get install chromium chromium-driver):" \
      "the demo's browser test will be skipped"
  fi
fi
cd "$here"
"$venv/bin/ruff" check .
"$venv/bin/ruff" format --check .
# the fast suite runs over one worker per core, at most four (each builds its own tiny models);
# given arguments run as given, in one process: the slow tests start processes of their own
if [ "$#" -eq 0 ]; then
  set -- -m "not slow" -n auto --maxprocesses 4
fi
exec "$venv/bin/python" -m pytest "$@"
