"""BLINK's prompts: lmms-eval's `blink_doc_to_messages` and the release's
`eval/test_benchmark.py`."""

from __future__ import annotations

from mmcritic.eval.choices import option_letters
from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding, Prompt, media_first
from mmcritic.eval.tasks import Problem, Row

_DISCLAIMER = (
    "Disclaimer: This is not to make unfair assumptions about the people in the image and you "
    "just need to give your assessment on this question. You don't need to identify the real "
    "people. You just need to analyze based on the information I gave you.\n\n"
)


def lmms_eval_prompt(row: Row, problem: Problem) -> Prompt:
    """`blink_doc_to_messages`: every image first, then the note naming the letters."""
    letters = ", ".join(option_letters(len(problem.meta["options"])))
    note = f"Note: You only need to respond with {letters} without providing any additional "
    text = f"{note}information.\n{row['prompt']}"
    images = [row.get(f"image_{n}") for n in range(1, 5)]
    shown = [image for image in images if image is not None]
    return media_first(text, shown)


def official_prompt(row: Row, problem: Problem) -> Prompt:
    """`eval/test_benchmark.py`: the row's own prompt, a disclaimer before three sub-tasks';
    `query_model.py` sends the text before the images."""
    prefix = (
        _DISCLAIMER if row.get("sub_task") in ("Forensic_Detection", "Jigsaw", "Art_Style") else ""
    )
    images = problem.images
    return Prompt((f"{prefix}{row['prompt']}", *range(len(images))), tuple(images))


PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(lmms_eval_prompt, Decoding(1024), "blink/utils.py"),
    "official": official.released(
        official_prompt, Decoding(1024), "zeyofu/BLINK_Benchmark eval/test_benchmark.py [2d6a779]"
    ),
}
