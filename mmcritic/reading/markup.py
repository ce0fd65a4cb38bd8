"""The output-format stage: the markup a reader looks through before it reads any words.

Families register think tags (`THINK_TAGS`, read as `<think>`) and answer boxes (`BOX_TAGS`).
The answer follows the think block (`answer_region`); HTML, JSON, LaTeX, emphasis, Unicode forms
and emoji are read through here. Output is read within bounds (`readable`, `MAX_LATEX_DEPTH`):
nothing here raises on a response or takes more than linear time.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable

from mmcritic.reading.language import words
from mmcritic.text import without_lone_surrogates

# kana, CJK ideographs and Hangul, as a character class's body: the scripts no space delimits
CJK = "\u3040-\u9fff\uac00-\ud7af"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
# family -> (opening tag, closing tag), for families whose tags are not `<think>` / `</think>`
THINK_TAGS = {"kimi-vl": ("◁think▷", "◁/think▷")}
# family -> (opening tag, closing tag) of the box it states its final answer in
BOX_TAGS = {"glm-4.xv": ("<|begin_of_box|>", "<|end_of_box|>")}
_FAMILY_BOX = re.compile(
    "|".join(rf"{re.escape(open_)}(.*?){re.escape(close)}" for open_, close in BOX_TAGS.values()),
    re.DOTALL,
)

# what ends a sentence a loop repeats
_SENTENCE_ENDS = (". ", "! ", "? ", "。", "\n")

# LaTeX macros that only style their argument (`\text{B}` reads as B)
STYLE_MACROS = (
    "text", "textbf", "textit", "texttt", "textrm", "textsf",
    "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "operatorname", "emph",
)  # fmt: skip


def macro_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """A macro of `names` around an argument without braces, the argument as group 1."""
    return re.compile(r"\\(?:" + "|".join(names) + r")\s*\{([^{}]*)\}")


STYLE_MACRO = macro_pattern(STYLE_MACROS)
# the slash owns the whitespace after it, so the two runs never trade characters: an ambiguous
# `<\s*/?\s*` would backtrack quadratically on `<` + spaces
_THINK_TAG = re.compile(r"<\s*(?:(/)\s*)?think\s*>")


def normalize_tags(text: str) -> str:
    """Spaced think tags (`< /think >`) closed up: the spec says whitespace around `<`, `>` and
    `/` does not count. Other text (`a < b > c`) keeps its spaces."""
    return _THINK_TAG.sub(lambda m: f"<{m.group(1) or ''}think>", text)


def think_tags(text: str) -> str:
    """Every registered family's think tags as `<think>` / `</think>` (for reading an answer
    only: the training reward's format asks for `<think>` itself)."""
    for opening, closing in THINK_TAGS.values():
        text = text.replace(opening, THINK_OPEN).replace(closing, THINK_CLOSE)
    return normalize_tags(text)


def family_boxes(text: str) -> list[str]:
    """What every registered family's answer boxes hold, in order (`<|begin_of_box|>A...` is A)."""
    return [box[box.lastindex] for box in _FAMILY_BOX.finditer(text)]  # the one tag pair met


BOX_OPEN = "\\boxed{"
# A single tokenizer pass over every brace; `\{` and `\}` are literal braces in LaTeX, not groups.
_BOX_TOKENS = re.compile(r"\\boxed\s*\{|\\[{}]|[{}]")


def boxed_contents(text: str) -> list[str]:
    """The contents of every top-level `\\boxed{...}`, in order; braces nest, `\\{` is literal.
    An unclosed box yields nothing, though the boxes inside it are found; a box inside a closed
    one is not listed again, so the output is no longer than the input. Linear time."""
    depth = 0
    open_boxes: list[tuple[int, int]] = []  # (content start, brace depth)
    closed: list[tuple[int, int]] = []  # (content start, content end), none inside another
    for token in _BOX_TOKENS.finditer(text):
        kind = token.group()
        if kind.startswith("\\boxed"):
            depth += 1
            open_boxes.append((token.end(), depth))
        elif kind == "{":
            depth += 1
        elif kind == "}" and depth:
            if open_boxes and open_boxes[-1][1] == depth:
                begin = open_boxes.pop()[0]
                # braces nest, so the boxes closed since this one opened lie inside it
                while closed and closed[-1][0] > begin:
                    closed.pop()
                closed.append((begin, token.start()))
            depth -= 1
    return [text[begin:end] for begin, end in closed]


