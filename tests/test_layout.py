"""The library's shape: it holds only the pipeline, and its layers import downwards."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]
LIBRARY = ROOT / "mmcritic"
# Lower layers first; a module may import its own layer and those below it.
LAYERS = ["rewards", "data", "models", "inference", "train", "eval", "demo"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_library_never_imports_the_development_tooling():
    offenders = [
        str(path.relative_to(ROOT))
        for path in LIBRARY.rglob("*.py")
        if any(name.split(".")[0] == "mmcritic_dev" for name in _imports(path))
    ]
    assert offenders == []


def test_no_layer_imports_a_layer_above_it():
    upward = []
    for path in LIBRARY.rglob("*.py"):
        layer = path.relative_to(LIBRARY).parts[0]
        if layer not in LAYERS:
            continue
        for name in _imports(path):
            parts = name.split(".")
            target = parts[1] if parts[0] == "mmcritic" and len(parts) > 1 else None
            if target in LAYERS and LAYERS.index(target) > LAYERS.index(layer):
                upward.append(f"{path.relative_to(ROOT)} imports {name}")
    assert upward == []
