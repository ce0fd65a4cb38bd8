"""VL-RewardBench's verdict reading: its `parse_pred_ans` rule, with lmms-eval's GPT parser
behind it (`parse_judgement` stands in) and the release's rule alone."""

from __future__ import annotations

import re

from mmcritic.rewards.parsing import Judgement, parse_judgement

# lmms-eval vl_rewardbench/utils.py `parse_pred_ans`, applied after removing newlines and `*`:
# `(?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*`
# `(?:the\s*)?(?:slightly\s*)?better` (case aside). Its greedy `.*` takes the last "Answer N is
# better" after the first opener; that is read here in two linear passes, where the rule as
# written backtracks from each opener to the end of the text (a response of many "Therefore"
# and no verdict took minutes).
_JUDGMENT_OPENER = re.compile(r"Overall Judgment|Therefore", re.IGNORECASE)
_ANSWER_BETTER = re.compile(
    r"Answer\s*(\d+)\s*is\s*(?:the\s*)?(?:slightly\s*)?better", re.IGNORECASE
)


def overall_judgment(text: str) -> str | None:
    """The index VL-RewardBench's `parse_pred_ans` rule takes from a text (newlines and `*`
    already removed), as written in it ("01" stays "01"); None where the rule does not match."""
    opener = _JUDGMENT_OPENER.search(text)
    if opener is None:
        return None
    indices = [found.group(1) for found in _ANSWER_BETTER.finditer(text, opener.end())]
    return indices[-1] if indices else None


def vl_rewardbench_verdict(text: str, fallback: bool = True) -> Judgement:
    """'Overall Judgment: Answer X is better' as VL-RewardBench's scorer matches it; an index
    other than 1 or 2 is no verdict; with `fallback`, an answer the rule misses is read as its
    box or stated verdict (standing in for lmms-eval's GPT parser), else it has none."""
    written = overall_judgment(text.strip().replace("\n", "").replace("*", ""))
    if written is None:
        return parse_judgement(text) if fallback else Judgement(None, None, "unrecognised")
    index = written.lstrip("0")
    if index in ("1", "2"):
        return Judgement(index, "official", "ok")
    return Judgement(None, None, "unrecognised")


def vl_rewardbench_rule_only(text: str) -> Judgement:
    """The release's own reading: the rule alone, no LLM parser behind it."""
    return vl_rewardbench_verdict(text, fallback=False)


READERS = {"lmms-eval": vl_rewardbench_verdict, "official": vl_rewardbench_rule_only}