# HTML a model writes for emphasis or layout: bold is markdown bold, the rest is dropped
_HTML_BOLD = re.compile(r"</?(?:b|strong)>", re.IGNORECASE)
_HTML_LAYOUT = re.compile(r"</?(?:i|em|u|mark|code|span|p|div|br|answer)\b[^<>]*>", re.IGNORECASE)

# Bounds on reading model output: 20,000 characters hold every answer a model writes within its
# token limit, and a runaway one's conclusion; no answer nests LaTeX 16 deep.
MAX_ANSWER_CHARS = 20_000
MAX_SPACE_RUN = 32
MAX_LATEX_DEPTH = 16
_SPACE_RUN = re.compile(rf"\s{{{MAX_SPACE_RUN + 1},}}")
_FIRST_SPACE = re.compile(r"\s")
_SUPERSCRIPT = re.compile(r"(?<=[\w)\]}])[\u207a\u207b]?[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+")
# a number's base written as a subscript after its digits: "101101₂" (not "C₆H₁₂O₆")
_BASE = re.compile(r"(?<=\d)[₀-₉]+(?![\w₀-₉])")

_MINUS_SIGNS = str.maketrans({"\u2212": "-", "\u2012": "-", "\ufe63": "-"})
# emphasis, code and math marks, which no answer is written in: "**$2$**" states 2
MARKUP = str.maketrans("", "", "*$`")

# markdown bold: "**248** participants"
BOLD = re.compile(r"\*\*([^*\n]{1,80})\*\*")
# `$x$` around math; a `$` followed by a digit opens no math and closes none: it is currency
_MATH_DOLLARS = re.compile(r"\$([^$]*?)\$(?!\d)")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_LATEX_ROOT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_LATEX_SYMBOLS = {
    "\\pi": "π",
    "\\times": "×",
    "\\cdot": "·",
    "\\infty": "∞",
    "\\approx": "≈",
    "\\,": "",
}
_JSON_ANSWER_KEYS = frozenset(words("answer_keys"))


def without_symbols(text: str) -> str:
    """The text without the emoji and check marks a model ends on ("Yes. ✅", "B 👍")."""
    return "".join(c for c in text if unicodedata.category(c) != "So" and c != "\ufe0f").strip()


def answer_region(text: str) -> str:
    """The answer text: after the think block (all of it when there is none), `readable`, a
    loop's cut-off repeat dropped (`without_looped_tail`)."""
    _, close, region = think_tags(text).rpartition(THINK_CLOSE)
    return without_looped_tail(readable(region if close else region.replace(THINK_OPEN, "")))


def without_looped_tail(text: str) -> str:
    """A loop cut off mid-repeat ends on its last whole repeat: "X is 5. X is 5. X is" says X
    is 5, where the unfinished "X is" alone would read as an answer cut off before its value.
    A loop is a run of sentences said at least twice over, whose opening the tail repeats."""
    cut = max((at + len(end) for end in _SENTENCE_ENDS if (at := text.rfind(end)) >= 0), default=0)
    tail = text[cut:].strip()
    if not cut or not tail or tail[-1] in ".!?。":
        return text
    start = text.rfind(tail, 0, cut)  # the last repeat's opening
    repeat = text[start:cut] if start >= 0 else ""
    opens = repeat.startswith(tail) and text[:start].endswith(repeat)
    return text[:cut].rstrip() if opens else text


