"""What the main session's window and mode were computed from, so the hooks that run
once per turn (``Stop``) and once per session (``SessionStart``) can tell cheaply that
nothing changed since they last computed them, and answer without loading the config,
the window rules and the policy core.

A stamp holds the inputs as they were: the environment variables the config and its
files' places depend on, the payload's ``cwd``, and the stats (inode, size, modification
and change times) of the files the values were read from (the project's and the user's
config, the windows the statusline recorded). It holds while all of them are unchanged;
any difference, or a stamp that is missing or malformed, means the full path runs again
and writes a new one. ``os`` and the override names of :mod:`ctxrelay.claude._limit`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxrelay.claude._limit import _ENV_KEYS

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["holds", "inputs", "stamp"]

_ENV = (
    *_ENV_KEYS,  # the config's environment overrides (config.ENV_*, pinned by a test)
    "CLAUDE_PROJECT_DIR",  # where the project's config file is
    "XDG_CONFIG_HOME",  # where the user's is
    "HOME",
)


def _file_stats(files: list[str]) -> list[list[int] | None]:
    stats: list[list[int] | None] = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            stats.append(None)
        else:
            stats.append([st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return stats


def inputs(cwd: object, files: list[str]) -> list[object]:
    """The inputs as of now, in a JSON-comparable form."""
    env = [os.environ.get(key) for key in _ENV]
    return [env, cwd if isinstance(cwd, str) else None, _file_stats(files)]


def stamp(cwd: object, project: Path, **values: object) -> dict[str, object]:
    """A new stamp for ``project`` (the full path only: it asks the config where its
    files are) carrying ``values`` (what was computed from the inputs)."""
    from ctxrelay.claude._state import HOST
    from ctxrelay.hooks.config import config_path
    from ctxrelay.hooks.state import shared_state

    files = [
        str(config_path("project", project)),
        str(config_path("user")),
        str(shared_state(HOST, "windows").path),
    ]
    return {"files": files, "inputs": inputs(cwd, files), **values}


def holds(found: object, cwd: object) -> bool:
    """Whether the stamp ``found`` (read from a state document) still holds."""
    if not isinstance(found, dict):
        return False
    files = found.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return False
    return bool(found.get("inputs") == inputs(cwd, files))
