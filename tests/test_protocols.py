"""Evaluation protocols: every prompt pinned, lmms-eval's by lmms-eval's own task code.

`fixtures/protocols/rows.json` holds rows in each benchmark's own columns;
`fixtures/protocols/lmms_eval_snapshots.json` is what lmms-eval 0.7.3's task functions render
for them (see `render_lmms_eval.py` in the same folder), and the r1 and official snapshots are
mmcritic's own (`MMCRITIC_UPDATE_SNAPSHOTS=1 pytest tests/test_protocols.py` accepts a change).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from qwen_vl_utils.vision_process import smart_resize

from mmcritic.eval.protocols import (
    PROTOCOL_NAMES,
    PROTOCOLS,
    Prompt,
    critic_prompt,
    policy_prompt,
    task_prompt,
    verdict_reader,
)
from mmcritic.eval.registry import get_task
from mmcritic.eval.tasks import CriticTask, Row
from mmcritic.eval.tasks.multimodal_rewardbench.verdicts import bracket_verdict
from mmcritic.eval.tasks.vl_rewardbench.verdicts import vl_rewardbench_verdict
from mmcritic.inference.engines import Request
from mmcritic.inference.media import Media
from tests.media_factory import write_mp4, write_png

FIXTURES = Path(__file__).parent / "fixtures" / "protocols"
SNAPSHOTS = Path(__file__).parent / "snapshots" / "protocols"
ROWS = json.loads((FIXTURES / "rows.json").read_text(encoding="utf-8"))
LMMS_EVAL = json.loads((FIXTURES / "lmms_eval_snapshots.json").read_text(encoding="utf-8"))
LMMS_EVAL_QWEN3_VL = json.loads(
    (FIXTURES / "lmms_eval_qwen3_vl_snapshots.json").read_text(encoding="utf-8")
)
CASES = [(task, index) for task, rows in ROWS.items() for index in range(len(rows))]


def _prompt(task_name: str, index: int, protocol: str, family: str | None = None) -> Prompt:
    task = get_task(task_name)
    row = Row(task_name, index, ROWS[task_name][index], task.fields)
    if isinstance(task, CriticTask):
        return critic_prompt(task_name, protocol, task.pair(row), swapped=False)
    return policy_prompt(task_name, protocol, row, task.problem(row), family=family)


def _parts(prompt: Prompt) -> list[dict[str, str]]:
    """The prompt in the snapshot's terms: text items, and each item shown by its file name."""
    media = [*prompt.images, *prompt.videos]
    return [
        {"text": part} if isinstance(part, str) else {"media": Path(str(media[part])).name}
        for part in prompt.parts
    ]


def _snapshot(prompt: Prompt) -> dict[str, Any]:
    decoding = prompt.decoding
    return {
        "parts": _parts(prompt),
        "max_new_tokens": decoding.max_new_tokens,
        "sampled": decoding.temperature > 0,
        "temperature": decoding.temperature,
    }


@pytest.mark.parametrize(("task", "index"), [c for c in CASES if c[0] in LMMS_EVAL["tasks"]])
def test_lmms_eval_protocol_gives_exactly_what_lmms_eval_renders(task, index):
    assert _snapshot(_prompt(task, index, "lmms-eval")) == LMMS_EVAL["tasks"][task][index]


@pytest.mark.parametrize(("task", "index"), [c for c in CASES if c[0] in LMMS_EVAL["tasks"]])
def test_lmms_eval_protocol_asks_a_qwen3_vl_model_what_lmms_eval_qwen3_vl_renders(task, index):
    """`--model qwen3_vl` (the same version): the YAMLs' `qwen3_vl` entries change MMMU, MMStar
    and Video-MME; every other task asks as for Qwen2.5-VL, which the snapshots confirm."""
    expected = LMMS_EVAL_QWEN3_VL["tasks"][task][index]
    assert _snapshot(_prompt(task, index, "lmms-eval", "qwen3-vl")) == expected


def test_qwen3_vl_prompts_differ_where_lmms_eval_has_qwen3_vl_entries():
    differing = {
        task
        for task, rendered in LMMS_EVAL_QWEN3_VL["tasks"].items()
        if rendered != LMMS_EVAL["tasks"][task]
    }
    assert differing == {"mmmu_val", "mmstar", "videomme"}


def test_every_task_has_an_lmms_eval_snapshot_or_says_it_has_no_lmms_eval_prompt():
    missing = sorted(set(ROWS) - set(LMMS_EVAL["tasks"]))
    assert missing == ["mm_rlhf_rewardbench"]
    spec = task_prompt("mm_rlhf_rewardbench", "critic", "lmms-eval")
    assert spec.source.startswith("mmcritic r1")


