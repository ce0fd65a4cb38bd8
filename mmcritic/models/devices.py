"""The devices and dtypes a model can be loaded with: one list for the command line, the recipe
schema and the loader, kept free of heavy imports so `mmcritic --help` stays fast."""

from __future__ import annotations

DEVICE_CHOICES = ("auto", "cpu", "cuda")
DTYPE_CHOICES = ("auto", "bfloat16", "float16", "float32")
