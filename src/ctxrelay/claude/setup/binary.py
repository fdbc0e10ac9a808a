"""Where the Claude Code CLI is: the one lookup the doctor, the driver and the tests use
(the core's, :func:`ctxrelay.hooks.install.binary.cli_path`, for ``claude``).

Not on the hook path (nothing a hook imports reaches it). Besides ``PATH``, it finds the
CLI that ``claude-agent-sdk`` bundles through the package's import spec, without
importing the SDK (which is slow to import), and never by a fixed path.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ctxrelay.hooks.install import binary

__all__ = ["cli_path"]


def _bundled() -> Path | None:
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "_bundled" / "claude"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def cli_path(*, bundled: bool = False) -> Path | None:
    """The Claude Code CLI: ``claude`` on ``PATH`` (what the user runs), else the CLI
    bundled in ``claude-agent-sdk``; ``None`` when there is neither.

    ``bundled=True`` skips ``PATH``: the bundled CLI is the version ``claude-agent-sdk``
    was released with, which is what the driver's SDK and the end-to-end tests expect.
    """
    return binary.cli_path("claude", _bundled, skip_path=bundled)
