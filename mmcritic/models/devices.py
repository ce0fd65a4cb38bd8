"""The devices and dtypes a model can be loaded with: one list for the command line, the recipe
schema and the loader, kept free of heavy imports so `mmcritic --help` stays fast."""

from __future__ import annotations

import argparse

DEVICE_CHOICES = ("auto", "cpu", "cuda")
DTYPE_CHOICES = ("auto", "bfloat16", "float16", "float32")


def add_device_arguments(parser: argparse.ArgumentParser, dtype: bool = True) -> None:
    """`--device` (and `--dtype`), the same flags on every command that loads a model."""
    parser.add_argument(
        "--device", choices=DEVICE_CHOICES, default="auto", help="auto: cuda when available"
    )
    if dtype:
        parser.add_argument(
            "--dtype",
            choices=DTYPE_CHOICES,
            default="auto",
            help="auto: bfloat16 on a GPU that has it, float32 on the CPU",
        )
