"""Screenshots of each demo tab for the README, taken in headless Chromium driven by Selenium.

Starts the demo on a free local port, loads one example per tab, presses its button and saves
the page once the result is shown. Without --model it uses a freshly built tiny random-weight
model, so the critic's text is gibberish and no verdict is readable: the pictures show the
layout and the messages, not a trained critic. Chromium and chromedriver come from the system
and are not installed by scripts/install.sh (scripts/test.sh installs them when run as root):

    apt-get install chromium chromium-driver
    python scripts/demo_screenshots.py --out docs/images
    python scripts/demo_screenshots.py --model runs/critic --max-new-tokens 512
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path

from mmcritic.models import build_tiny_model
from mmcritic_dev.demo_screenshots import screenshot_demo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="model folder (default: a new tiny random model)")
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    with tempfile.TemporaryDirectory(prefix="mmcritic-tiny-") as scratch:
        model = args.model or str(build_tiny_model(Path(scratch) / "tiny"))
        for capture in screenshot_demo(model, args.out, args.max_new_tokens):
            print(capture.path)


if __name__ == "__main__":
    main()
