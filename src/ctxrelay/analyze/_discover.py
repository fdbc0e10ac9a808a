"""Where ``ctxrelay analyze`` finds sessions: transcript files and their subagents, and
Codex rollouts (each its own session: a Codex subagent writes a rollout of its own).

Every entry named ``*.jsonl`` is listed, regular file or not (a FIFO, a socket, a broken
or looping symlink, a symlink to a folder): the reader skips what it cannot read with a
warning that says why, instead of passing it over unseen. Real folders are searched.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxrelay.errors import ConfigError
from ctxrelay.transcripts._opencode_paths import DATABASE_NAME, is_database

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "agent_files",
    "default_codex_sessions_dir",
    "default_projects_dir",
    "discover",
    "files_of",
    "session_files",
]


def default_projects_dir() -> str:
    """Where Claude Code keeps its transcripts: ``$CLAUDE_CONFIG_DIR/projects`` or
    ``~/.claude/projects``."""
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    root = (
        os.path.expanduser(config) if config else os.path.join(os.path.expanduser("~"), ".claude")
    )
    return os.path.join(root, "projects")


def default_codex_sessions_dir() -> str:
    """Where the Codex CLI keeps its rollouts: ``$CODEX_HOME/sessions`` or
    ``~/.codex/sessions``."""
    home = os.environ.get("CODEX_HOME")
    root = os.path.expanduser(home) if home else os.path.join(os.path.expanduser("~"), ".codex")
    return os.path.join(root, "sessions")


def _is_agent_file(path: str) -> bool:
    parent, name = os.path.split(path)
    return os.path.basename(parent) == "subagents" and name.startswith("agent-")


def _path_order(path: str) -> list[str]:
    return path.split(os.sep)  # as pathlib sorts: part by part


def _is_folder(path: str) -> bool:
    """A real folder (a symlink to one is listed as an entry, not searched)."""
    return os.path.isdir(path) and not os.path.islink(path)


def _jsonl_under(root: str) -> list[str]:
    """Every entry named ``*.jsonl`` (or ``opencode.db``, OpenCode's database) under
    ``root`` but real folders (symlinked folders are not followed, as ``Path.rglob``),
    sorted as paths."""
    found = [
        os.path.join(folder, name)
        for folder, dirs, names in os.walk(root)
        for name in (*names, *dirs)
        if name.endswith(".jsonl") or name == DATABASE_NAME
    ]
    return sorted((p for p in found if not _is_folder(p)), key=_path_order)


def discover(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Session transcripts under ``paths`` (files or directories, searched recursively),
    sorted, without the subagent files (they are read with their session). A session
    folder whose ``subagents/`` has no session file beside it is listed as the folder
    itself (an orphan: its agents are read as their own row)."""
    found: dict[str, None] = {}
    for raw in paths:
        path = os.path.expanduser(os.fspath(raw))
        if os.path.isfile(path):
            found[path] = None
        elif os.path.isdir(path):
            for candidate in _jsonl_under(path):
                if not _is_agent_file(candidate):
                    found[candidate] = None
                    continue
                folder = os.path.dirname(os.path.dirname(candidate))
                if not os.path.lexists(f"{folder}.jsonl"):
                    found[folder] = None
        elif os.path.exists(path):
            raise ConfigError(f"{os.fspath(raw)!r} is not a regular file or a directory")
        else:
            raise ConfigError(f"no transcript or directory at {os.fspath(raw)!r}")
    return list(found)


def agent_files(session: str) -> list[str]:
    """``<dir>/<session>/subagents/agent-*.jsonl`` of a session file (or of an orphan
    session folder)."""
    base = session if os.path.isdir(session) else os.path.splitext(session)[0]
    folder = os.path.join(base, "subagents")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    files = (
        os.path.join(folder, n) for n in names if n.startswith("agent-") and n.endswith(".jsonl")
    )
    return sorted((f for f in files if not _is_folder(f)), key=_path_order)


def session_files(session: str) -> list[tuple[str, bool]]:
    """A session's files to read: its session file (none for an orphan folder) and its
    agent files, with whether each is an agent's own file."""
    own = [] if _is_folder(session) else [(session, False)]
    return own + [(f, True) for f in agent_files(session)]


def files_of(sessions: Sequence[str]) -> list[tuple[str, bool]]:
    """Every file to read of ``sessions`` (:func:`session_files`). An OpenCode database
    is read apart (:func:`~ctxrelay.transcripts.read_opencode`), not here."""
    return [f for s in sessions if not is_database(s) for f in session_files(s)]
