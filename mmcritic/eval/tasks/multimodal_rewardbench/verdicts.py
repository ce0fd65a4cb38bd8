"""Multimodal RewardBench's verdict reading, under lmms-eval and the release alike."""

from __future__ import annotations

from mmcritic.rewards.parsing import Judgement


def bracket_verdict(text: str) -> Judgement:
    """Multimodal RewardBench's `[[A]]` / `[[B]]`, checked in that order as its scorer does
    (a text holding both reads A); neither is no verdict, where the scorer draws a label."""
    for label, index in (("[[A]]", "1"), ("[[B]]", "2")):
        if label in text:
            return Judgement(index, "official", "ok")
    return Judgement(None, None, "no_box")


READERS = {"lmms-eval": bracket_verdict, "official": bracket_verdict}