def readable(text: str) -> str:
    """Model output in bounds: its last `MAX_ANSWER_CHARS` characters (from a whole word), lone
    surrogates as U+FFFD (no encoder writes one, so the run's record could not be saved), and a
    whitespace run over `MAX_SPACE_RUN` cut to its start and at most two line breaks: a pattern
    that may start anywhere in a run (`\\s*\\bnot`) costs time quadratic in its length."""
    if len(text) > MAX_ANSWER_CHARS:
        text = text[-MAX_ANSWER_CHARS:]
        first_space = _FIRST_SPACE.search(text)
        text = text[first_space.start() :] if first_space else text
    return _SPACE_RUN.sub(_shortened_space, without_lone_surrogates(text))


def _shortened_space(run: re.Match[str]) -> str:
    kept = run.group()[:MAX_SPACE_RUN]
    breaks = min(2, run.group().count("\n")) - kept.count("\n")
    return kept + "\n" * max(0, breaks)


def unclosed_think(text: str) -> bool:
    """Whether a think block opens and never closes: the response stopped while thinking."""
    tags = think_tags(text)
    return THINK_OPEN in tags and THINK_CLOSE not in tags


def json_answer(text: str) -> str | None:
    """The answer of a response written as JSON (`{"answer": "A"}`, also in a ```json fence);
    None when it is not such JSON."""
    match = _JSON_OBJECT.search(text)
    if match is None:
        return None
    try:
        value = json.loads(match.group())  # `{...}` parses as an object or not at all
    except (ValueError, RecursionError):  # also arrays nested thousands deep
        return None
    for key, answer in value.items():
        if str(key).strip().lower() in _JSON_ANSWER_KEYS and isinstance(answer, str | int | float):
            return str(answer)
    scalars = [v for v in value.values() if isinstance(v, str | int | float)]
    if len(value) == 1 and scalars:  # {"total_amount_due": "$1,245.00"}
        return str(scalars[0])
    return None


def clean_latex(text: str, keep_bold: bool = False) -> str:
    """Drops `\\text{}`-style wrappers, HTML layout tags, math `$...$`, `*` and backticks; a `$`
    before a number is a currency sign and stays (`$25.00` is DocVQA's answer as printed)."""
    text = _innermost_first(STYLE_MACRO, r"\1", without_html(text))
    text = _MATH_DOLLARS.sub(r"\1", text).replace("\\%", "%").replace("\\$", "$").replace("`", "")
    return (text if keep_bold else text.replace("*", "")).strip()


def without_html(text: str) -> str:
    """HTML around an answer as markdown: `<b>B</b>` is `**B**`, layout tags (`<p>`) go."""
    return _HTML_LAYOUT.sub("", _HTML_BOLD.sub("**", text))


def plain_math(text: str) -> str:
    """Inline LaTeX as the Unicode an option text is written in (`2\\sqrt{3}` is 2√3), so an
    answer in LaTeX names an option as one written in Unicode does."""
    text = _innermost_first(_LATEX_ROOT, lambda m: "√" + _bare(m.group(1)), text)
    for command, symbol in _LATEX_SYMBOLS.items():
        text = text.replace(command, symbol)
    return text


def _innermost_first(
    macro: re.Pattern[str], repl: str | Callable[[re.Match[str]], str], text: str
) -> str:
    """`text` with `macro` replaced one level of nesting a pass, at most `MAX_LATEX_DEPTH`."""
    for _ in range(MAX_LATEX_DEPTH):
        previous, text = text, macro.sub(repl, text)
        if text == previous:
            break
    return text


def _bare(inner: str) -> str:
    return inner if re.fullmatch(r"[\w.√π]+", inner) else f"({inner})"


def fold(text: str) -> str:
    """Unicode compatibility folding (fullwidth `Ｂ` as `B`, `−` as `-`), with a superscript
    read as the power it is (`10³` is `10^3`, not `103`) and a subscript after a number as its
    base, which is dropped (`101101₂` is `101101`, not `1011012`)."""
    text = _BASE.sub("", _SUPERSCRIPT.sub(lambda match: "^" + match.group(), text))
    return unicodedata.normalize("NFKC", text).translate(_MINUS_SIGNS)
