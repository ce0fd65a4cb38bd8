"""Critic verdicts read the way each benchmark's own scorer reads them.

Under the `lmms-eval` and `official` protocols a verdict is first read by the benchmark's rule
(source `official`; its folder's `verdicts.py`). Where lmms-eval then asks an LLM to read the
judgement (VL-RewardBench's GPT parser), `parse_judgement` stands in for it and its source
(`box` or `phrase`) is kept, so the counts in results.json show how many verdicts needed it;
VL-RewardBench's own release reads the rule alone. Where a scorer would draw a random label, the
verdict is unreadable instead: counted, and scored wrong.
"""

from __future__ import annotations

from collections.abc import Callable

from mmcritic.eval.registry import CRITIC_BENCHMARKS, benchmark
from mmcritic.rewards.parsing import Judgement, parse_judgement


def verdict_reader(task: str, protocol_name: str) -> Callable[[str], Judgement]:
    """How a critic's text becomes a verdict: under r1 a box, else the verdict stated in words
    (`parse_judgement`); under lmms-eval and official the benchmark's own rule first (its
    folder's `READERS`), and never a random pick."""
    folder = benchmark(task) if task in CRITIC_BENCHMARKS else None
    readers = folder.READERS if folder is not None else {}
    return readers.get(protocol_name, parse_judgement)
