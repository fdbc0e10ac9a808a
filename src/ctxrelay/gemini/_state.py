"""The Gemini host's name, its documents in the hooks' state (:mod:`ctxrelay.hooks.state`,
the ``gemini/`` folder of the state root), and where the Gemini CLI keeps its own files."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ctxrelay.hooks import state
from ctxrelay.hooks.state import StateFile

__all__ = ["HOST", "forget_reads", "gemini_dir", "reads_dir", "session_state"]

HOST = "gemini"
"""The host's name in the state root and in handoff chain links."""


def gemini_dir(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's user folder: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini`` (the CLI
    takes ``GEMINI_CLI_HOME`` as its home directory)."""
    home = (os.environ if env is None else env).get("GEMINI_CLI_HOME")
    return (Path(home) if home else Path.home()) / ".gemini"


def session_state(session_id: str) -> StateFile:
    """The document of one Gemini session (``session_id`` from the payload)."""
    return StateFile(Path(state.session_doc_path(HOST, session_id)))


def reads_dir(session_id: str) -> str | None:
    """The folder of one session's re-read records; ``None`` when the id is not plain."""
    return state.reads_dir(HOST, session_id)


def forget_reads(session_id: str) -> None:
    """The window ended (a clear): what the session read is gone from its context, so
    its re-read records go (here, not in the guard: the handoff's clear needs no guard)."""
    state.forget_reads(HOST, session_id)
