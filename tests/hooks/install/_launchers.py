"""Hook commands for the launcher and probe tests."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

PYTHON = os.path.abspath(sys.executable)
SRC = str(Path(__file__).resolve().parents[3] / "src")


def without_parser(module: str) -> str:
    """A hook of ``module`` that cannot import tree-sitter: the previous version's start,
    ``python -I -S -c`` with ctxrelay's directory appended to ``sys.path``, which leaves
    ``site-packages`` out (and so the ``guard`` extra, wherever it is installed)."""
    code = f"import sys; sys.path.append({SRC!r}); from {module} import run; run()"
    return f"{shlex.quote(PYTHON)} -I -S -c {shlex.quote(code)}"
