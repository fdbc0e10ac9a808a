"""The OpenCode host's name and its documents in the hooks' state
(:mod:`ctxrelay.hooks.state`, the ``opencode/`` folder of the state root)."""

from __future__ import annotations

from pathlib import Path

from ctxrelay.hooks import state
from ctxrelay.hooks.state import StateFile

__all__ = ["HOST", "forget_reads", "reads_dir", "session_state"]

HOST = "opencode"
"""The host's name in the state root and in handoff chain links."""


def session_state(session_id: str) -> StateFile:
    """The document of one OpenCode session (``session_id`` from the payload)."""
    return StateFile(Path(state.session_doc_path(HOST, session_id)))


def reads_dir(session_id: str) -> str | None:
    """The folder of one session's re-read records; ``None`` when the id is not plain."""
    return state.reads_dir(HOST, session_id)


def forget_reads(session_id: str) -> None:
    """The window ended (a compaction, or the work moved to a fresh session): what the
    session read is gone from its context, so its re-read records go."""
    state.forget_reads(HOST, session_id)
