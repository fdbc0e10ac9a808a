"""Where OpenCode is: the one lookup install, doctor and the tests use (the core's
:func:`ctxrelay.hooks.install.binary.cli_path`, for ``opencode``).

Not on the hook path. ``make setup`` installs the pinned CLI
(``scripts/opencode/package.json``) with npm into the environment,
``<prefix>/opencode``; the user's own ``opencode`` on ``PATH`` comes first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ctxrelay.hooks.install import binary

__all__ = ["cli_path", "pinned_path"]


def pinned_path() -> Path | None:
    """The CLI ``make setup`` installed into this environment, or ``None``."""
    candidate = Path(sys.prefix) / "opencode" / "node_modules" / ".bin" / "opencode"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    return None


def cli_path(*, pinned: bool = False) -> Path | None:
    """OpenCode: ``opencode`` on ``PATH`` (what the user runs), else the one installed
    into this environment; ``None`` when there is neither. ``pinned=True`` skips
    ``PATH``: the pinned version is what the tests and ``docs/opencode-facts.md`` were
    checked against."""
    return binary.cli_path("opencode", pinned_path, skip_path=pinned)
