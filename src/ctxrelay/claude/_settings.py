"""A value of Claude Code's own settings files, found as Claude Code finds it, for the
hooks that must know what Claude Code will do (the Bash output cap of the guard).

Seen on 2.1.332 (``docs/claude-code-facts.md``, settings layers): the project's
``.claude/settings.local.json`` wins over its ``.claude/settings.json``, which wins over
the user's ``settings.json`` in ``$CLAUDE_CONFIG_DIR`` (``~/.claude`` when unset). A value
Claude Code's schema refuses in one file (a string, a fraction, zero) is dropped there and
the next layer's applies. Managed settings and ``--settings`` files are not read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from ctxrelay.hooks.state import read_document

__all__ = ["layers", "setting"]

_T = TypeVar("_T")


def layers(project: Path, home: Path, env: Mapping[str, str] = os.environ) -> tuple[Path, ...]:
    """Claude Code's settings files for ``project``, the one that wins first."""
    config = env.get("CLAUDE_CONFIG_DIR", "").strip()
    user = Path(config) if config else home / ".claude"
    return (
        project / ".claude" / "settings.local.json",
        project / ".claude" / "settings.json",
        user / "settings.json",
    )


def setting(
    key: str,
    valid: Callable[[object], _T | None],
    project: Path,
    home: Path,
    env: Mapping[str, str] = os.environ,
) -> _T | None:
    """``key``'s value in the first layer where ``valid`` takes it (``None`` refuses);
    ``None`` when no layer sets it. An unreadable file is a layer that sets nothing."""
    for path in layers(project, home, env):
        value = read_document(str(path)).get(key)
        taken = None if value is None else valid(value)
        if taken is not None:
            return taken
    return None