@pytest.mark.parametrize("protocol", ["r1", "official"])
def test_r1_and_official_prompts_match_their_snapshots(protocol):
    rendered = {
        task: [_snapshot(_prompt(task, index, protocol)) | {"source": _source(task, protocol)}]
        for task, index in CASES
        if index == 0
    } | {f"{task}#{index}": [_snapshot(_prompt(task, index, protocol))] for task, index in CASES}
    path = SNAPSHOTS / f"{protocol}.json"
    if os.environ.get("MMCRITIC_UPDATE_SNAPSHOTS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rendered, indent=1, ensure_ascii=False) + "\n", "utf-8")
    assert rendered == json.loads(path.read_text(encoding="utf-8"))


def _source(task: str, protocol: str) -> str:
    return task_prompt(task, get_task(task).kind, protocol).source


def test_r1_asks_with_the_think_instruction_and_lmms_eval_prompts_never_do():
    for task, index in CASES:
        r1, lmms = _prompt(task, index, "r1"), _prompt(task, index, "lmms-eval")
        assert "\\boxed{}." in r1.text
        assert "internal monologue" not in lmms.text or task == "mm_rlhf_rewardbench"
        assert r1.decoding.max_new_tokens == 2048 and r1.decoding.temperature == 0


def test_an_mmmu_prompt_places_each_picture_where_the_question_refers_to_it(
    tiny_model_and_processor,
):
    tiny_processor = tiny_model_and_processor[1]
    prompt = _prompt("mmmu_val", 0, "lmms-eval")
    pictures = [
        Media.image(Image.new("RGB", (64, 64), colour)) for colour in ("red", "green", "blue")
    ]
    request = Request(prompt.text, pictures, prompt.layout)

    text = tiny_processor.apply_chat_template(
        request.message(), tokenize=False, add_generation_prompt=True
    )

    vision = "<|vision_start|><|image_pad|><|vision_end|>"
    assert (
        f"<|im_start|>user\n{vision}Which shape is shown? Compare with{vision}.\nA. circle\nB."
        f"{vision}C. square\n\nAnswer with the option's letter" in text
    )
    assert request.loaded("image") == [picture.load() for picture in pictures]


def test_a_layout_must_place_every_media_item_once(tmp_path):
    picture = Media.image(write_png(tmp_path / "a.png"))
    with pytest.raises(ValueError, match="place each of the 2 media items once"):
        Request("Q", [picture, picture], ("Q", 0, 0))


@pytest.mark.parametrize("size", [(37, 1900), (640, 480), (3000, 2001), (90, 90), (1280, 719)])
def test_lmms_eval_images_get_the_grid_lmms_eval_gives_them(size):
    """lmms-eval's chat path rounds with qwen-vl-utils' defaults, then its processor fits the
    budget; one resize into the budget lands elsewhere for about one image in five."""
    budget = PROTOCOLS["lmms-eval"].media.image
    width, height = size
    rounded = smart_resize(height, width, 28, 4 * 28 * 28, 16384 * 28 * 28)
    expected = smart_resize(*rounded, 28, budget.min_pixels, budget.max_pixels)
    image = Media.image(
        Image.new("RGB", size, "white"), budget.min_pixels, budget.max_pixels, budget.resize_twice
    ).load()
    assert (image.height, image.width) == expected


def test_lmms_eval_videos_are_32_frames_or_every_frame_when_fewer(tmp_path):
    budget = PROTOCOLS["lmms-eval"].media.video
    long_clip = Media.video_in(write_mp4(tmp_path / "long.mp4", frames=80), budget).load()
    short_clip = Media.video_in(write_mp4(tmp_path / "short.mp4", frames=9), budget).load()
    assert long_clip.frames.shape[0] == 32
    assert short_clip.frames.shape[0] == 8  # even, as Qwen2.5-VL pairs frames


def test_the_protocols_differ_in_budget_and_say_what_they_compare_with():
    r1, lmms = PROTOCOLS["r1"], PROTOCOLS["lmms-eval"]
    assert (lmms.media.image.min_pixels, lmms.media.image.max_pixels) == (200_704, 1_605_632)
    assert (r1.media.image.min_pixels, r1.media.image.max_pixels) == (262_144, 1_003_520)
    assert set(PROTOCOLS) == set(PROTOCOL_NAMES)
    assert all(protocol.comparable_with for protocol in PROTOCOLS.values())


@pytest.mark.parametrize(
    ("text", "verdict", "source"),
    [
        ("1. Accuracy: ...\n\n**Overall Judgment:** Answer 2 is better.", "2", "official"),
        ("Therefore, Answer 1 is slightly better than Answer 2.", "1", "official"),
        (
            "Overall Judgment:\nAnswer 1 is the better one... no: Answer 2 is better",
            "2",
            "official",
        ),
        ("Overall Judgment: Answer 3 is better.", None, None),
        ("I prefer the first answer.\n\n\\boxed{1}", "1", "box"),
        ("Both answers are fine.", None, None),
    ],
)
def test_vl_rewardbench_verdicts_are_read_by_its_own_rule_first(text, verdict, source):
    judgement = vl_rewardbench_verdict(text)
    assert (judgement.choice, judgement.source) == (verdict, source)


def test_vl_rewardbench_under_official_reads_its_rule_alone():
    read = verdict_reader("vl_rewardbench", "official")
    assert read("Overall Judgment: Answer 2 is better.").choice == "2"
    assert (read("I prefer Answer 1.\n\\boxed{1}").choice, read("x").source) == (None, None)
    assert verdict_reader("vl_rewardbench", "lmms-eval")("\\boxed{1}").choice == "1"


def test_multimodal_rewardbench_reads_brackets_in_its_order_and_never_draws_a_label():
    assert bracket_verdict("Assistant B is weaker. [[A]]").choice == "1"
    assert bracket_verdict("[[B]] ... on reflection [[A]]").choice == "1"  # its scorer's order
    assert bracket_verdict("Final verdict: [[B]]").choice == "2"
    unreadable = bracket_verdict("Assistant B is better.")
    assert (unreadable.choice, unreadable.source) == (None, None)
    assert verdict_reader("multimodal_rewardbench", "r1")("Assistant B is better.").choice == "2"


def test_the_scoring_page_shows_the_protocol_tables_the_code_implies():
    from mmcritic.eval.protocols.table import media_table, protocol_table

    page = (Path(__file__).parents[1] / "docs" / "scoring.md").read_text(encoding="utf-8")
    assert media_table() in page, "regenerate with python -m mmcritic.eval.protocols.table"
    assert protocol_table() in page, "regenerate with python -m mmcritic.eval.protocols.table"
