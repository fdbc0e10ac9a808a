"""Where the hooks' state documents live, computed with ``os`` alone.

The one owner of the state directory's location and of the file name of a session's
document: :mod:`ctxrelay.claude._state` (locked read-modify-write) builds on it, and the
hot hook paths (``PreToolUse`` on every tool call) read a document through it without
importing ``pathlib``, ``typing`` or ``hashlib``.
"""

from __future__ import annotations

import os

__all__ = ["safe_name", "session_doc_path", "state_root_str"]

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_MAX_NAME = 96


def state_root_str() -> str:
    """``$CTXRELAY_STATE_DIR``, else ``$XDG_STATE_HOME/ctxrelay/claude`` (absolute values
    only), else ``~/.local/state/ctxrelay/claude``."""
    explicit = os.environ.get("CTXRELAY_STATE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_STATE_HOME")
    base = (
        xdg
        if xdg and os.path.isabs(xdg)
        else os.path.join(os.path.expanduser("~"), ".local", "state")
    )
    return os.path.join(base, "ctxrelay", "claude")


def safe_name(name: str) -> str:
    """A file-name-safe form of ``name``; ids from payloads are never trusted as paths.

    Plain ids (UUIDs, agent ids) stay readable; anything else becomes a hash."""
    if 0 < len(name) <= _MAX_NAME and all(c in _SAFE for c in name) and not name.startswith("."):
        return name
    import hashlib

    return "h-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def session_doc_path(session_id: str, root: str | None = None) -> str:
    """The JSON document of one Claude Code session."""
    base = state_root_str() if root is None else root
    return os.path.join(base, "sessions", safe_name(session_id) + ".json")
