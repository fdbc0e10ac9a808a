"""The hook imports the reader on every subagent tool call: it must stay light."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_reader_pulls_in_nothing_heavy() -> None:
    heavy = ["rich", "pathlib", "matplotlib", "ctxrelay.analyze", "ctxrelay.pricing", "tomllib"]
    code = f"import sys, ctxrelay.transcripts; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
