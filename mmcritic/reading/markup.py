"""The output-format stage: markup a reader looks through before it reads any words.

Model families that write their reasoning between tags of their own register them in
`THINK_TAGS`; readers see every family's tags as `<think>` / `</think>` (`think_tags`). Families
that box their final answer in tags of their own instead of `\\boxed{}` register them in
`BOX_TAGS`; readers take those boxes from `family_boxes`.
"""

from __future__ import annotations

import re

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
# family -> (opening tag, closing tag), for families whose tags are not `<think>` / `</think>`
THINK_TAGS = {"kimi-vl": ("◁think▷", "◁/think▷")}
# family -> (opening tag, closing tag) of the box it states its final answer in
BOX_TAGS = {"glm-4.xv": ("<|begin_of_box|>", "<|end_of_box|>")}
_FAMILY_BOX = re.compile(
    "|".join(
        rf"{re.escape(opening)}(.*?){re.escape(closing)}" for opening, closing in BOX_TAGS.values()
    ),
    re.DOTALL,
)

# LaTeX macros that only style their argument (`\text{B}` reads as B)
STYLE_MACROS = (
    "text", "textbf", "textit", "texttt", "textrm", "textsf",
    "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "operatorname", "emph",
)  # fmt: skip


def macro_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """A macro of `names` around an argument without braces, the argument as group 1."""
    return re.compile(r"\\(?:" + "|".join(names) + r")\s*\{([^{}]*)\}")


STYLE_MACRO = macro_pattern(STYLE_MACROS)


# The slash is optional and followed by its own whitespace, so the two whitespace runs can never
# trade characters; an ambiguous `<\s*/?\s*` would backtrack quadratically on `<` + spaces.
_THINK_TAG = re.compile(r"<\s*(?:(/)\s*)?think\s*>")


def normalize_tags(text: str) -> str:
    """Closes up `< think >`, `</ think>` and `< /think >` to `<think>` / `</think>`.

    Models drift into spaced tags, and the spec says whitespace around `<`, `>` and `/` does not
    count. Only think tags are touched, so `a < b > c` in a response keeps its spacing."""
    return _THINK_TAG.sub(lambda m: f"<{m.group(1) or ''}think>", text)


def think_tags(text: str) -> str:
    """Every registered family's think tags as `<think>` / `</think>` (for reading an answer
    only: the training reward's format asks for `<think>` itself)."""
    for opening, closing in THINK_TAGS.values():
        text = text.replace(opening, THINK_OPEN).replace(closing, THINK_CLOSE)
    return normalize_tags(text)


def family_boxes(text: str) -> list[str]:
    """What every registered family's answer boxes hold, in the order they stand
    (GLM-4.xV: `<|begin_of_box|>A<|end_of_box|>` holds "A")."""
    return [
        next(group for group in box.groups() if group is not None)
        for box in _FAMILY_BOX.finditer(text)
    ]
