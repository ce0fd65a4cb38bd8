"""Model loading, and a tiny offline Qwen2.5-VL for tests and smoke runs."""

from mmcritic.models.tiny import TinyModelSpec, build_tiny_model

__all__ = ["TinyModelSpec", "build_tiny_model"]
