"""GRPO step profile: mmcritic's trainer against a plain trl.GRPOTrainer, same config, same run.

Prints mean seconds per optimizer step in generation, reward, log-prob (old/reference policy and
batch preparation) and update, tokens/s, and the ratio ours/plain for each. By default on the CPU
with the tiny model and the synthetic colour task; pass a recipe and overrides to measure
another setting (e.g. on a GPU with a real-size model).

    python benchmarks/train_throughput.py [--recipe recipes/quickstart_cpu.yaml] [KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
from pathlib import Path

from mmcritic.train.config import load_recipe
from mmcritic_dev.profiling import measure_step_phases
from mmcritic_dev.quickstart import QuickstartData, prepare_inputs

RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", type=Path, default=RECIPES / "quickstart_cpu.yaml")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        inputs = prepare_inputs(work, QuickstartData(n_train=128, n_heldout=1))
        results = {}
        for name, plain in (("plain_trl", True), ("mmcritic", False)):
            recipe = load_recipe(
                args.recipe,
                [
                    f"output_dir={work / name}",
                    f"model.name_or_path={inputs['model']}",
                    f"data.train={inputs['train']}",
                    "data.eval=null",
                    f"max_steps={args.steps}",
                    "save_steps=100000",
                    "report_to=[]",
                    *args.overrides,
                ],
            )
            results[name] = measure_step_phases(recipe, plain)
    ratio = {
        key: results["mmcritic"][key] / results["plain_trl"][key]
        for key in results["mmcritic"]
        if results["plain_trl"][key]
    }
    print(json.dumps({**results, "ratio_mmcritic_over_plain": ratio}, indent=2))


if __name__ == "__main__":
    main()
