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
    markers = ("isSidechain", "compact_boundary", "<synthetic>", "lines_backwards(")
    found = [
        f"{path.relative_to(package)}: {marker}"
        for path in sorted(package.rglob("*.py"))
        if path.parent.name != "transcripts"
        for marker in markers
        if marker in path.read_text(encoding="utf-8")
    ]
    assert found == []
