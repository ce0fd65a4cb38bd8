"""Text in the forms the package compares and writes it.

`comparable` is text as the guards compare it: a fullwidth `＼ｂｏｘｅｄ｛１｝`, a mathematical-bold
`𝐛𝐨𝐱𝐞𝐝` or a `\\box<U+200B>ed{1}` reads as the same verdict to a model and a person, but not
to a regular expression.

A Python string may also carry a lone surrogate (U+D800-U+DFFF) where it came from JSON that
escapes one (`"\\ud800"`, which `json.loads` accepts) or from a server's reply. UTF-8 cannot
encode it, so writing such a string raises mid-run. Records are written so that they keep the
text exactly (`json_text`); model output, which no reader needs byte-exact, reads the way a
tokenizer decodes broken bytes (`without_lone_surrogates`).
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from functools import cache
from typing import Any

# Invisible code points that are not format characters (Cf) but that Unicode also lists as
# default-ignorable (DerivedCoreProperties.txt): the combining grapheme joiner, Hangul fillers,
# Khmer inherent vowels, Mongolian and general variation selectors.
_IGNORABLE_MARKS = (
    "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u3164\ufe00-\ufe0f\uffa0"
    "\U000e0100-\U000e01ef"
)


def comparable(text: str) -> str:
    """`text` as the guards compare it: NFKC-normalised (fullwidth, mathematical and other
    compatibility forms become their plain letters, digits, braces and backslash) with invisible
    characters removed (format characters such as U+200B, U+2060, U+FEFF, soft hyphens and
    bidirectional controls, and the other default-ignorable code points), so that no form a
    reader sees as a verdict or a special token escapes the check. ASCII text is returned as is:
    NFKC leaves it unchanged and it holds no invisible character."""
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFKC", text):  # the check is ~100x cheaper than a pass
        text = unicodedata.normalize("NFKC", text)
    return _invisible().sub("", text)


@cache
def _invisible() -> re.Pattern:
    """The invisible characters `comparable` removes, read from this Python's Unicode database
    once per process (a scan of every code point, kept out of import time). The format
    characters go in as ranges: a class listing each one is ten times slower to search."""
    ranges: list[list[int]] = []
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)) == "Cf":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    formats = "".join(f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high in ranges)
    return re.compile(f"[{formats}{_IGNORABLE_MARKS}]")


def json_text(value: Any) -> str:
    """`value` as one line of JSON that encodes as UTF-8: non-ASCII characters as written, or
    every one of them escaped when the value holds a lone surrogate, so the line reads back
    exactly as the value was."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, default=str)
    return text


def without_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD and each surrogate pair as the character it
    encodes: what a tokenizer's decoding gives for bytes that are no character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
