"""The integrations stay readable (issue 34): no module over 800 lines, no class that keeps
more than 20 instance attributes (the names its methods assign on ``self``)."""

from __future__ import annotations

import ast
from pathlib import Path

import ctxrelay.integrations

PACKAGE = Path(ctxrelay.integrations.__file__).parent
MAX_LINES = 800
MAX_ATTRIBUTES = 20


def _attributes(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for t in ast.walk(target):
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                ):
                    names.add(t.attr)
    return names


def test_no_module_over_800_lines() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.glob("*.py")}
    assert sizes, PACKAGE
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_no_class_keeps_more_than_20_instance_attributes() -> None:
    counts: dict[str, int] = {}
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                counts[f"{path.name}:{node.name}"] = len(_attributes(node))
    assert "_run.py:Run" in counts
    assert {name: n for name, n in counts.items() if n > MAX_ATTRIBUTES} == {}
