"""The task-by-protocol table docs/scoring.md shows, written from the builders themselves so the
page cannot drift from the code (`tests/test_protocols.py` checks it). Print it with
`python -m mmcritic.eval.protocols.table`."""

from __future__ import annotations

from mmcritic.eval.protocols import PROTOCOL_NAMES, PROTOCOLS, task_prompt, verdict_reader
from mmcritic.eval.protocols.prompt import Decoding
from mmcritic.eval.registry import get_task, task_names
from mmcritic.eval.tasks.multimodal_rewardbench.verdicts import bracket_verdict
from mmcritic.eval.tasks.vl_rewardbench.verdicts import (
    vl_rewardbench_rule_only,
    vl_rewardbench_verdict,
)
from mmcritic.rewards.parsing import parse_judgement

READINGS = {
    parse_judgement: "box, else the verdict stated in words",
    vl_rewardbench_verdict: "`Overall Judgment: Answer X is better` rule, else box or stated "
    "verdict (for lmms-eval's GPT parser)",
    bracket_verdict: "`[[A]]`, then `[[B]]`; neither is unreadable (no random label)",
    vl_rewardbench_rule_only: "`Overall Judgment: Answer X is better` rule only",
}


def decoding_text(decoding: Decoding) -> str:
    if decoding.temperature > 0:
        heat = f"sampled T={decoding.temperature}"
        heat += f", top_p={decoding.top_p}" if decoding.top_p != 1.0 else ""
    else:
        heat = "greedy"
    return f"{heat}, {decoding.max_new_tokens} tokens"


def _reading(task: str, protocol: str) -> str:
    if get_task(task).kind == "policy":
        return "the task's scorer"
    reader = verdict_reader(task, protocol)
    return READINGS[reader]


def protocol_table() -> str:
    """One row per task and protocol: prompt source, decoding, how answers are read."""
    lines = [
        "| task | protocol | prompt | decoding | answers read by |",
        "|---|---|---|---|---|",
    ]
    for task in task_names():
        kind = get_task(task).kind
        for protocol in PROTOCOL_NAMES:
            spec = task_prompt(task, kind, protocol)
            lines.append(
                f"| {task} | {protocol} | {spec.source} | {decoding_text(spec.decoding)} | "
                f"{_reading(task, protocol)} |"
            )
    return "\n".join(lines)


def media_table() -> str:
    """One row per protocol: the media budget and the tables its numbers compare with."""
    lines = ["| protocol | images (pixels) | videos | comparable with |", "|---|---|---|---|"]
    for name in PROTOCOL_NAMES:
        media = PROTOCOLS[name].media
        twice = ", after qwen-vl-utils' default rounding" if media.image.resize_twice else ""
        video = media.video
        frames = (
            f"{video.max_frames} frames"
            if video.min_frames == video.max_frames
            else f"{video.fps} fps, {video.min_frames} to {video.max_frames} frames"
        )
        lines.append(
            f"| {name} | {media.image.min_pixels:,} to {media.image.max_pixels:,}{twice} | "
            f"{frames} (fewer when the video has fewer), {video.min_pixels:,} to "
            f"{video.max_pixels:,} pixels a frame | {PROTOCOLS[name].comparable_with} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(media_table(), protocol_table(), sep="\n\n")
