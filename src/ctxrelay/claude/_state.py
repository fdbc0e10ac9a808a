"""The Claude Code host's documents in the hooks' state (:mod:`ctxrelay.hooks.state`):
its sessions, the subagent transcript cursors and notices, and the window sizes the
statusline saw. They live in the ``claude/`` folder of the state root, keyed by Claude
Code's ``session_id`` (a UUID, unique across projects), so a ``cd`` mid-session (the
payload's ``cwd`` follows it) cannot split one session's state in two.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ctxrelay.hooks import state

__all__ = [
    "HOST",
    "cursor_path",
    "notice_possible",
    "pending_marker",
    "record_window",
    "recorded_window",
    "session_doc_path",
    "session_state",
    "state_dir",
]

HOST = "claude"
"""The host's name in the state root and in handoff chain links."""


def state_dir() -> str:
    """The folder of the Claude Code host's documents."""
    return state.host_dir(HOST)


def session_state(session_id: str) -> state.StateFile:
    """The document of one Claude Code session (``session_id`` from the payload)."""
    return state.session_state(HOST, session_id)


def cursor_path(session_id: str, agent_id: str) -> str:
    """The transcript cursor of one subagent (see :func:`ctxrelay.transcripts.read_agent`);
    both ids are plain names (checked by :func:`ctxrelay.transcripts.subagent_transcript`
    or :func:`ctxrelay.hooks.state.is_plain`)."""
    return os.path.join(state_dir(), "agents", session_id, f"{agent_id}.json")


def pending_marker(session_id: str) -> str:
    """Exists while notices may be queued for the session's main thread, so the main
    thread's hooks can skip reading the notices on every tool call."""
    return os.path.join(state_dir(), "agents", session_id, "notices.pending")


def notice_possible(payload: Mapping[str, Any]) -> bool:
    """Whether a main-thread hook may have a stopped-short notice to deliver: the payload
    reports an ended subagent, or one was queued (the common case, an ordinary tool
    call, is neither)."""
    if payload.get("tool_name") in ("Agent", "Task"):
        return True
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and "<task-notification>" in prompt:
        return True
    session_id = payload.get("session_id")
    return state.is_plain(session_id) and os.path.exists(pending_marker(str(session_id)))


def record_window(session_id: str | None, model: str | None, window: int) -> None:
    """Remember the window size Claude Code reported to the statusline, for the session
    and for its model id (a fresh session may stop before its first statusline run).

    Writes only when the value changed: the statusline runs every few seconds."""
    if window <= 0:
        return
    if session_id:
        doc = session_state(session_id)
        if doc.get("window") != window:
            doc.set("window", window)
    if model:
        windows = state.shared_state(HOST, "windows")
        current = windows.get("models", {})
        if not isinstance(current, dict) or current.get(model) != window:

            def change(data: dict[str, Any]) -> None:
                models = data.get("models")
                if not isinstance(models, dict):
                    models = {}
                models[model] = window
                data["models"] = models

            windows.update(change)


def recorded_window(session_id: str | None, model: str | None) -> int | None:
    """The window size the statusline recorded for this session, else for this model."""
    if session_id:
        value = session_state(session_id).get("window")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    if model:
        models = state.shared_state(HOST, "windows").get("models", {})
        value = models.get(model) if isinstance(models, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def session_doc_path(session_id: str) -> str:
    """The path of one Claude Code session's document (read with
    :func:`ctxrelay.hooks.state.read_document`, no lock)."""
    return state.session_doc_path(HOST, session_id)
