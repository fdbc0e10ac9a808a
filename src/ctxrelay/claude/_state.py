"""The Claude Code host's documents in the hooks' state (:mod:`ctxrelay.hooks.state`):
its sessions, the subagent transcript cursors and notices, and the window sizes the
statusline saw. They live in the ``claude/`` folder of the state root, keyed by Claude
Code's ``session_id`` (a UUID, unique across projects), so a ``cd`` mid-session (the
payload's ``cwd`` follows it) cannot split one session's state in two.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ctxrelay.hooks import state

if TYPE_CHECKING:
    from ctxrelay.hooks.job import HandoffJob

__all__ = [
    "HOST",
    "SessionDoc",
    "cursor_path",
    "handoff_job",
    "notice_possible",
    "pending_marker",
    "record_window",
    "recorded_window",
    "session_doc",
    "session_doc_path",
    "session_state",
    "set_handoff_job",
    "state_dir",
]

HOST = "claude"
"""The host's name in the state root and in handoff chain links."""


class SessionDoc(TypedDict, total=False):
    """The keys of a Claude Code session's document and what each holds. A document on
    disk may be damaged (any key of any type): readers still check what they read."""

    window: int
    """The window Claude Code reported to the statusline (:func:`record_window`)."""
    mode: str
    """The handoff mode the cached usable limit was computed under (``manual``, ``auto``,
    ``off``; :func:`ctxrelay.claude._limit.refresh`)."""
    usable_limit: int
    limit_env: str
    """The environment overrides the cache was made under."""
    limit_path: str
    """The handoff file the usable limit's deny names, reserved once per episode."""
    stop_quiet: dict[str, Any]
    """The last full ``Stop``'s stamp (:mod:`ctxrelay.claude._events._stamp`)."""
    handoff: dict[str, Any]
    """The session's handoff job (:meth:`ctxrelay.hooks.job.HandoffJob.to_json`; read
    with :func:`handoff_job`)."""
    once: list[str]
    """The hints given this episode (:func:`ctxrelay.hooks.state.claim`)."""
    episode: int
    """Episodes ended so far (each at a handoff written)."""
    injected: str
    """The handoff ``SessionStart`` injected, until the session has started from it."""
    offered: str
    """The handoff a start offered: this session's ``/clear`` takes it."""
    automod_told: bool
    """The user was told why the auto-handoff mod cannot clear here."""
    claude_pid: int
    """The Claude Code process that runs the session (``CLAUDE_PID`` at its last start)."""
    subagent_notices: list[dict[str, Any]]
    subagent_notified: list[str]


def session_doc(data: dict[str, Any]) -> SessionDoc:
    """A session document (as read, or inside an update) typed by its keys: the same
    object."""
    return cast("SessionDoc", data)


def handoff_job(data: Mapping[str, Any]) -> HandoffJob | None:
    """The session's handoff job, or ``None``. (Most sessions never had one: their hooks
    do not import :mod:`ctxrelay.hooks.job`, whose dataclass takes a while to make.)"""
    stored = data.get("handoff")
    if stored is None:
        return None
    from ctxrelay.hooks.job import HandoffJob

    return HandoffJob.from_json(stored)


def set_handoff_job(data: dict[str, Any], job: HandoffJob) -> None:
    """Store ``job`` as the session's handoff job (inside an update)."""
    session_doc(data)["handoff"] = job.to_json()


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
