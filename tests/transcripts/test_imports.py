"""The hook imports the reader on every subagent tool call: it brings no heavy package."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_reader_pulls_in_nothing_heavy() -> None:
    heavy = ["rich", "matplotlib", "sqlite3", "ctxrelay.analyze", "ctxrelay.store", "ctxrelay.cli"]
    code = f"import sys, ctxrelay.transcripts; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_only_the_reader_knows_the_transcript_line_format() -> None:
    # One reader per format: the words only a parser of Claude Code's JSONL needs appear
    # in no module outside ctxrelay.transcripts (the hooks and the analyzer call it).
    from pathlib import Path

    import ctxrelay

    package = Path(ctxrelay.__file__).parent
    markers: tuple[str, ...] = (
        "isSidechain",
        "compact_boundary",
        "<synthetic>",
        "lines_backwards(",
    )
    # and of Codex's rollouts
    markers += ("token_usage_record", "turn_context", "last_token_usage")
    found = [
        f"{path.relative_to(package)}: {marker}"
        for path in sorted(package.rglob("*.py"))
        if path.parent.name != "transcripts"
        for marker in markers
        if marker in path.read_text(encoding="utf-8")
    ]
    assert found == []


def test_the_type_checkers_names_are_the_lazy_table() -> None:
    # The package's one lazy loader: its names are written in its table, and once more
    # for type checkers; the two lists are the same, name for name and module for module.
    import ast
    from pathlib import Path

    import ctxrelay.transcripts as package

    tree = ast.parse(Path(package.__file__).read_text())
    guarded = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
        if node.test.id == "TYPE_CHECKING"
    )
    typed = {
        alias.name: str(node.module).rsplit(".", 1)[1]
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert typed == package._HOME
    assert sorted(typed) == package.__all__
