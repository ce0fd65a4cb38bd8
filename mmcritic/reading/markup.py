"""The output-format stage: markup a reader looks through before it reads any words."""

from __future__ import annotations

import re

# LaTeX macros that only style their argument (`\text{B}` reads as B)
STYLE_MACROS = (
    "text", "textbf", "textit", "texttt", "textrm", "textsf",
    "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "operatorname", "emph",
)  # fmt: skip


def macro_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """A macro of `names` around an argument without braces, the argument as group 1."""
    return re.compile(r"\\(?:" + "|".join(names) + r")\s*\{([^{}]*)\}")


STYLE_MACRO = macro_pattern(STYLE_MACROS)
