"""Self-critique cost: comparisons, sequential rounds and wall time for knockout, round robin and
pointwise Best-of-N at N = 8, 16, 32, and the speed-up of batched knockout rounds over judging one
pair per generate call.

On the tiny random model (built on the spot, no download) the figures show the scaling and the
batching gain, not a real model's speed; pass --model for a real checkpoint.

    python benchmarks/self_critique_cost.py
    python benchmarks/self_critique_cost.py --model Qwen/Qwen2.5-VL-7B-Instruct --device cuda
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from PIL import Image

from mmcritic.inference import Media, load_model_for_inference
from mmcritic.models import build_tiny_model
from mmcritic_dev.self_critique_cost import cost_table, self_critique_cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="model folder or hub id (default: a fresh tiny model)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-pixels", type=int, default=64 * 28 * 28)
    parser.add_argument("--repeats", type=int, default=3, help="report the fastest of these")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model_path = args.model or str(build_tiny_model(Path(work) / "tiny"))
        model, processor = load_model_for_inference(model_path, device=args.device)
        image = Image.new("RGB", (224, 168), (200, 30, 30))
        media = Media.image(image, min_pixels=16 * 28 * 28, max_pixels=args.max_pixels)
        rows = self_critique_cost(
            model,
            processor,
            media,
            "What colour is the picture?",
            sizes=args.sizes,
            max_new_tokens=args.max_new_tokens,
            batch_size=args.batch_size,
            repeats=args.repeats,
        )
    print(cost_table(rows))
    print(json.dumps([row.to_dict() for row in rows]))


if __name__ == "__main__":
    main()
