#!/usr/bin/env bash
# The quickstart on video: the tiny model, the synthetic motion task (a dot crossing a 64x64 mp4:
# which way does it move?), a format-only SFT warm start, then GRPO
# (recipes/quickstart_video_cpu.yaml), all on the CPU, in runs/quickstart_video. Each step that
# is already done is skipped, so running it again after an interruption goes on where it stopped.
# Extra arguments are GRPO recipe overrides (e.g. max_steps=20).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
bash "$here/scripts/install.sh"
cd "$here"
mmcritic=("$venv/bin/mmcritic")
work=runs/quickstart_video
# the GRPO overrides are read before anything is trained: a dry run prints its config (with the
# model still missing as a problem) unless the recipe itself cannot be read
check=("${mmcritic[@]}" --quiet train recipes/quickstart_video_cpu.yaml --dry-run "$@")
if [ -z "$("${check[@]}" 2>/dev/null || true)" ]; then
  "${check[@]}" >/dev/null
  exit 2
fi
[ -f "$work/tiny/config.json" ] || "${mmcritic[@]}" tiny-model "$work/tiny"
[ -f "$work/data/train/data.jsonl" ] ||
  "${mmcritic[@]}" synth --task motion --n 128 --out "$work/data/train" --seed 0 --overwrite
[ -f "$work/data/heldout/data.jsonl" ] ||
  "${mmcritic[@]}" synth --task motion --n 32 --out "$work/data/heldout" --seed 1 --overwrite
"${mmcritic[@]}" train recipes/quickstart_video_cpu.yaml stage=sft sft.target=format \
  max_steps=40 "output_dir=$work/sft" optim.learning_rate=5e-3
"${mmcritic[@]}" train recipes/quickstart_video_cpu.yaml "model.name_or_path=$work/sft/final" "$@"
