"""Hook commands for the launcher, probe and upgrade tests, and running one as a host
does."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
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


def through_shell(
    command: str, payload: Mapping[str, object], cwd: Path, env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """``command`` as a host starts a hook: ``sh -c`` in ``cwd``, ``payload`` on stdin."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(env),
        timeout=60,
        check=False,
    )


def fake_cli(folder: Path, name: str, version_line: str) -> Path:
    """An executable ``name`` in ``folder`` that prints ``version_line``."""
    folder.mkdir(parents=True, exist_ok=True)
    cli = folder / name
    cli.write_text(f"#!/bin/sh\necho '{version_line}'\n")
    cli.chmod(0o755)
    return cli
