"""The Codex host's documents in the hooks' state (:mod:`ctxrelay.hooks.state`): one per
thread (the handoff it was asked for and injected with) and the re-read records, in the
``codex/`` folder of the state root. The previous layout kept them in the Claude Code
host's folder (``claude/codex-sessions``, ``claude/codex-reads``); a thread's documents
are moved once, the first time they are asked for.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxrelay.hooks import state
from ctxrelay.hooks.state import StateFile, adopt, safe_name

__all__ = ["HOST", "reads_dir", "session_state"]

HOST = "codex"
"""The host's name in the state root and in handoff chain links."""


def _legacy(folder: str, name: str) -> str:
    return os.path.join(state.state_root(), "claude", f"codex-{folder}", name)


def session_state(session_id: str) -> StateFile:
    """The document of one Codex thread (``session_id`` from the payload)."""
    path = state.session_doc_path(HOST, session_id)
    name = f"{safe_name(session_id)}.json"
    return StateFile(Path(adopt(path, _legacy("sessions", name))))


def reads_dir(session_id: str) -> str | None:
    """The folder of one thread's re-read records (one per agent); ``None`` when the id
    is not a plain name."""
    path = state.reads_dir(HOST, session_id)
    return None if path is None else adopt(path, _legacy("reads", session_id))
