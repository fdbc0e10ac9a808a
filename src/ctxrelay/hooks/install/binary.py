"""Where a host's CLI is, and which version it is: the one lookup every host's install,
doctor and tests use (a host names its command and where else to look: the CLI a Python
package bundles, the one ``make setup`` pinned). Never by a fixed path.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

__all__ = ["cli_path", "cli_version"]

_VERSION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)+)")


def cli_path(
    name: str, elsewhere: Callable[[], Path | None], *, skip_path: bool = False
) -> Path | None:
    """The CLI ``name`` on ``PATH`` (what the user runs), else ``elsewhere()``; ``None``
    when there is neither. ``skip_path`` asks for ``elsewhere()`` only (the version the
    end-to-end tests and the facts pages were checked against)."""
    if not skip_path:
        found = shutil.which(name)
        if found:
            return Path(found)
    return elsewhere()


def cli_version(cli: Path) -> str | None:
    """The version number ``cli --version`` prints (``2.1.287 (Claude Code)``,
    ``codex-cli 0.171.0``); ``None`` when it does not run or names none."""
    try:
        done = subprocess.run(
            [str(cli), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout) if done.returncode == 0 else None
    return match.group(1) if match else None
