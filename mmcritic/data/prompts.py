"""Prompt templates for critic and policy tasks.

Templates live as text files in `mmcritic/data/templates/` so a prompt change shows up as a
one-file diff and is caught by the snapshot tests. Placeholders are `{name}`; only the known names
are substituted, so LaTeX such as `\\boxed{}` in a user template needs no escaping.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

TEMPLATE_FIELDS: dict[str, tuple[str, ...]] = {
    "pairwise": ("question", "response_1", "response_2"),
    "pointwise": ("question", "response"),
    "verifiable": ("question",),
    "critique": ("question", "response"),
    "refine": ("question", "answer", "critique"),
}
TIE_CLAUSE = " If both responses are equally good, put the word tie in the box instead."


def reasoned_answer(reasoning: str, answer: str) -> str:
    """An answer in the form the prompts ask for: reasoning in a think block, then the answer
    boxed (what SFT imitates, and how the synthetic policy answers read)."""
    return f"<think>{reasoning.strip()}</think>\n\\boxed{{{answer}}}"


@cache
def builtin_template(name: str) -> str:
    """The text of a template shipped with mmcritic (`pairwise`, `pointwise`, `verifiable`,
    `critique`, `refine`)."""
    path = resources.files("mmcritic.data") / "templates" / f"{name}.txt"
    if not path.is_file():
        known = sorted(p.name.removesuffix(".txt") for p in path.parent.iterdir())
        raise ValueError(f"unknown template {name!r}; built-in templates: {known}")
    return path.read_text(encoding="utf-8").strip()


def builtin_template_names() -> list[str]:
    """The names of the templates shipped with mmcritic."""
    folder = resources.files("mmcritic.data") / "templates"
    return sorted(
        path.name.removesuffix(".txt") for path in folder.iterdir() if path.name.endswith(".txt")
    )


def think_boxed_suffix() -> str:
    """The instruction LLaVA-Critic-R1 appends to every prompt in training and evaluation."""
    return builtin_template("think_boxed_suffix")


def load_template(spec: str | None, kind: str) -> str:
    """A template from a built-in name or a file path; None means the kind's built-in one.

    The template must hold every placeholder its kind fills, so a typo in a user template fails
    before any record is converted instead of producing prompts without the responses.
    """
    if spec is None:
        text = builtin_template(kind)
    elif Path(spec).is_file():
        text = Path(spec).read_text(encoding="utf-8").strip()
    else:
        text = builtin_template(spec)
    missing = [name for name in TEMPLATE_FIELDS[kind] if "{" + name + "}" not in text]
    if missing:
        raise ValueError(
            f"template {spec or kind!r} lacks placeholders {missing} needed for {kind} records"
        )
    return text


def render(template: str, think_suffix: bool = True, **fields: Any) -> str:
    """Fills `{name}` placeholders and appends the think/boxed instruction when asked."""
    text = template
    for name, value in fields.items():
        text = text.replace("{" + name + "}", str(value))
    if think_suffix:
        text = f"{text}\n\n{think_boxed_suffix()}"
    return text


def media_word(n_images: int, n_videos: int) -> str:
    """How the prompt names what the model sees, so a video task does not speak of an image."""
    if n_videos and not n_images:
        return "video" if n_videos == 1 else "videos"
    if n_images and not n_videos:
        return "image" if n_images == 1 else "images"
    return "images and videos" if n_images else "input"


def user_message(text: str, n_images: int = 0, n_videos: int = 0) -> list[dict[str, Any]]:
    """A one-turn conversational prompt: media placeholders first, then the text (Qwen's order)."""
    content: list[dict[str, Any]] = [{"type": "image"} for _ in range(n_images)]
    content += [{"type": "video"} for _ in range(n_videos)]
    content.append({"type": "text", "text": text})
    return [{"role": "user", "content": content}]
