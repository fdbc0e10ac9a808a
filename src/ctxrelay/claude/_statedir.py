"""Paths in the hooks' state directory that the hot hook paths need, with ``os.path``
alone: importing :mod:`ctxrelay.claude._state` (pathlib, hashlib) would double the cost
of starting a hook that only needs to know a file's name. ``tests/claude/test_agents.py``
keeps :func:`state_dir` equal to :func:`ctxrelay.claude._state.state_root`.

Ids passed here are plain names (checked by
:func:`ctxrelay.transcripts.subagent_transcript` or by :func:`is_plain`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["cursor_path", "is_plain", "notice_possible", "pending_marker", "state_dir"]

_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def is_plain(name: object) -> bool:
    """A payload id that can be a file name as it is (UUIDs, agent ids)."""
    return isinstance(name, str) and 0 < len(name) <= 128 and all(c in _PLAIN for c in name)


def state_dir() -> str:
    root = os.environ.get("CTXRELAY_STATE_DIR")
    if root:
        return root
    xdg = os.environ.get("XDG_STATE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.expanduser("~/.local/state")
    return os.path.join(base, "ctxrelay", "claude")


def cursor_path(session_id: str, agent_id: str) -> str:
    """The transcript cursor of one subagent (see :mod:`ctxrelay.claude._agents`)."""
    return os.path.join(state_dir(), "agents", session_id, f"{agent_id}.json")


def pending_marker(session_id: str) -> str:
    """Exists while notices may be queued for the session's main thread, so the main
    thread's hooks can skip loading the notices machinery on every tool call."""
    return os.path.join(state_dir(), "agents", session_id, "notices.pending")


def notice_possible(payload: Mapping[str, Any]) -> bool:
    """Whether a main-thread hook may have a stopped-short notice to deliver: the payload
    reports an ended subagent, or one was queued. False lets the hook answer without
    loading :mod:`ctxrelay.claude._notices` (the common case: an ordinary tool call)."""
    if payload.get("tool_name") in ("Agent", "Task"):
        return True
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and "<task-notification>" in prompt:
        return True
    session_id = payload.get("session_id")
    return is_plain(session_id) and os.path.exists(pending_marker(str(session_id)))
