"""The Codex host builds on the Claude Code host's hook protocol, one way only:
``ctxrelay.codex`` imports ``ctxrelay.claude`` (payload types, the deny answer, the
guard's parser, the state directory), and nothing outside ``cli/`` imports
``ctxrelay.codex`` — least of all ``ctxrelay.claude``."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import PROJECT

PACKAGE = PROJECT / "src" / "ctxrelay"


def imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)  # import_module("..."), or any string argument
    return names


def _codex(names: set[str]) -> set[str]:
    return {n for n in names if n == "ctxrelay.codex" or n.startswith("ctxrelay.codex.")}


def test_nothing_but_the_cli_and_the_host_itself_imports_the_codex_host() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        top = path.relative_to(PACKAGE).parts[0]
        if top in ("codex", "cli"):
            continue
        found = _codex(imported(path))
        if found:
            offenders[str(path.relative_to(PACKAGE))] = sorted(found)
    assert offenders == {}


def test_the_codex_host_does_import_the_claude_hook_protocol() -> None:
    # The direction is real: without these imports the test above would pin nothing.
    names = set().union(*(imported(p) for p in (PACKAGE / "codex").rglob("*.py")))
    assert "ctxrelay.claude._events.pre_tool_use.deny" in names
    assert "ctxrelay.claude.guard.bash" in names or "ctxrelay.claude.guard.bash.classify" in names
