"""Hook commands for the launcher, probe and upgrade tests."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

PYTHON = os.path.abspath(sys.executable)
SRC = str(Path(__file__).resolve().parents[3] / "src")


def older_layout(module: str, root: str = SRC) -> str:
    """A hook of ``module`` as the older layout wrote it: ``python -I -S -c`` with the
    directory ctxrelay is imported from (``root``) appended to ``sys.path``, which leaves
    ``site-packages`` out (and so the ``guard`` extra, wherever it is installed)."""
    literal = repr(root) if set(root) & {'"', "'", "\\"} else f'"{root}"'
    code = f"import sys; sys.path.append({literal}); from {module} import run; run()"
    return f"{shlex.quote(PYTHON)} -I -S -c {shlex.quote(code)}"


def without_parser(module: str) -> str:
    """A hook of ``module`` that cannot import tree-sitter: the older layout's start
    with this clone's ``src`` on ``sys.path`` (:func:`older_layout`)."""
    return older_layout(module)
